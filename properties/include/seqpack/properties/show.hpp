// RapidCheck printers (showValue, found by argument-dependent lookup) for
// the reference's domain types, so that a failing RC_ASSERT(a == b) prints
// both sides instead of `<???>`: shapes and the first values, bounded, and
// for two values of a type the first index where they differ is what the
// eye needs (RapidCheck prints each side in full otherwise).
#pragma once

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <vector>

#include "seqpack/reference/types.hpp"

namespace seqpack::reference {
namespace show_detail {

/// At most this many values of a list are printed, then its length.
inline constexpr std::size_t kShown = 24;

template <typename T>
void list(std::ostream& os, const std::vector<T>& v) {
  os << "[";
  for (std::size_t i = 0; i < v.size() && i < kShown; ++i) os << (i ? "," : "") << v[i];
  if (v.size() > kShown) os << ",... (" << v.size() << " values)";
  os << "]";
}

}  // namespace show_detail

inline void showValue(const GraphMarks& m, std::ostream& os) {
  os << "{image: [" << m.image_causal << ", " << m.image_full << "], video: [" << m.video_causal << ", " << m.video_full
     << "]}";
}

inline void showValue(const Options& o, std::ostream& os) {
  os << "{cp_world_size: " << o.cp_world_size << ", pad_for_cuda_graphs: " << o.pad_for_cuda_graphs
     << ", is_image_batch: " << o.is_image_batch << ", full_seq_alignment: " << o.full_seq_alignment
     << ", causal_seq_alignment: " << o.causal_seq_alignment
     << ", pad_segment_only_when_padded: " << o.pad_segment_only_when_padded << "}";
}

inline void showValue(const Layout& l, std::ostream& os) {
  os << "{sample_lens: ";
  show_detail::list(os, l.sample_lens);
  os << ", split_lens: ";
  show_detail::list(os, l.split_lens);
  os << ", attn_modes: [";
  for (std::size_t i = 0; i < l.attn_modes.size() && i < show_detail::kShown; ++i)
    os << (i ? "," : "") << l.attn_modes[i];
  os << (l.attn_modes.size() > show_detail::kShown ? ",...]" : "]") << ", und_token_indexes: ";
  show_detail::list(os, l.und_token_indexes);
  os << "}";
}

inline void showValue(const PadSegment& p, std::ostream& os) {
  os << "PadSegment{causal offsets ";
  show_detail::list(os, p.causal_seq_offsets);
  os << " max " << p.max_causal_len << ", full offsets ";
  show_detail::list(os, p.full_only_seq_offsets);
  os << " max " << p.max_full_len << ", sample offsets ";
  show_detail::list(os, p.sample_offsets);
  os << " max " << p.max_sample_len << "}";
}

inline void showValue(const PositionIds& p, std::ostream& os) {
  os << "PositionIds{" << (p.two_dimensional ? "2-D" : "1-D") << ", axes " << p.axes << ", len " << p.len
     << ", values ";
  show_detail::list(os, p.values);
  os << "}";
}

/// Rows: the shape and the first rows' first four bytes as a little-endian
/// row id (the suites' self-naming rows: r + 1, 0 for padding).
inline void showValue(const Rows& r, std::ostream& os) {
  os << "Rows{" << r.rows() << " x " << r.row_bytes() << " bytes";
  if (r.row_bytes() >= 4) {
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < r.rows() && i < show_detail::kShown; ++i) {
      std::uint32_t v = 0;
      for (int b = 3; b >= 0; --b) v = (v << 8) | static_cast<std::uint8_t>(r.row(i)[b]);
      ids.push_back(static_cast<std::int64_t>(v) - 1);
    }
    os << ", row ids ";
    show_detail::list(os, ids);
    if (r.rows() > show_detail::kShown) os << " (first " << show_detail::kShown << ")";
  }
  os << "}";
}

}  // namespace seqpack::reference
