// Building a pack from a packed sequence (the original's
// sequence_pack_from_packed_sequence).
#pragma once

#include <memory>
#include <optional>

#include "seqpack/reference/types.hpp"

namespace seqpack::reference {

/// What a build decides before any row moves: the padded stream lengths, the
/// pad segment, and the graph marks after the call.
struct PackShape {
  std::int64_t causal_len = 0;  ///< padded causal stream rows
  std::int64_t full_len = 0;    ///< padded full stream rows
  std::optional<PadSegment> pad_segment;
  GraphMarks marks_after;
};

/// Decides a build's lengths from validated metadata, a packed row count, the
/// options and the marks before the call. Checks, in order: invalid_option,
/// length_mismatch, overflow, pad_segment_pairing. Pure: the marks are returned,
/// not written.
PackShape plan_pack(const Metadata& meta, std::int64_t rows, const Options& options, const GraphMarks& marks);

/// Builds a pack. `packed` holds sum(sample_lens) rows of any width. Without
/// `prepared`, the layout is validated and its metadata built; with it, the
/// metadata must describe `layout` (metadata_mismatch) and its und indexes are
/// not looked at, as in the original. On success the marks are raised as the
/// original raises its globals; on any error they are left untouched (the
/// original has already raised them when its pairing assertion fires).
Pack build_pack(const Rows& packed, const Layout& layout, const Options& options, GraphMarks& marks,
                std::shared_ptr<const Metadata> prepared = nullptr);

}  // namespace seqpack::reference
