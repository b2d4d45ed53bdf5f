// The packer profile's layouts (NOTES.md section 2): samples of causal and
// full splits with free, edge-directed, aligned and long streams. The
// boundary-directed draws are in generators_edges.cpp, the strict profile's
// layouts in generators_strict.cpp, the entry points in generators.cpp.
#include "generators_internal.hpp"
#include "seqpack/properties/spec.hpp"

namespace seqpack::properties::detail {
namespace {

enum class Size { free, edge, aligned, long_stream };

}  // namespace

Case packer_case() {
  Case c;
  const bool pairs = coin(3, 1);
  const auto samples = static_cast<std::size_t>(
      *gen::weightedOneOf<int>({{6, gen::inRange(2, 9)}, {2, gen::just(1)}, {1, gen::inRange(64, 81)}}));
  const Size size =
      *gen::weightedElement<Size>({{8, Size::free}, {5, Size::edge}, {2, Size::aligned}, {1, Size::long_stream}});
  c.options = gen_options(pairs);
  c.marks = gen_marks();
  auto& o = c.options;

  I64 causal(samples, 0), full(samples, 0);
  switch (size) {
    case Size::free:
      for (auto& v : causal) v = short_len(12);
      for (auto& v : full) v = short_len(40);
      break;
    case Size::edge: {
      // Boundary-directed: one stream or both on, one below or one above an
      // edge of their own alignment (the stream's need counts the pad
      // segment's row), mostly with graphs and without earlier marks, which
      // would hide the edge.
      o.cp_world_size = *gen::weightedOneOf<std::int64_t>(
          {{2, gen::just<std::int64_t>(1)}, {3, gen::element<std::int64_t>(2, 3, 4, 5, 6, 7, 8, 12, 16)}});
      o.causal_seq_alignment = edge_alignment(o.cp_world_size);
      o.full_seq_alignment = coin(1, 2) ? o.causal_seq_alignment : edge_alignment(o.cp_world_size);
      o.pad_for_cuda_graphs = coin(3, 1);
      // With graphs a due segment stays whatever the flag (NOTES.md 4.5), so
      // the reserved row is known before the lengths are.
      o.pad_segment_only_when_padded = pairs && o.pad_for_cuda_graphs && coin(1, 2);
      const std::int64_t reserve = pairs ? 1 : 0;
      const auto edge_total = [&](std::int64_t& a) {
        std::int64_t total = 0;
        std::tie(a, total) = edge_stream(a, o.cp_world_size, o.pad_for_cuda_graphs, reserve);
        return total;
      };
      enum { on_full, on_causal, on_both };
      const int on = pairs ? *gen::weightedElement<int>({{2, on_full}, {1, on_causal}, {1, on_both}}) : on_full;
      if (on == on_full) {
        for (auto& v : causal) v = short_len(12);
      } else {
        causal = spread(edge_total(o.causal_seq_alignment), samples);
      }
      if (on == on_causal) {
        for (auto& v : full) v = short_len(40);
      } else {
        full = spread(edge_total(o.full_seq_alignment), samples);
      }
      if (coin(3, 1)) c.marks = {};
      break;
    }
    case Size::aligned: {
      // Streams already aligned: the case where pad_segment_only_when_padded
      // matters. Without graphs nothing is padded and no segment is due; with
      // them the streams are whole buckets (to the 2048 tier) and the segment
      // stays (graphs pad anyway).
      o.pad_segment_only_when_padded = pairs;
      o.pad_for_cuda_graphs = coin(1, 1);
      o.cp_world_size = o.pad_for_cuda_graphs ? *gen::element<std::int64_t>(1, 1, 2, 3, 4, 6, 8)
                                              : *gen::element<std::int64_t>(1, 1, 2, 3, 4, 5, 6, 8);
      // Under graphs, odd parts of at most 3 keep a whole bucket of the 2048
      // tier within 6144 rows.
      const auto aligned_alignment = [&] {
        return o.pad_for_cuda_graphs ? *gen::element<std::int64_t>(1, 2, 3, 6, 12, 64, 96, 128, 256)
                                     : *gen::element<std::int64_t>(1, 2, 3, 5, 6, 7, 12, 64, 128, 256);
      };
      o.causal_seq_alignment = aligned_alignment();
      o.full_seq_alignment = coin(1, 1) ? o.causal_seq_alignment : aligned_alignment();
      causal = spread(aligned_total(o.causal_seq_alignment, o.cp_world_size, o.pad_for_cuda_graphs, true), samples);
      full = spread(aligned_total(o.full_seq_alignment, o.cp_world_size, o.pad_for_cuda_graphs, false), samples);
      if (coin(1, 1)) c.marks = {};
      break;
    }
    case Size::long_stream:
      for (auto& v : causal) v = short_len(30);
      full = spread(*gen::inRange<std::int64_t>(20001, 24000), samples);
      break;
  }

  for (std::size_t s = 0; s < samples; ++s) {
    if (pairs) {
      c.layout.attn_modes.insert(c.layout.attn_modes.end(), {"causal", "full"});
      c.layout.split_lens.insert(c.layout.split_lens.end(), {causal[s], full[s]});
      c.layout.sample_lens.push_back(causal[s] + full[s]);
    } else {
      c.layout.attn_modes.push_back("full");
      c.layout.split_lens.push_back(full[s]);
      c.layout.sample_lens.push_back(full[s]);
    }
  }
  list_und_tokens(c);
  maybe_unorder_und(c);
  c.rows = sum(c.layout.sample_lens);
  c.row_bytes = *gen::element<std::size_t>(1, 2, 4, 8, 16, 3, 12);
  c.data_seed = *gen::arbitrary<std::uint64_t>();
  return c;
}

}  // namespace seqpack::properties::detail
