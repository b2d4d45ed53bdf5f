// Building a pack (the spec's sequence_pack_from_packed_sequence): the lengths,
// pad segment and graph marks are planned on the host, from the metadata's
// O(splits) summary, before any device work; then the rows move on the device.
// Mirrors reference/src/pack.cpp.
#include <algorithm>

#include "detail.cuh"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace detail {
namespace {

// A graph mark becomes a stream length as it is, so it must fit int32 (reference/README.md, item 6).
std::int64_t mark_as_length(std::int64_t mark, bool image, const char* stream) {
  if (mark > kInt32Max) {
    fail(ref::Errc::overflow, std::string("graph_bounds.") + (image ? "image." : "video.") + stream,
         "mark " + std::to_string(mark) + " would be a stream length past int32");
  }
  return mark;
}

// The spec's _append_pad_segment: the offsets with the padded length as one more end.
std::vector<std::int32_t> append_pad_segment(const std::vector<std::int32_t>& offsets, std::int64_t padded_len) {
  std::vector<std::int32_t> out(offsets);
  out.push_back(static_cast<std::int32_t>(padded_len));
  return out;
}

}  // namespace

PackShape plan_pack(const ref::Metadata& meta, std::int64_t rows, const ref::Options& options,
                    const ref::GraphMarks& marks) {
  if (rows != meta.num_tokens()) {
    fail(ref::Errc::length_mismatch, "rows",
         std::to_string(rows) + " packed rows given, the layout's samples hold " + std::to_string(meta.num_tokens()));
  }
  const std::int64_t cp = options.cp_world_size;
  const bool graphs = options.pad_for_cuda_graphs;
  const std::int64_t len_causal = meta.num_causal_tokens;
  const std::int64_t len_full = meta.num_full_tokens;
  const auto causal_padded = [&](std::int64_t n) {
    return padded_size(n, cp, graphs, options.causal_seq_alignment, "causal_seq", "options.causal_seq_alignment");
  };
  const auto full_padded = [&](std::int64_t n) {
    return padded_size(n, cp, graphs, options.full_seq_alignment, "full_only_seq", "options.full_seq_alignment");
  };

  // Supported when both streams have the same, non-zero number of splits.
  const std::size_t causal_splits = meta.causal_seq_offsets.size() - 1;
  const std::size_t full_splits = meta.full_only_seq_offsets.size() - 1;
  bool pad_segment = causal_splits == full_splits && causal_splits != 0;
  // Only when padded anyway. CUDA graphs first: the unpadded sizes, and their
  // errors, are not looked at then (the reference's order).
  if (pad_segment && options.pad_segment_only_when_padded) {
    pad_segment = graphs || causal_padded(len_causal) != len_causal || full_padded(len_full) != len_full;
  }
  // With a pad segment each stream needs a row more, so the segment is never empty.
  const std::int64_t reserve = pad_segment ? 1 : 0;
  PackShape shape;
  shape.causal_len = causal_padded(len_causal + reserve);
  shape.full_len = full_padded(len_full + reserve);
  shape.marks_after = marks;
  if (graphs) {
    // The spec's _grow_cuda_graph_bounds: the marks only grow, and become the lengths.
    const bool image = options.is_image_batch;
    std::int64_t& mark_causal = image ? shape.marks_after.image_causal : shape.marks_after.video_causal;
    std::int64_t& mark_full = image ? shape.marks_after.image_full : shape.marks_after.video_full;
    mark_causal = std::max(mark_causal, shape.causal_len);
    mark_full = std::max(mark_full, shape.full_len);
    shape.causal_len = mark_as_length(mark_causal, image, "causal");
    shape.full_len = mark_as_length(mark_full, image, "full");
  }

  const std::int64_t pad_causal = shape.causal_len - len_causal;
  const std::int64_t pad_full = shape.full_len - len_full;
  if (pad_segment && (pad_causal > 0 || pad_full > 0)) {
    const std::int64_t interleaved = shape.causal_len + shape.full_len;
    if (interleaved > kInt32Max) {
      fail(ref::Errc::overflow, "sample_offsets",
           "the pad segment would end sample_offsets at " + std::to_string(interleaved) + " rows (" +
               std::to_string(shape.causal_len) + " causal + " + std::to_string(shape.full_len) + " full), past int32");
    }
    // The segment pairs each sample's keys with its one full split.
    if (static_cast<std::size_t>(meta.num_samples()) != full_splits) {
      fail(ref::Errc::pad_segment_pairing, "split_lens",
           "a pad segment needs one full split per sample; the layout has " + std::to_string(full_splits) +
               " full splits for " + std::to_string(meta.num_samples()) + " samples");
    }
    ref::PadSegment seg;
    seg.causal_seq_offsets = append_pad_segment(meta.causal_seq_offsets, shape.causal_len);
    seg.max_causal_len = static_cast<std::int32_t>(std::max<std::int64_t>(meta.max_causal_len, pad_causal));
    seg.full_only_seq_offsets = append_pad_segment(meta.full_only_seq_offsets, shape.full_len);
    seg.max_full_len = static_cast<std::int32_t>(std::max<std::int64_t>(meta.max_full_len, pad_full));
    seg.sample_offsets = append_pad_segment(meta.sample_offsets, interleaved);
    seg.max_sample_len = static_cast<std::int32_t>(std::max<std::int64_t>(meta.max_sample_len, pad_causal + pad_full));
    shape.pad_segment = std::move(seg);
  }
  return shape;
}

}  // namespace detail

DevicePack build_pack(const DeviceRows& packed, const reference::Layout& layout, const reference::Options& options,
                      reference::GraphMarks& marks, std::shared_ptr<const DeviceMetadata> prepared, Stream s) {
  // Every check runs on the host before any device work, in PROTOCOL.md's order.
  detail::validate_options(options, marks);
  std::optional<detail::LayoutSummary> fresh;
  if (prepared) {
    // As the spec: the und indexes of a prepared layout are not looked at again.
    if (!detail::describes(prepared->summary, layout)) {
      detail::fail(ref::Errc::metadata_mismatch, "prepared_metadata",
                   "was prepared for another layout (sample and split lengths, modes) than this one");
    }
  } else {
    detail::validate_layout(layout);
    const std::uint64_t rows = detail::total_rows(layout.sample_lens);
    if (rows != packed.rows) {
      detail::fail(ref::Errc::length_mismatch, "rows",
                   std::to_string(packed.rows) + " packed rows given, the layout's samples hold " +
                       (rows == UINT64_MAX ? std::string("more than 2^64 - 1") : std::to_string(rows)));
    }
    fresh = detail::summarize_layout(layout);
  }
  const ref::Metadata& m = prepared ? prepared->summary : fresh->summary;
  detail::PackShape shape = detail::plan_pack(m, static_cast<std::int64_t>(packed.rows), options, marks);

  const std::size_t width = packed.row_bytes;
  const detail::SerialWhenSmall scope(static_cast<std::size_t>(shape.causal_len + shape.full_len) * (width + 8));
  std::shared_ptr<const DeviceMetadata> meta =
      prepared ? std::move(prepared)
               : std::make_shared<const DeviceMetadata>(detail::expand_metadata(std::move(*fresh), s));
  const std::int64_t len_causal = meta->summary.num_causal_tokens, len_full = meta->summary.num_full_tokens;
  DevicePack pack;
  pack.max_num_tokens = meta->summary.num_tokens();
  pack.causal_seq = detail::output_rows(static_cast<std::size_t>(shape.causal_len), width, s);
  pack.full_only_seq = detail::output_rows(static_cast<std::size_t>(shape.full_len), width, s);
  detail::move_rows(packed, pack.causal_seq, meta->causal_indices, false, s);
  detail::move_rows(packed, pack.full_only_seq, meta->full_indices, false, s);
  detail::zero_tail(pack.causal_seq, static_cast<std::size_t>(len_causal), s);
  detail::zero_tail(pack.full_only_seq, static_cast<std::size_t>(len_full), s);
  // Padding rows belong to no sample: they carry the sample count.
  const std::int64_t pad_id = meta->summary.num_samples();
  pack.causal_sample_ids = detail::output_ids<std::int64_t>(static_cast<std::size_t>(shape.causal_len), s);
  pack.full_only_sample_ids = detail::output_ids<std::int64_t>(static_cast<std::size_t>(shape.full_len), s);
  thrust::copy(detail::exec(s), meta->causal_sample_ids.begin(), meta->causal_sample_ids.end(),
               pack.causal_sample_ids.begin());
  thrust::fill(detail::exec(s), pack.causal_sample_ids.begin() + len_causal, pack.causal_sample_ids.end(), pad_id);
  thrust::copy(detail::exec(s), meta->full_only_sample_ids.begin(), meta->full_only_sample_ids.end(),
               pack.full_only_sample_ids.begin());
  thrust::fill(detail::exec(s), pack.full_only_sample_ids.begin() + len_full, pack.full_only_sample_ids.end(), pad_id);
  pack.pad_segment = std::move(shape.pad_segment);
  pack.meta = std::move(meta);
  detail::check_device("build_pack", s);
  marks = shape.marks_after;
  return pack;
}

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
