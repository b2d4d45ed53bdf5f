// `seqpack check`: the main job. The reference over the worked examples of
// NOTES.md, printed readably, each with its self-checks; then the conformance
// of every port the build or install has (cli/paths.hpp finds them).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace seqpack::cli {

struct CheckOptions {
  std::string only;           ///< one worked example and nothing else
  std::string self;           ///< this executable, to start `seqpack oracle` as a port
  std::int64_t cases = 2000;  ///< random conformance cases per port and profile
  double time_s = 0;          ///< or this many seconds per port and profile
  std::uint64_t seed = 1;
};

/// Runs the worked examples, printing each pack and its self-checks, then the
/// conformance of every port the build has. Returns the number of failures.
int run_check(std::ostream& out, const CheckOptions& options);

}  // namespace seqpack::cli
