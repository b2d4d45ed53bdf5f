// Internal to the library: what the consumer judge (consumer_judge.cpp) shares
// between its parts. A call's geometry (which query rows each segment
// computes, which keys each row sees, which gradient rows the backward
// writes: geometry.cpp), the truth's structure (what each real row should
// see), the identity comparison of real rows (identity.cpp) and the layer's
// propagation of what unwritten rows hold (layer.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqpack/attention/consumer.hpp"
#include "seqpack/attention/consumer_judge.hpp"

namespace seqpack::attention::detail {

using I64 = std::vector<std::int64_t>;

/// A run of key or query identities: packed rows first, first + 1, ...,
/// first + count - 1; or `count` padding rows when first is -1.
struct Run {
  std::int64_t first = -1;
  std::int64_t count = 0;
  friend bool operator==(const Run& a, const Run& b) { return a.first == b.first && a.count == b.count; }
};
using Rle = std::vector<Run>;
/// Appends identity `id` (packed row or -1) to `rle`, extending its last run.
void push_id(Rle& rle, std::int64_t id);
/// Appends a run to `rle`, merging it with the last where they continue.
void push_run(Rle& rle, const Run& run);
/// `rle` without its padding runs.
Rle real_only(const Rle& rle);
/// The identities [begin, begin + n) of `rle`, as runs.
Rle slice(const Rle& rle, std::int64_t begin, std::int64_t n);
/// Identities in `rle`.
std::int64_t length(const Rle& rle) noexcept;

/// One segment as the kernel runs it: the query and key rows it holds (rows
/// of the call's query stream and key/value buffer, in order), how many of
/// them the grids reach, and whether its keys' gradients are garbage.
struct Segment {
  I64 q, k;
  bool causal_fwd = false, causal_bwd = false;
  std::int64_t q_fwd = 0;  ///< queries the forward computes: q[0, q_fwd)
  std::int64_t q_bwd = 0;  ///< queries whose dq the backward writes
  std::int64_t k_bwd = 0;  ///< keys whose dk/dv the backward writes
  bool k_garbage = false;  ///< queries past the backward grid: dk/dv read uninitialised D and LSE (FA2)
  Rle k_ids, q_ids;        ///< identities of k and q
};

/// What one call does, decided from its arguments alone.
struct Geometry {
  std::string refusal;  ///< the frontend or the kernel refuses the call: no kernel runs
  std::string cite;     ///< the line of the check that refuses
  std::vector<Segment> segments;
  bool zero_all_forward = false;   ///< every output row 0, LSE +inf (max_seqlen_k == 0)
  bool zero_all_backward = false;  ///< every dk/dv row 0, dq as it was (max_seqlen_q == 0)
  /// NATTEN zero-fills a varlen call's output, LSE and gradients before it
  /// runs (torch_wrappers.py:130-139, 217-223 at 8c8729f): rows outside its
  /// segments hold 0 (LSE 0), never garbage.
  bool zero_init = false;
  std::vector<std::int32_t> q_seg, k_seg;  ///< per row: its segment, -1 for none
  I64 q_local, k_local;                    ///< per row: its place in the segment
};

/// The geometry of `call` on `kernel`; never throws (a refused call says so).
Geometry plan_call(const Call& call, Kernel kernel);

/// What the forward writes to a query row.
enum class Out : std::uint8_t { unwritten, zero, empty, computed, zero_filled };
struct QueryState {
  Out out = Out::unwritten;
  std::int64_t n = 0;       ///< keys it sees in the forward (prefix of its segment's keys)
  bool dq_written = false;  ///< the backward writes its dq
  std::int64_t n_bwd = 0;   ///< keys whose gradient terms reach its dq
};
QueryState query_state(const Geometry& g, std::int64_t row) noexcept;

/// What the backward writes to a key row's dk/dv.
enum class KeyGrad : std::uint8_t { unwritten, garbage, zero, computed };
struct KeyState {
  KeyGrad grad = KeyGrad::unwritten;
  std::int64_t first_q = 0;  ///< the queries that see it: q[first_q, last_q) of its segment
  std::int64_t last_q = 0;
};
KeyState key_state(const Geometry& g, std::int64_t row) noexcept;

/// The truth's structure: each real packed row's sample, mode and split, and
/// the identities each consumer call should give it.
class Truth {
 public:
  /// Empty `error()` when the truth's pack can be read.
  explicit Truth(const PackMeta& truth);
  const std::string& error() const noexcept { return error_; }
  std::int64_t rows() const noexcept { return static_cast<std::int64_t>(sample_.size()); }
  std::int64_t sample(std::int64_t packed) const noexcept;
  bool causal(std::int64_t packed) const noexcept;
  /// The keys a real query row should see under `intent` (empty when the row
  /// cannot be a query of that intent: then every key it sees is wrong).
  Rle keys(Intent intent, std::int64_t packed, bool& defined) const;
  /// The real queries that should see real key `packed` under `intent`.
  Rle queries(Intent intent, std::int64_t packed) const;

 private:
  std::string error_;
  I64 sample_, split_, place_;  // per packed row; split_ of its mode, place_ in the split
  std::vector<bool> causal_;
  std::vector<Rle> causal_splits_, full_splits_;  // per split of each mode
  std::vector<Rle> sample_causal_, sample_full_;  // per sample
  I64 sample_offsets_;
};

/// Rows [first, last] as "3–5, 9".
std::string rows_text(const std::vector<std::int64_t>& rows);

/// How a finding names a call: "the dense GEN pass".
const char* call_phrase(const Call& c);

}  // namespace seqpack::attention::detail

namespace seqpack::attention::detail {

/// The layer model's findings for branch `b`, whose calls all planned
/// (geos[i] is b.calls[i]'s geometry): parameter gradients and real rows that
/// the unwritten rows' contents reach, as finite garbage and as NaN (layer.cpp).
void layer_findings(const Branch& b, const std::vector<Geometry>& geos, const ConsumerOptions& o,
                    std::vector<Finding>& out);

}  // namespace seqpack::attention::detail
