// `seqpack exhaustive`: every case of a scope (seqpack/properties/exhaustive.hpp)
// in process, through the property catalogue on the reference and through
// each engine given (an implementation of the protocol, compared view for
// view with the reference's answer as `seqpack conform` compares a port's),
// each difference judged under every consumer profile.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "seqpack/attention/consumer.hpp"
#include "seqpack/properties/exhaustive.hpp"
#include "seqpack/protocol/protocol.hpp"

namespace seqpack::conformance {

struct ExhaustiveOptions {
  properties::Scope scope;
  std::int64_t shard_index = 0, shard_count = 1;  ///< cases i with i % count == index
  /// Stop after the first this many cases of the shard (0: every case).
  std::int64_t limit = 0;
  bool catalogue = true;  ///< run the property catalogue on the reference
  std::vector<const protocol::Implementation*> engines;
  /// The profiles every engine difference is judged under.
  std::vector<attention::ConsumerOptions> consumers;
  int threads = 1;
};

/// One check that failed: a property of the catalogue, or an engine's
/// difference (grouped by engine and the first differing field).
struct ExhaustiveFailure {
  std::string check;
  std::int64_t cases = 0;
  std::int64_t first = -1;  ///< index of the smallest case (the first in order)
  protocol::Case smallest;
  std::string message;                  ///< on the smallest case
  std::vector<std::string> severities;  ///< per consumer profile (engine differences)
};

struct ExhaustiveResult {
  std::int64_t scope_cases = 0, layouts = 0, packer_layouts = 0, crossings = 0;  ///< the scope's, as enumerated
  std::int64_t cases = 0;                                                        ///< run (the shard's, up to the limit)
  std::map<std::string, std::int64_t> classes;                                   ///< "valid" or error class -> cases
  std::vector<ExhaustiveFailure> failures;                                       ///< by smallest case
  double seconds = 0;
};

ExhaustiveResult run_exhaustive(const ExhaustiveOptions& options);

/// The result as text: the counts per class, each failing check with its
/// smallest case (a case line that `seqpack replay` and `property_replay`
/// read), and the verdict.
void print_exhaustive(const ExhaustiveOptions& options, const ExhaustiveResult& result, std::ostream& out);

}  // namespace seqpack::conformance
