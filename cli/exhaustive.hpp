// `seqpack exhaustive`: every case of a scope in process: the property
// catalogue on the reference, and each engine (the GPU implementation's CPP
// and OMP builds, the LibTorch binding) against the reference on every view;
// `--list`, the scopes and their sizes. LibTorch costs a program about a
// second of start-up, so `seqpack` does not link it: where the build has the
// binding, `seqpack exhaustive` hands the run to its helper,
// seqpack-exhaustive-torch (the same code with the binding linked in), and
// the whole run stays one process.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "seqpack/attention/audit.hpp"

namespace CLI {
class App;
}

namespace seqpack::cli {

struct ExhaustiveCli {
  std::string scope = "tiny";
  std::string shard;                 ///< "I/N", or empty
  std::string limit = "0";           ///< the shard's first cases only (0: all), as typed
  std::vector<std::string> engines;  ///< reference, gpu-cpp, gpu-omp, torch (empty: every one this build has)
  bool list = false;
  int jobs = 1;
};

/// A count as typed: decimal digits that fit int64, or nullopt.
std::optional<std::int64_t> parse_count(const std::string& text);

/// Where an option given on the command line has an empty value ("--shard
/// ''"), its error message ("--shard: expected a value, got an empty
/// one"), or "". CLI11 takes an empty value as no value.
std::string empty_option(const CLI::App& app, const std::vector<std::string>& options);

/// The options of `seqpack exhaustive` on `app` (the subcommand, or the helper's own).
void add_exhaustive_options(CLI::App& app, ExhaustiveCli& options);

/// The valid cases of a scope as the audit's cases (`seqpack audit --scope
/// S`: the findings map of reference/README.md); throws
/// std::invalid_argument naming an unknown scope.
std::vector<attention::AuditCase> audit_cases_of(const std::string& scope);

/// Runs it (`self`: this executable, to find the LibTorch helper beside it or
/// in the install's libexec); 0 when every check holds, 1 on a failure, 2 on
/// bad options.
int run_exhaustive_cli(const ExhaustiveCli& options, const std::string& self, std::ostream& out, std::ostream& err);

}  // namespace seqpack::cli
