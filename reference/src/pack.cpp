// Building a pack: lengths, pad segment, graph marks, then the row gathers.
#include "seqpack/reference/pack.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "row_copy.hpp"
#include "seqpack/common/index_math.hpp"
#include "seqpack/reference/errors.hpp"
#include "seqpack/reference/metadata.hpp"
#include "seqpack/reference/padding.hpp"

namespace seqpack::reference {
namespace {

using common::kInt32Max;

std::int64_t checked_mark(std::int64_t mark, const char* field) {
  if (mark > kInt32Max) {
    throw Error(Errc::overflow, field, "graph mark " + std::to_string(mark) + " is used as a length, past int32");
  }
  return mark;
}

std::vector<std::int32_t> with_end(std::vector<std::int32_t> offsets, std::int64_t end) {
  offsets.push_back(static_cast<std::int32_t>(end));
  return offsets;
}

// Copies meta's rows of `indices` out of `packed` into the first rows of `out`.
void gather_rows(const Rows& packed, const std::vector<std::int32_t>& indices, Rows& out) {
  const std::size_t width = packed.row_bytes();
  if (width == 0) return;
  for (std::size_t i = 0; i < indices.size(); ++i) {
    detail::copy_row(out.row(i), packed.row(static_cast<std::size_t>(indices[i])), width);
  }
}

std::vector<std::int64_t> padded_ids(const std::vector<std::int64_t>& ids, std::int64_t len, std::int64_t pad_id) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(len), pad_id);
  std::copy(ids.begin(), ids.end(), out.begin());
  return out;
}

}  // namespace

PackShape plan_pack(const Metadata& meta, std::int64_t rows, const Options& options, const GraphMarks& marks) {
  validate_options(options, marks);
  if (rows != meta.num_tokens()) {
    throw Error(Errc::length_mismatch, "rows",
                "the packed sequence has " + std::to_string(rows) + " rows but sample_lens sum to " +
                    std::to_string(meta.num_tokens()));
  }
  const std::int64_t cp = options.cp_world_size;
  const bool graphs = options.pad_for_cuda_graphs;
  const std::int64_t len_causal = meta.num_causal_tokens;
  const std::int64_t len_full = meta.num_full_tokens;
  const auto causal_padded = [&](std::int64_t n) {
    return detail::padded_size(n, cp, graphs, options.causal_seq_alignment, "causal_seq",
                               "options.causal_seq_alignment");
  };
  const auto full_padded = [&](std::int64_t n) {
    return detail::padded_size(n, cp, graphs, options.full_seq_alignment, "full_only_seq",
                               "options.full_seq_alignment");
  };

  // The pad segment pairs the streams split for split: same, non-zero split
  // count on both (full-only packs never carry one).
  const std::size_t causal_splits = meta.causal_seq_offsets.size() - 1;
  const std::size_t full_splits = meta.full_only_seq_offsets.size() - 1;
  bool pad_segment = causal_splits == full_splits && causal_splits > 0;
  if (pad_segment && options.pad_segment_only_when_padded) {
    pad_segment = graphs || causal_padded(len_causal) != len_causal || full_padded(len_full) != len_full;
  }
  // One reserved row per stream keeps the pad segment non-empty on both sides.
  const std::int64_t reserve = pad_segment ? 1 : 0;
  std::int64_t need_causal = causal_padded(len_causal + reserve);
  std::int64_t need_full = full_padded(len_full + reserve);

  PackShape shape;
  shape.marks_after = marks;
  if (graphs) {
    // The marks become the lengths as they are, not re-rounded (as _grow_cuda_graph_bounds).
    std::int64_t& mark_causal =
        options.is_image_batch ? shape.marks_after.image_causal : shape.marks_after.video_causal;
    std::int64_t& mark_full = options.is_image_batch ? shape.marks_after.image_full : shape.marks_after.video_full;
    mark_causal = std::max(mark_causal, need_causal);
    mark_full = std::max(mark_full, need_full);
    need_causal =
        checked_mark(mark_causal, options.is_image_batch ? "graph_bounds.image.causal" : "graph_bounds.video.causal");
    need_full = checked_mark(mark_full, options.is_image_batch ? "graph_bounds.image.full" : "graph_bounds.video.full");
  }
  shape.causal_len = need_causal;
  shape.full_len = need_full;

  if (pad_segment) {
    // Both pads are >= 1 here (the reserved row), so the segment is never empty.
    const std::int64_t pad_causal = need_causal - len_causal;
    const std::int64_t pad_full = need_full - len_full;
    if (need_causal + need_full > kInt32Max) {
      throw Error(Errc::overflow, "sample_offsets",
                  "padded streams of " + std::to_string(need_causal) + " + " + std::to_string(need_full) +
                      " rows give a pad-segment sample offset past int32");
    }
    if (meta.num_samples() != static_cast<std::int64_t>(full_splits)) {
      throw Error(Errc::pad_segment_pairing, "split_lens",
                  "a pad segment is due but the layout has " + std::to_string(meta.num_samples()) + " samples and " +
                      std::to_string(full_splits) + " full splits; it needs one full split per sample");
    }
    PadSegment seg;
    seg.causal_seq_offsets = with_end(meta.causal_seq_offsets, need_causal);
    seg.max_causal_len = static_cast<std::int32_t>(std::max<std::int64_t>(meta.max_causal_len, pad_causal));
    seg.full_only_seq_offsets = with_end(meta.full_only_seq_offsets, need_full);
    seg.max_full_len = static_cast<std::int32_t>(std::max<std::int64_t>(meta.max_full_len, pad_full));
    seg.sample_offsets = with_end(meta.sample_offsets, need_causal + need_full);
    seg.max_sample_len = static_cast<std::int32_t>(std::max<std::int64_t>(meta.max_sample_len, pad_causal + pad_full));
    shape.pad_segment = std::move(seg);
  }
  return shape;
}

Pack build_pack(const Rows& packed, const Layout& layout, const Options& options, GraphMarks& marks,
                std::shared_ptr<const Metadata> prepared) {
  validate_options(options, marks);
  std::shared_ptr<const Metadata> meta;
  if (prepared) {
    if (!prepared->matches_layout(layout)) {
      throw Error(Errc::metadata_mismatch, "prepared_metadata",
                  "the prepared metadata describes another layout than the one given");
    }
    meta = std::move(prepared);
  } else {
    validate_layout(layout);
    // Compared before the metadata's own overflow check (protocol order);
    // saturating, since a valid layout's lengths may sum past int64.
    std::int64_t sum = 0;
    for (const std::int64_t len : layout.sample_lens) sum = len > INT64_MAX - sum ? INT64_MAX : sum + len;
    if (static_cast<std::uint64_t>(sum) != packed.rows()) {
      throw Error(Errc::length_mismatch, "rows",
                  "the packed sequence has " + std::to_string(packed.rows()) + " rows but sample_lens sum to " +
                      (sum == INT64_MAX ? std::string("more than int64") : std::to_string(sum)));
    }
    meta = std::make_shared<const Metadata>(prepare_metadata(layout));
  }

  PackShape shape = plan_pack(*meta, static_cast<std::int64_t>(packed.rows()), options, marks);

  Pack pack;
  pack.max_num_tokens = meta->num_tokens();
  pack.causal_seq = Rows(static_cast<std::size_t>(shape.causal_len), packed.row_bytes());
  pack.full_only_seq = Rows(static_cast<std::size_t>(shape.full_len), packed.row_bytes());
  gather_rows(packed, meta->causal_indices, pack.causal_seq);
  gather_rows(packed, meta->full_indices, pack.full_only_seq);
  // Padding rows belong to no sample: they carry the sample count.
  pack.causal_sample_ids = padded_ids(meta->causal_sample_ids, shape.causal_len, meta->num_samples());
  pack.full_only_sample_ids = padded_ids(meta->full_only_sample_ids, shape.full_len, meta->num_samples());
  pack.pad_segment = std::move(shape.pad_segment);
  pack.meta = std::move(meta);
  marks = shape.marks_after;
  return pack;
}

}  // namespace seqpack::reference
