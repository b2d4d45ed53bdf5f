// The block-sparse route: attention over whole streams where query row r may
// attend key row c iff mask_mod(r, c), as PyTorch's FlexAttention computes it
// (README.md cites torch/nn/attention/flex_attention.py). A fully masked row
// gives output 0 and LSE -inf; every row is written. Neighbours: varlen.hpp
// (the cumulative-offsets route), passes.hpp (which streams and ids each route reads).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "seqpack/attention/tensor.hpp"

namespace seqpack::attention {

/// mask_mod(q_idx, kv_idx): whether query row q_idx may attend key row kv_idx.
using MaskMod = std::function<bool(std::int64_t, std::int64_t)>;

/// The document mask of a packed stream: same sample id, and for `causal`
/// kv_idx <= q_idx. Ids are per row (padding rows carry num_samples, so
/// padding attends padding). The vectors are copied into the returned mask.
MaskMod sample_id_mask(std::vector<std::int64_t> q_ids, std::vector<std::int64_t> kv_ids, bool causal);

/// Whether q_len and kv_len are multiples of `block_size` (>= 1). PyTorch pads
/// a block mask itself, so this is a check of the caller's own promise (the
/// original's full_seq_alignment / causal_seq_alignment docstring), not a
/// precondition of the kernel. `message` is empty when aligned.
struct BlockAlignment {
  bool aligned = true;
  std::string message;
};
BlockAlignment check_block_alignment(std::int64_t q_len, std::int64_t kv_len, std::int64_t block_size);

/// Forward. q: [Lq, H, D]; k, v: [Lkv, H, D]; out [Lq, H, D] and lse [H * Lq]
/// caller-provided and written in full. Throws std::invalid_argument on
/// mismatched shapes or a non-finite scale (default 1 / sqrt(D)).
void flex_forward(const Tensor& q, const Tensor& k, const Tensor& v, const MaskMod& mask,
                  std::optional<double> softmax_scale, Tensor& out, std::vector<double>& lse);

/// Backward, by hand, with the forward's out and lse. dq, dk, dv
/// caller-provided and written in full (0 where nothing flows).
void flex_backward(const Tensor& dout, const Tensor& q, const Tensor& k, const Tensor& v, const MaskMod& mask,
                   std::optional<double> softmax_scale, const Tensor& out, const std::vector<double>& lse, Tensor& dq,
                   Tensor& dk, Tensor& dv);

}  // namespace seqpack::attention
