// The consequence oracle: runs every pass a pack feeds (passes.hpp) through
// the emulators with NaN-poisoned buffers, and reports what the pack does to
// them: rows left unwritten, real rows that padding changes, projection weight
// gradients, maxima, pairing, cross-sample attention, numerically (the
// catalogue's consequence properties run it on the reference's packs; the
// runner judges ports with consumer_judge.hpp). Formatting lives in
// report.cpp. Contract and choices: README.md, PASSES.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seqpack/attention/pack_meta.hpp"
#include "seqpack/attention/passes.hpp"

namespace seqpack::attention {

/// How bad a consequence is, in increasing order (README.md, "Severities"):
/// - metadata_only: judged, and nothing a consumer computes changes;
/// - not_judged: the judge could not say (a limit, an unreadable reference);
///   never taken for harmless, so it ranks above metadata_only;
/// - crash_or_refusal: the consumer refuses the call or crashes, or NaN on
///   every step: loud, the run stops;
/// - nan_only: a gradient or a real row is hit only when the unwritten memory
///   holds NaN or Inf (finite garbage meets an exact zero): loud, intermittent;
/// - wrong_output: a real row's forward output is wrong (the loss is wrong);
/// - silent_wrong_gradient: the forward is right but a gradient is wrong by
///   finite amounts: nothing in the loss shows it.
/// A report's severity is its worst finding's.
enum class Severity : std::uint8_t {
  metadata_only,
  not_judged,
  crash_or_refusal,
  nan_only,
  wrong_output,
  silent_wrong_gradient
};
/// "metadata-only", "not-judged", "crash-or-refusal", "nan-only", "wrong-output", "silent-wrong-gradient".
const char* to_string(Severity severity) noexcept;
/// The severity named `name` (as to_string writes it), or false.
bool parse_severity(const std::string& name, Severity& out) noexcept;

/// Rows [first, last] (inclusive) of one buffer.
struct RowRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
  friend bool operator==(const RowRange& a, const RowRange& b) { return a.first == b.first && a.last == b.last; }
};
/// The ranges of the marked rows, ascending.
std::vector<RowRange> to_ranges(const std::vector<bool>& marked);
/// "37–40, 45" (en dash).
std::string format_ranges(const std::vector<RowRange>& ranges);

/// Rows of one buffer ("output", "dq", "dk", "dv") with some property.
struct BufferRows {
  std::string buffer;
  std::vector<RowRange> rows;
};

/// The first real query row that attends a key of another sample or padding.
struct CrossSample {
  std::int64_t q_row = 0;     ///< row of the query stream
  std::int64_t q_sample = 0;  ///< its sample (by the truth's sample_offsets)
  std::int64_t k_row = 0;     ///< row of the key stream
  std::int64_t k_sample = 0;  ///< the key's sample, -1 for padding
};

/// A projection weight gradient sum_rows x^T dY over a pass's buffer.
struct WeightGradient {
  std::string name;  ///< "W_q" (x^T dq), "W_k", "W_v", "W_o" (out^T dout)
  bool finite = true;
  bool equals_unpadded = true;  ///< value for value (+0.0 == -0.0) with the unpadded run's
};

/// What one pass does with the pack.
struct PassReport {
  PassKind kind = PassKind::und_causal;
  bool numeric = false;                          ///< attention was run (else coverage from the plan alone)
  std::string refusal;                           ///< non-empty: the call is refused (the emulator's message)
  std::vector<BufferRows> unwritten;             ///< (a) rows still NaN after forward and backward
  std::vector<BufferRows> changed;               ///< (b) real rows not bit-identical to the unpadded run
  std::vector<WeightGradient> weight_gradients;  ///< (c)
  std::vector<std::string> max_violations;       ///< (d) "max_full_len = 4 < 7, segment 1 of full_only_seq_offsets"
  std::int64_t q_segments = 0, k_segments = 0;   ///< (e)
  bool paired = true;
  std::optional<CrossSample> cross;  ///< (g)
  std::int64_t cross_rows = 0;       ///< real query rows that attend across samples or padding
  std::int64_t empty_key_rows = 0;   ///< real query rows with no key at all (output 0; informational)
  std::vector<std::string> notes;    ///< block alignment, skipped checks
  Severity severity = Severity::metadata_only;
  std::string consequence;  ///< one clause, empty when metadata only
};

/// What a pack does to all of its passes.
struct Report {
  std::vector<PassReport> passes;
  bool has_pad_segment = false;
  bool numeric = false;              ///< false: past the work bound, coverage from plans only
  std::int64_t attention_pairs = 0;  ///< (query, key) pairs the numeric run needs
  bool plain_offsets_match = true;   ///< (f) without a pad segment: the plain offsets cover and agree
  std::string refusal;               ///< the pack could not be read at all
  std::vector<std::string> notes;
  Severity severity = Severity::metadata_only;
  std::string summary;  ///< "consequence: ..."
};

/// Knobs of evaluate(): small tensors and a work bound keep it cheap.
struct EvaluateOptions {
  std::uint64_t seed = 0x5eedc0de;  ///< q/k/v/dout/x are hashed from it and the packed row
  std::int64_t heads = 1;
  std::int64_t dim = 2;
  /// Past this many (query, key) pairs over all passes and both runs, the
  /// attention is not computed: coverage, maxima, pairing and cross-sample
  /// checks of the varlen routes still run from the offsets (O(rows)).
  std::int64_t max_pairs = 4'000'000;
  bool block_sparse = true;  ///< also run the flex routes
};

/// Runs every pass of `meta` and reports the consequences. `truth` (default:
/// `meta` itself) supplies the unpadded baseline and each packed row's sample:
/// pass the reference's PackMeta to judge a port's. Deterministic; never throws
/// for a malformed pack (that becomes `refusal`).
Report evaluate(const PackMeta& meta, const EvaluateOptions& options = {}, const PackMeta* truth = nullptr);

/// A multi-line, deterministic rendering of a report (one line per finding).
std::string format_report(const Report& report);

/// A verdict: a severity and one "consequence [...]: ..." line
/// (consumer_judge.hpp's compare_consumer gives them).
struct Verdict {
  Severity severity = Severity::metadata_only;
  std::string line;
};

}  // namespace seqpack::attention
