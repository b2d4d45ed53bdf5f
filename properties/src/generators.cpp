// RapidCheck generators for cases, with the edges of the catalogue on purpose:
// the public entry points (generators.hpp) and the draws that every profile
// shares (options, marks, lengths). The profiles' layouts are in
// generators_packer.cpp and generators_strict.cpp, the boundary-directed
// draws in generators_edges.cpp, the classes of a case in
// generators_classes.cpp; generators_internal.hpp declares what they share.
#include "seqpack/properties/generators.hpp"

#include <algorithm>
#include <numeric>

#include "generators_internal.hpp"
#include "seqpack/properties/spec.hpp"

namespace seqpack::properties {
namespace detail {

std::int64_t sum(const I64& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }

Wide wide_sum(const I64& v) {
  Wide s = 0;
  for (const std::int64_t x : v) s += x;
  return s;
}

// True `yes` times in `yes + no`.
bool coin(int yes, int no) { return *gen::weightedElement<bool>({{yes, true}, {no, false}}); }

// The spec treats the und indexes as a set (NOTES.md 4.1): one case in four
// sends them out of order, reversed or odd positions first, so that a port
// that assumes ascending indexes (refuses them, or checks range or repeats on
// neighbours only) is seen. Reversed moves a fault planted at the list's end
// to its front; odd positions first moves it to the middle of an even-length
// list. The choice is a hash of the layout, not a draw, so that the other
// fields of a seed's case do not change (an und_repeated fault copies its
// index from the reordered list).
void maybe_unorder_und(Case& c) {
  auto& und = c.layout.und_token_indexes;
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const std::int64_t len : c.layout.split_lens) h = (h ^ static_cast<std::uint64_t>(len)) * 0x100000001b3ull;
  h = (h ^ und.size()) * 0x100000001b3ull;
  switch ((h >> 29) % 8) {
    case 1:
      und = und_in_order(std::move(und), UndOrder::reversed);
      break;
    case 2:
      und = und_in_order(std::move(und), UndOrder::odd_first);
      break;
    default:
      break;
  }
}

// `total` rows spread over `parts` lengths (some may be 0).
I64 spread(std::int64_t total, std::size_t parts) {
  if (parts == 0) return {};
  I64 cuts = *gen::container<I64>(parts - 1, gen::inRange<std::int64_t>(0, total + 1));
  std::sort(cuts.begin(), cuts.end());
  I64 out;
  std::int64_t prev = 0;
  for (const std::int64_t c : cuts) {
    out.push_back(c - prev);
    prev = c;
  }
  out.push_back(total - prev);
  return out;
}

// Short split lengths with a fair share of zeros.
std::int64_t short_len(std::int64_t max) {
  return *gen::weightedOneOf<std::int64_t>(
      {{1, gen::just<std::int64_t>(0)}, {4, gen::inRange<std::int64_t>(1, max + 1)}});
}

namespace {

std::int64_t alignment_for(std::int64_t cp) {
  return *gen::weightedOneOf<std::int64_t>({
      {4, gen::just<std::int64_t>(1)},
      {4, gen::element<std::int64_t>(2, 3, 4, 5, 6, 7, 8, 12, 16, 64, 96, 128, 129, 256)},
      {1, gen::map(gen::inRange<std::int64_t>(1, 5), [cp](std::int64_t k) { return k * cp; })},
  });
}

}  // namespace

reference::Options gen_options(bool pairs) {
  reference::Options o;
  o.cp_world_size =
      *gen::weightedOneOf<std::int64_t>({{3, gen::just<std::int64_t>(1)}, {3, gen::inRange<std::int64_t>(2, 17)}});
  o.causal_seq_alignment = alignment_for(o.cp_world_size);
  o.full_seq_alignment = coin(1, 2) ? o.causal_seq_alignment : alignment_for(o.cp_world_size);
  o.pad_for_cuda_graphs = coin(1, 2);
  o.is_image_batch = *gen::arbitrary<bool>();
  o.pad_segment_only_when_padded = pairs && coin(1, 2);
  return o;
}

namespace {

// Marks as earlier calls leave them: padded lengths of other batches, under
// other cp sizes and alignments.
std::int64_t earlier_mark() {
  const std::int64_t n = *gen::inRange<std::int64_t>(1, 20000);
  const std::int64_t cp = *gen::inRange<std::int64_t>(1, 9);
  const std::int64_t a = *gen::element<std::int64_t>(1, 2, 7, 64, 128);
  return spec_padded(n, cp, true, a);
}

}  // namespace

reference::GraphMarks gen_marks() {
  if (coin(3, 2)) return {};
  const auto mark = [] { return coin(2, 1) ? earlier_mark() : 0; };
  reference::GraphMarks m;
  m.image_causal = mark();
  m.image_full = mark();
  m.video_causal = mark();
  m.video_full = mark();
  return m;
}

}  // namespace detail

using detail::packer_case;
using detail::planted_case;
using detail::precedence_case;
using detail::split_counts;
using detail::SplitCounts;
using detail::unusual_case;
namespace gen = rc::gen;

std::vector<std::int64_t> und_in_order(std::vector<std::int64_t> ascending, UndOrder order) {
  switch (order) {
    case UndOrder::reversed:
      std::reverse(ascending.begin(), ascending.end());
      return ascending;
    case UndOrder::odd_first: {
      std::vector<std::int64_t> out;
      out.reserve(ascending.size());
      for (const std::size_t first : {std::size_t{1}, std::size_t{0}}) {
        for (std::size_t i = first; i < ascending.size(); i += 2) out.push_back(ascending[i]);
      }
      return out;
    }
    case UndOrder::ascending:
      break;
  }
  return ascending;
}

std::optional<UndOrder> und_order_of(const std::vector<std::int64_t>& und, const std::vector<std::int64_t>& ascending) {
  for (const UndOrder order : {UndOrder::ascending, UndOrder::reversed, UndOrder::odd_first}) {
    if (und == und_in_order(ascending, order)) return order;
  }
  return std::nullopt;
}

rc::Gen<Case> gen_packer_case() {
  return gen::weightedOneOf<Case>({{16, gen::exec(packer_case)}, {1, gen::exec(unusual_case)}});
}

rc::Gen<Case> gen_strict_case() {
  return gen::weightedOneOf<Case>({{2, gen::exec(packer_case)},
                                   {1, gen::exec(unusual_case)},
                                   {5, gen::exec(planted_case)},
                                   {1, gen::exec(precedence_case)}});
}

rc::Gen<Case> gen_valid_case(Profile profile) {
  if (profile == Profile::packer) return gen_packer_case();
  return gen::weightedOneOf<Case>({{1, gen::exec(packer_case)}, {1, gen::exec(unusual_case)}});
}

rc::Gen<Case> gen_case(Profile profile) { return profile == Profile::packer ? gen_packer_case() : gen_strict_case(); }

std::pair<std::int64_t, std::int64_t> stream_needs(const Case& c) {
  const auto& L = c.layout;
  const auto& o = c.options;
  std::int64_t causal = 0, full = 0;
  for (std::size_t j = 0; j < std::min(L.split_lens.size(), L.attn_modes.size()); ++j) {
    (L.attn_modes[j] == "causal" ? causal : full) += L.split_lens[j];
  }
  const SplitCounts n = split_counts(L);
  bool segment = n.causal == n.full && n.full > 0;
  if (segment && o.pad_segment_only_when_padded) {
    segment = o.pad_for_cuda_graphs || spec_padded(causal, o.cp_world_size, false, o.causal_seq_alignment) != causal ||
              spec_padded(full, o.cp_world_size, false, o.full_seq_alignment) != full;
  }
  const std::int64_t reserve = segment ? 1 : 0;
  return {causal + reserve, full + reserve};
}

}  // namespace seqpack::properties
