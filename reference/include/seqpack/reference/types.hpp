// Value types of the reference: layouts, options, CUDA-graph marks, row
// buffers, prepared metadata and packs. Plain data; the operations live in
// the other headers of this folder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace seqpack::reference {

/// Attention mode of one split: causal (understanding, text) or full (generation).
enum class AttnMode : std::uint8_t { causal, full };

/// "causal" or "full".
const char* to_string(AttnMode mode) noexcept;

/// A packed-sequence layout as callers send it. Lengths are int64 so that
/// negative and oversized values can be represented and rejected by name.
struct Layout {
  std::vector<std::int64_t> sample_lens;        ///< one entry per sample, in packed order
  std::vector<std::int64_t> split_lens;         ///< one entry per split, in packed order
  std::vector<std::string> attn_modes;          ///< "causal" or "full", one per split
  std::vector<std::int64_t> und_token_indexes;  ///< packed positions of understanding tokens
};

/// The und_token_indexes the framework's packer lists for `layout`'s splits
/// (NOTES.md section 2): every causal position, in packed order. A negative
/// split length counts as 0, and a split without a mode as full, so that
/// invalid layouts still get a list.
std::vector<std::int64_t> packer_und_tokens(const Layout& layout);

/// Options of a build, with the original's defaults.
struct Options {
  std::int64_t cp_world_size = 1;             ///< context-parallel world size, >= 1
  bool pad_for_cuda_graphs = false;           ///< bucket lengths and pad to the high-water marks
  bool is_image_batch = false;                ///< which pair of marks a CUDA-graph build uses
  std::int64_t full_seq_alignment = 1;        ///< full stream length is a multiple of this, >= 1
  std::int64_t causal_seq_alignment = 1;      ///< causal stream length is a multiple of this, >= 1
  bool pad_segment_only_when_padded = false;  ///< keep the pad segment only if padding happens anyway
};

/// The CUDA-graph high-water marks: the longest padded stream lengths seen so
/// far, per batch kind. The original keeps them in module globals; here they
/// are an explicit object that the caller owns and threads through builds.
struct GraphMarks {
  std::int64_t image_causal = 0;
  std::int64_t image_full = 0;
  std::int64_t video_causal = 0;
  std::int64_t video_full = 0;

  friend bool operator==(const GraphMarks& a, const GraphMarks& b) {
    return a.image_causal == b.image_causal && a.image_full == b.image_full && a.video_causal == b.video_causal &&
           a.video_full == b.video_full;
  }
  friend bool operator!=(const GraphMarks& a, const GraphMarks& b) { return !(a == b); }
};

/// A dense buffer of `rows` rows of `row_bytes` bytes each, of any dtype and
/// trailing shape. Compared byte for byte, so NaN payloads and -0.0 count.
class Rows {
 public:
  Rows() = default;
  /// A zero-filled buffer; throws invalid_argument if rows * row_bytes overflows.
  Rows(std::size_t rows, std::size_t row_bytes);

  std::size_t rows() const noexcept { return rows_; }
  std::size_t row_bytes() const noexcept { return row_bytes_; }
  std::byte* row(std::size_t i) noexcept { return bytes_.data() + i * row_bytes_; }
  const std::byte* row(std::size_t i) const noexcept { return bytes_.data() + i * row_bytes_; }
  std::byte* data() noexcept { return bytes_.data(); }
  const std::byte* data() const noexcept { return bytes_.data(); }
  std::size_t size_bytes() const noexcept { return bytes_.size(); }

  friend bool operator==(const Rows& a, const Rows& b) {
    return a.rows_ == b.rows_ && a.row_bytes_ == b.row_bytes_ && a.bytes_ == b.bytes_;
  }
  friend bool operator!=(const Rows& a, const Rows& b) { return !(a == b); }

 private:
  std::size_t rows_ = 0;
  std::size_t row_bytes_ = 0;
  std::vector<std::byte> bytes_;
};

/// Validated metadata of one layout, reusable across builds of that layout
/// (the original's SequencePackMetadata). Offsets and indices are int32 and
/// sample ids int64, as in the original.
struct Metadata {
  // The layout this describes (what matches_layout compares).
  std::vector<std::int64_t> sample_lens;
  std::vector<std::int64_t> split_lens;
  std::vector<AttnMode> attn_modes;

  std::vector<std::int32_t> sample_offsets;         ///< [num_samples + 1], cumulative sample lengths
  std::int32_t max_sample_len = 0;                  ///< longest sample
  std::int32_t max_causal_len = 0;                  ///< longest causal split, 0 if none
  std::int32_t max_full_len = 0;                    ///< longest full split, 0 if none
  std::vector<std::int32_t> causal_indices;         ///< [num_causal_tokens], packed position of each causal row
  std::vector<std::int32_t> full_indices;           ///< [num_full_tokens], packed position of each full row
  std::vector<std::int32_t> causal_seq_offsets;     ///< [num_causal_splits + 1]
  std::vector<std::int32_t> full_only_seq_offsets;  ///< [num_full_splits + 1]
  std::vector<std::int64_t> causal_sample_ids;      ///< [num_causal_tokens], unpadded
  std::vector<std::int64_t> full_only_sample_ids;   ///< [num_full_tokens], unpadded
  std::int64_t num_causal_tokens = 0;
  std::int64_t num_full_tokens = 0;

  std::int64_t num_samples() const noexcept { return static_cast<std::int64_t>(sample_lens.size()); }
  std::int64_t num_tokens() const noexcept { return num_causal_tokens + num_full_tokens; }
  /// Whether this metadata describes `layout` (sample, split lengths and modes;
  /// und indexes are not compared, as in the original).
  bool matches_layout(const Layout& layout) const;
};

/// The trailing pad segment: each stream's offsets with the padded length
/// appended, and the interleaved stream's sample offsets with both padded
/// lengths appended. Present as a whole or not at all.
struct PadSegment {
  std::vector<std::int32_t> causal_seq_offsets;  ///< [num_causal_splits + 2]
  std::int32_t max_causal_len = 0;
  std::vector<std::int32_t> full_only_seq_offsets;  ///< [num_full_splits + 2]
  std::int32_t max_full_len = 0;
  std::vector<std::int32_t> sample_offsets;  ///< [num_samples + 2]
  std::int32_t max_sample_len = 0;

  friend bool operator==(const PadSegment& a, const PadSegment& b) {
    return a.causal_seq_offsets == b.causal_seq_offsets && a.max_causal_len == b.max_causal_len &&
           a.full_only_seq_offsets == b.full_only_seq_offsets && a.max_full_len == b.max_full_len &&
           a.sample_offsets == b.sample_offsets && a.max_sample_len == b.max_sample_len;
  }
};

/// A sequence pack: two padded streams, their per-row sample ids, the shared
/// metadata and the optional pad segment. A sharded pack (context parallel)
/// holds one rank's contiguous slice of each stream and of each sample-id
/// vector, plus its local real-row counts; offsets stay global.
struct Pack {
  std::shared_ptr<const Metadata> meta;            ///< never null in a built pack
  std::int64_t max_num_tokens = 0;                 ///< sum(sample_lens)
  Rows causal_seq;                                 ///< [padded causal rows]
  Rows full_only_seq;                              ///< [padded full rows]
  std::vector<std::int64_t> causal_sample_ids;     ///< one per causal_seq row; padding = num_samples
  std::vector<std::int64_t> full_only_sample_ids;  ///< one per full_only_seq row; padding = num_samples
  std::optional<PadSegment> pad_segment;
  bool is_sharded = false;
  std::optional<std::int64_t> num_causal_tokens_local;  ///< set on sharded packs
  std::optional<std::int64_t> num_full_tokens_local;    ///< set on sharded packs
};

/// Copies the fields that every pack representation holds under the same
/// names (this Pack, gpu::DevicePack, torch::SequencePack): the token count,
/// the pad segment and the shard state. Streams, sample ids and metadata move
/// by each representation's own means (copies, device transfers, tensors).
template <typename From, typename To>
void copy_pack_scalars(const From& from, To& to) {
  to.max_num_tokens = from.max_num_tokens;
  to.pad_segment = from.pad_segment;
  to.is_sharded = from.is_sharded;
  to.num_causal_tokens_local = from.num_causal_tokens_local;
  to.num_full_tokens_local = from.num_full_tokens_local;
}

/// Position ids: 1-D `[len]` (RoPE) or 2-D `[axes, len]` (3 axes for mRoPE),
/// row-major, int64.
struct PositionIds {
  bool two_dimensional = false;  ///< false: shape [len] (axes must be 1)
  std::size_t axes = 1;
  std::size_t len = 0;
  std::vector<std::int64_t> values;  ///< axes * len values

  friend bool operator==(const PositionIds& a, const PositionIds& b) {
    return a.two_dimensional == b.two_dimensional && a.axes == b.axes && a.len == b.len && a.values == b.values;
  }
};

}  // namespace seqpack::reference
