// `seqpack conform`: random and golden cases against a port, with diffs,
// shrinking, saved failures and known-failure lists.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "seqpack/attention/consumer.hpp"
#include "seqpack/protocol/case.hpp"

namespace seqpack::conformance {

struct ConformOptions {
  std::string port;  ///< command line of the port
  /// The profiles whose random cases run, in order (default: both, so that
  /// one run convicts what either profile would).
  std::vector<protocol::Profile> profiles = {protocol::Profile::packer, protocol::Profile::strict};
  std::int64_t cases = 1000;  ///< random cases per profile (0: vectors only, or --time)
  double time_s = 0;          ///< stop each profile's random cases after this long (0: no limit)
  std::uint64_t seed = 1;
  std::string vectors_dir;     ///< replay *.jsonl golden vectors first
  std::string known_failures;  ///< file of expected-to-fail categories / vector ids
  std::string save_failures;   ///< directory for minimal failing case files
  std::string report;          ///< JSON summary file
  double timeout_s = 10;       ///< per answer
  bool progress = false;       ///< progress line on stderr
  int shrink_budget = 400;     ///< port calls spent shrinking each failure
  bool offer_runs = true;      ///< offer the runs encoding at hello
  bool consequences = true;    ///< judge each group's packs against a consumer (protocol/consequence.hpp)
  /// The consumer the consequences are judged against (--consumer, --kernel).
  attention::ConsumerOptions consumer;
  /// Stop the run once this many distinct failure groups (signatures) are
  /// seen (0: no limit); `--fail-fast` is 1.
  std::int64_t max_failures = 0;
  /// Stop the run once the port crashed or hung on this many cases (0: no
  /// limit), counted in batch order; each such case waited the timeout or
  /// restarted the port. A port that hangs on a few cases still gets every
  /// other case checked; one that hangs on many (answering its probes, so
  /// the circuit breaker holds) is stopped with one verdict.
  std::int64_t max_hangs = 10;
  std::string junit;  ///< JUnit XML report file
  /// Run only the random cases whose index i has i % shard_count ==
  /// shard_index (and the vectors likewise), for N-way CI matrices.
  std::int64_t shard_index = 0, shard_count = 1;
  /// A scope of seqpack/properties/exhaustive.hpp: its every case, in order
  /// of size, instead of the random cases (ids "x<scope>-<index>").
  std::string exhaustive;
  /// Seconds between progress lines when stderr is not a terminal (0: none).
  double progress_every_s = 0;
  /// Features that must be checked (`option:NAME`, `view:NAME`): one the
  /// port does not declare fails the run (exit 1), as a CI that wants the
  /// full API asks.
  std::vector<std::string> require_features;
  /// Port processes that answer side by side, each a batch of cases at a
  /// time (--jobs; the CLI's default is the number of cores, at most 8). The
  /// verdict does not depend on it: every case is recorded in the order of a
  /// run with one port, and a stop at max_failures records the same cases.
  int jobs = 1;
};

/// Why `options` cannot run ("--option: problem", naming the option and the
/// value), or "" when they can: counts and seconds finite and in range, the
/// known-failures file readable, the vector directory holding *.jsonl files,
/// the report's directory writable, the save directory creatable. Creates
/// the save directory.
std::string check_conform_options(const ConformOptions& options);

/// Runs the conformance check (after check_conform_options). Returns 0 when every failure is listed as
/// known and every listed entry still fails; 1 otherwise; 2 on setup errors.
int run_conform(const ConformOptions& options, std::ostream& out, std::ostream& err);

/// A golden vector: a case and the reference's result line for it.
struct Vector {
  std::string id;
  protocol::Case c;
  std::string expect;
  std::vector<protocol::Case> steps;  ///< a session vector's cases (then `c` is unused)
};

/// The vector file format this build writes and reads (each line's "format";
/// lines without one are format 1: no sessions, no views beyond the first two).
inline constexpr const char* kVectorFormat = "seqpack-vectors/2";

/// A vector as one line of the vector file.
std::string vector_line(const Vector& v);

/// Reads every *.jsonl file of `dir` (sorted by name). Throws on malformed lines.
std::vector<Vector> read_vectors(const std::string& dir);

/// The bucket-edge cases by rule (PROTOCOL.md, "Edge cases by rule"): a
/// stream of E - 1, E and E + 1 rows for every tier boundary E of the
/// CUDA-graph bucket (2048, 4096, 8192, 16384), crossed with alignments of
/// odd parts 1, 3, 5, 7, 17, 127 and cp 1, 2, 3, graphs on; ids
/// `edge-rule-<rows>-odd<k>-cp<n>-<stream>`. Their expected results are the
/// reference's, computed when run (a padded stream reaches 390,144 rows: too
/// large for the vector file); `seqpack conform` runs them with the golden
/// vectors, at every seed.
std::vector<std::pair<std::string, protocol::Case>> rule_cases();

/// The golden vectors: worked examples, rounding edges, every option and
/// error class, and generated cases of both profiles (deterministic).
std::vector<Vector> make_vectors();

}  // namespace seqpack::conformance
