// The LibTorch binding: the original module's API over at::Tensor, with its
// names and results. Tensor plumbing only: every operation is the GPU
// implementation's (seqpack::gpu), on Thrust's CPP host backend for CPU
// tensors; see torch/README.md for the CUDA path and the choices made.
//
// Rows are whatever the tensors hold: any dtype, any trailing shape ([N],
// [N, D], [N, H, D]), contiguous or not; they move as bytes, so results are
// bit-exact. Offsets and indices are int32 tensors and sample ids int64, as in
// the original; maxima and counts are plain integers.
//
// Errors: seqpack::reference::Error (the reference's classes) for layouts and
// options; invalid_argument errors naming the argument for tensors of the
// wrong dtype, device, rank or length.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "seqpack/reference/types.hpp"

namespace seqpack::torch_binding {

/// Prepared metadata of one layout (the original's SequencePackMetadata),
/// reusable across builds of that layout.
class SequencePackMetadata {
 public:
  struct Impl;
  /// No metadata: every operation on a pack holding it refuses with `pack.meta`.
  SequencePackMetadata() = default;
  explicit SequencePackMetadata(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  const std::shared_ptr<const Impl>& impl() const { return impl_; }

  at::Tensor sample_offsets() const;         ///< int32 [num_samples + 1]
  at::Tensor causal_seq_offsets() const;     ///< int32 [num_causal_splits + 1]
  at::Tensor full_only_seq_offsets() const;  ///< int32 [num_full_splits + 1]
  at::Tensor causal_indices() const;         ///< int32 [num_causal_tokens]
  at::Tensor full_indices() const;           ///< int32 [num_full_tokens]
  at::Tensor causal_sample_ids() const;      ///< int64 [num_causal_tokens]
  at::Tensor full_only_sample_ids() const;   ///< int64 [num_full_tokens]
  std::int64_t max_sample_len() const;
  std::int64_t max_causal_len() const;
  std::int64_t max_full_len() const;
  std::int64_t num_causal_tokens() const;
  std::int64_t num_full_tokens() const;
  /// Whether this describes the layout (lengths and modes, as the original).
  bool matches_layout(const std::vector<std::int64_t>& sample_lens, const std::vector<std::int64_t>& split_lens,
                      const std::vector<std::string>& attn_modes) const;

 private:
  std::shared_ptr<const Impl> impl_;
};

/// A sequence pack over tensors (the original's SequencePack dict).
struct SequencePack {
  SequencePackMetadata meta;
  std::int64_t max_num_tokens = 0;
  at::Tensor causal_seq;            ///< [padded causal rows, ...]
  at::Tensor full_only_seq;         ///< [padded full rows, ...]
  at::Tensor causal_sample_ids;     ///< int64, one per causal_seq row (the original's _causal_sample_ids)
  at::Tensor full_only_sample_ids;  ///< int64, one per full_only_seq row
  std::optional<reference::PadSegment> pad_segment;
  bool is_sharded = false;
  std::optional<std::int64_t> num_causal_tokens_local;
  std::optional<std::int64_t> num_full_tokens_local;
};

/// The keyword arguments of sequence_pack_from_packed_sequence, with the
/// original's defaults.
struct BuildOptions {
  bool is_image_batch = false;
  std::int64_t cp_world_size = 1;
  bool pad_for_cuda_graphs = false;
  std::int64_t full_seq_alignment = 1;
  std::int64_t causal_seq_alignment = 1;
  bool pad_segment_only_when_padded = false;
};

/// The keyword arguments that the reference's options stand for.
inline BuildOptions build_options(const reference::Options& o) {
  BuildOptions b;
  b.is_image_batch = o.is_image_batch;
  b.cp_world_size = o.cp_world_size;
  b.pad_for_cuda_graphs = o.pad_for_cuda_graphs;
  b.full_seq_alignment = o.full_seq_alignment;
  b.causal_seq_alignment = o.causal_seq_alignment;
  b.pad_segment_only_when_padded = o.pad_segment_only_when_padded;
  return b;
}

/// The CUDA-graph high-water marks, an explicit object the caller owns (the
/// original keeps them in module globals).
using GraphMarks = reference::GraphMarks;
inline const GraphMarks& get_padding_stats(const GraphMarks& marks) { return marks; }

/// `packed_und_token_indexes`: an integer tensor of packed positions.
SequencePackMetadata prepare_sequence_pack_metadata(const std::vector<std::int64_t>& sample_lens,
                                                    const std::vector<std::int64_t>& split_lens,
                                                    const std::vector<std::string>& attn_modes,
                                                    const at::Tensor& packed_und_token_indexes);

/// Builds a pack from `packed_sequence` ([sum(sample_lens), ...]). Generation
/// indexes are accepted and ignored, as in the original. `marks` is read and,
/// under pad_for_cuda_graphs, grown (left as it was when the build fails).
SequencePack sequence_pack_from_packed_sequence(
    const at::Tensor& packed_sequence, const std::vector<std::string>& attn_modes,
    const std::vector<std::int64_t>& split_lens, const std::vector<std::int64_t>& sample_lens,
    const at::Tensor& packed_und_token_indexes, const at::Tensor& packed_gen_token_indexes, GraphMarks& marks,
    const BuildOptions& options = {}, const std::optional<SequencePackMetadata>& prepared_metadata = {});

at::Tensor get_und_seq(const SequencePack& pack);
at::Tensor get_gen_seq(const SequencePack& pack);
void set_und_seq(SequencePack& pack, const at::Tensor& value);
void set_gen_seq(SequencePack& pack, const at::Tensor& value);

/// The real rows in packed order; sharded_pack when the pack is a shard.
at::Tensor get_all_seq(const SequencePack& pack);
/// (interleaved stream, int32 sample offsets, max sample length), padded when the pack has a pad segment.
std::tuple<at::Tensor, at::Tensor, std::int64_t> get_all_seq_padded(const SequencePack& pack);
/// Overwrites the real rows of both streams (in place) from packed-order rows.
void set_all_seq(SequencePack& pack, const at::Tensor& value);

std::tuple<at::Tensor, at::Tensor> get_causal_seq(const SequencePack& pack);
std::tuple<at::Tensor, at::Tensor> get_full_only_seq(const SequencePack& pack);
std::tuple<at::Tensor, at::Tensor, std::int64_t> get_causal_seq_padded(const SequencePack& pack);
std::tuple<at::Tensor, at::Tensor, std::int64_t> get_full_only_seq_padded(const SequencePack& pack);
bool has_pad_segment(const SequencePack& pack);

/// Zero streams of `orig`'s lengths; `shape` is (-1, trailing...) or absent.
SequencePack zeros_like(const SequencePack& orig, const std::optional<std::vector<std::int64_t>>& shape = {});
SequencePack from_all_seq(const at::Tensor& packed_sequence, const SequencePack& metadata_source);
SequencePack from_mode_splits(const at::Tensor& causal_seq, const at::Tensor& full_only_seq, const SequencePack& orig,
                              std::optional<bool> is_sharded = std::nullopt);
SequencePack from_und_gen_splits(const at::Tensor& und_seq, const at::Tensor& gen_seq, const SequencePack& orig);

std::pair<std::int64_t, std::int64_t> get_num_real_tokens(const SequencePack& pack);
std::int64_t num_local_real_tokens(std::int64_t num_real_tokens, std::int64_t rank, std::int64_t shard_len);

/// Position ids [len] or [3, len] (int32 or int64; the result keeps the dtype).
at::Tensor get_und_position_ids(const at::Tensor& position_ids, const SequencePack& pack);
at::Tensor get_gen_position_ids(const at::Tensor& position_ids, const SequencePack& pack);

/// Context parallelism (NOTES section 8): rank's contiguous shard, the shards
/// back into the whole pack, and rank's position ids ([causal shard ; full shard]).
SequencePack shard_pack(const SequencePack& pack, std::int64_t rank, std::int64_t world_size);
SequencePack gather_shards(const std::vector<SequencePack>& shards);
at::Tensor shard_position_ids(const at::Tensor& position_ids, const SequencePack& pack, std::int64_t rank,
                              std::int64_t world_size);

}  // namespace seqpack::torch_binding
