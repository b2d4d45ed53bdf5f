// An emulator of FlashAttention's flash_attn_varlen_func (FA2, csrc/flash_attn)
// in double precision, faithful in what the kernel does NOT write: rows outside
// every segment, rows past max_seqlen_*, keys no query reaches. Each contract
// point and its source: README.md in this folder. The block-sparse route is
// flex.hpp; the passes that call this are passes.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "seqpack/attention/tensor.hpp"

namespace seqpack::attention {

/// The arguments of one varlen call besides the tensors.
struct VarlenArgs {
  CuSeqlens cu_seqlens_q;               ///< [segments + 1], starts at 0, non-decreasing, last <= q.rows
  CuSeqlens cu_seqlens_k;               ///< [segments + 1], same rules against k.rows
  std::int64_t max_seqlen_q = 0;        ///< sizes the query grid; never checked by the kernel
  std::int64_t max_seqlen_k = 0;        ///< sizes the backward's key grid; never checked by the kernel
  bool causal = false;                  ///< bottom-right aligned per segment (FA >= 2.1)
  std::optional<double> softmax_scale;  ///< default 1 / sqrt(dim)
  /// How the grid covers a segment's rows. 1 (the default): exactly the first
  /// max_seqlen_* rows, the safe side of FA2; n > 1: FA2's blocks of n rows
  /// (the rows of the last launched block are computed, VARLEN.md point 9);
  /// 0: FA3, whose scheduler counts blocks from cu_seqlens (every row).
  std::int64_t grid_block = 1;
  /// The LSE of a query row with no key: +inf (FA2), -inf when set (FA3).
  bool minus_inf_empty_lse = false;
};

/// One segment as the kernel's grid sees it: rows [q_begin, q_begin + q_len)
/// attend keys [k_begin, k_begin + k_len).
struct VarlenSegment {
  std::int64_t q_begin = 0;
  std::int64_t q_len = 0;
  std::int64_t k_begin = 0;
  std::int64_t k_len = 0;
  std::int64_t q_grid = 0;  ///< min(q_len, max_seqlen_q): query rows the grid reaches
  std::int64_t k_grid = 0;  ///< min(k_len, max_seqlen_k): key rows the backward grid reaches
};

/// What a call will do, decided from the offsets and maxima alone (no
/// tensor is touched): the validated segments and the effective flags.
struct VarlenPlan {
  std::vector<VarlenSegment> segments;
  double scale = 0;
  bool causal_forward = false;     ///< after FA's "max_seqlen_q == 1 means not causal" (forward only)
  bool causal_backward = false;    ///< the backward keeps the caller's flag
  bool zero_all_forward = false;   ///< max_seqlen_k == 0: the whole out is zeroed, LSE +inf
  bool zero_all_backward = false;  ///< max_seqlen_q == 0: the whole dk, dv are zeroed, dq untouched
};

/// Validates the call's shapes and offsets and plans it. Throws
/// std::invalid_argument naming the field and value: cu_seqlens empty, not
/// starting at 0, descending, last entry past the rows; unequal segment
/// counts; negative max_seqlen; q/k/v heads or dim that differ; k and v rows
/// that differ; a scale that is not finite. Offsets that end before the rows
/// are legal: the rows after them are simply not written.
VarlenPlan plan_varlen(std::int64_t rows_q, std::int64_t rows_k, std::int64_t heads, std::int64_t dim,
                       const VarlenArgs& args);

/// Keys visible from local query row `i` of a segment of `q_len` queries and
/// `k_len` keys: [0, n) with n returned (0 when none). Causal is aligned
/// bottom-right: row i sees key j iff j <= i + k_len - q_len (FA2 mask.h).
std::int64_t visible_keys(std::int64_t i, std::int64_t q_len, std::int64_t k_len, bool causal) noexcept;

/// Checks the shapes of q, k, v against each other (the throws of plan_varlen).
VarlenPlan plan_varlen(const Tensor& q, const Tensor& k, const Tensor& v, const VarlenArgs& args);

/// Forward. q: [rows_q, H, D]; k, v: [rows_k, H, D]; `out` must be
/// [rows_q, H, D] and `lse` [H * rows_q] (FA2's unpadded LSE, head-major),
/// both provided by the caller: only the rows the kernel writes are written,
/// every other byte is left as it was. A query row with no visible key gets
/// output 0 and LSE +inf.
void varlen_forward(const Tensor& q, const Tensor& k, const Tensor& v, const VarlenArgs& args, Tensor& out,
                    std::vector<double>& lse);

/// Backward (written by hand: P recomputed from the LSE, D = rowsum(dO * O)).
/// `out` and `lse` are the forward's buffers; dq [rows_q, H, D] and dk, dv
/// [rows_k, H, D] are provided by the caller and written only where the
/// kernel writes. Keys of a segment that no query reaches get zeros.
void varlen_backward(const Tensor& dout, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                     const std::vector<double>& lse, const VarlenArgs& args, Tensor& dq, Tensor& dk, Tensor& dv);

/// Which rows a call writes, from the plan alone: [rows_q] for out (and dq)
/// and [rows_k] for dk/dv; true where the kernel writes a defined value.
/// dk/dv rows written with unspecified_nan() count as not covered.
struct VarlenCoverage {
  std::vector<bool> out;
  std::vector<bool> dq;
  std::vector<bool> dkv;
};
/// The rows a call writes (what varlen_forward/varlen_backward leave without NaN
/// for finite inputs), computed in O(rows) without running attention.
VarlenCoverage varlen_coverage(const VarlenPlan& plan, std::int64_t rows_q, std::int64_t rows_k);

}  // namespace seqpack::attention
