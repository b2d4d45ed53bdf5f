// RapidCheck generators for cases, with the edges of the catalogue on purpose.
#include "seqpack/properties/generators.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "seqpack/properties/spec.hpp"

namespace seqpack::properties {
namespace {

namespace gen = rc::gen;
using I64 = std::vector<std::int64_t>;
__extension__ typedef __int128 Wide;  // sums of int64 lengths, exact

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

std::int64_t alignment_for(std::int64_t cp) {
  return *gen::weightedOneOf<std::int64_t>({
      {4, gen::just<std::int64_t>(1)},
      {4, gen::element<std::int64_t>(2, 3, 4, 5, 6, 7, 8, 12, 16, 64, 96, 128, 129, 256)},
      {1, gen::map(gen::inRange<std::int64_t>(1, 5), [cp](std::int64_t k) { return k * cp; })},
  });
}

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

// Marks as earlier calls leave them: padded lengths of other batches, under
// other cp sizes and alignments.
std::int64_t earlier_mark() {
  const std::int64_t n = *gen::inRange<std::int64_t>(1, 20000);
  const std::int64_t cp = *gen::inRange<std::int64_t>(1, 9);
  const std::int64_t a = *gen::element<std::int64_t>(1, 2, 7, 64, 128);
  return spec_padded(n, cp, true, a);
}

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

// --- edges of the padding arithmetic ------------------------------------------

// Alignments of the edge cases, mostly not powers of two: an edge shows a
// fault only where lcm(alignment, cp) does not divide it (`n < 2048` for
// `n <= 2048` shows only where its odd part is 7 or at least 17).
std::int64_t edge_alignment(std::int64_t cp) {
  return *gen::weightedOneOf<std::int64_t>({
      {1, gen::just<std::int64_t>(1)},
      {2, gen::element<std::int64_t>(2, 4, 8, 16, 64, 128, 256)},
      {6, gen::element<std::int64_t>(3, 5, 6, 7, 9, 12, 14, 21, 24, 96, 129, 384, 896)},
      {1, gen::map(gen::inRange<std::int64_t>(1, 5), [cp](std::int64_t k) { return k * cp; })},
  });
}

// The bucket's tiers, (low, high] rows; the last one past 16384 (bucket 2048).
struct Tier {
  std::int64_t low, high;
};
constexpr Tier kTiers[] = {{0, 2048}, {2048, 4096}, {4096, 8192}, {8192, 16384}, {16384, 24576}};

// A stream need (its rows plus the pad segment's reserved row) on, one below
// or one above an edge of the padding arithmetic under alignment `a` and cp:
// a tier boundary of the bucket, a multiple of the bucket's step (lcm with
// the alignment and cp) inside a tier, or a multiple of the effective
// alignment lcm(a, cp) (with graphs, half of them of the step at that size).
std::int64_t edge_need(std::int64_t a, std::int64_t cp, bool graphs) {
  std::int64_t at = 0;
  switch (*gen::weightedElement<int>({{4, 0}, {2, 1}, {3, 2}})) {
    case 0:
      at = *gen::weightedElement<std::int64_t>({{4, 2048}, {2, 4096}, {1, 8192}, {1, 16384}});
      break;
    case 1: {
      const Tier t = kTiers[*gen::weightedElement<std::size_t>({{3, 0}, {2, 1}, {1, 2}, {1, 3}, {1, 4}})];
      std::int64_t step = spec_step(t.high, cp, true, a);
      if (step > t.high - t.low) step = spec_bucket(t.high);  // one multiple or none: the bucket's own
      at = step * *gen::inRange<std::int64_t>(t.low / step + 1, t.high / step + 1);
      break;
    }
    default: {
      std::int64_t e = spec_lcm(a, cp);
      const std::int64_t target =
          coin(1, 1) ? std::min(e * *gen::inRange<std::int64_t>(1, 9), std::max<std::int64_t>(e, 24576))
                     : *gen::inRange<std::int64_t>(1, 8193);
      if (graphs && coin(1, 1)) {
        const std::int64_t step = spec_step(target, cp, true, a);
        if (step <= 24576) e = step;
      }
      at = std::max<std::int64_t>(1, target / e) * e;
      break;
    }
  }
  return at + *gen::weightedElement<std::int64_t>({{2, 0}, {1, -1}, {1, 1}});
}

// A stream's alignment and rows for a boundary-directed case: its need (rows
// plus `reserve`) on an edge (edge_need), with the padded stream kept within
// three times the need plus 8192 rows; a large odd alignment times the bucket
// and cp (129 x 7 x 1024) would pad it to a million rows. Such an alignment
// gives way to a small one, then to 1 (and the edge is drawn again).
std::pair<std::int64_t, std::int64_t> edge_stream(std::int64_t a, std::int64_t cp, bool graphs, std::int64_t reserve) {
  for (int attempt = 0;; ++attempt) {
    const std::int64_t need = std::max(reserve, edge_need(a, cp, graphs));
    if (attempt == 2 || spec_padded(need, cp, graphs, a) <= 3 * need + 8192) return {a, need - reserve};
    a = attempt == 0 ? *gen::element<std::int64_t>(3, 5, 6, 7, 12) : 1;
  }
}

// A stream length on a multiple of everything that pads it: lcm(alignment,
// cp), and with graphs the bucket of the length itself (up to the 2048 tier;
// the caller keeps lcm(alignment, cp) small there).
std::int64_t aligned_total(std::int64_t a, std::int64_t cp, bool graphs, bool may_be_empty) {
  if (may_be_empty && coin(1, 4)) return 0;
  if (!graphs) return spec_lcm(a, cp) * *gen::inRange<std::int64_t>(1, 6);
  const std::int64_t target = *gen::weightedOneOf<std::int64_t>(
      {{1, gen::inRange<std::int64_t>(1, 2049)}, {2, gen::inRange<std::int64_t>(2049, 20000)}});
  std::int64_t n = spec_padded(target, cp, true, a);
  // Past a tier boundary the bucket doubles: pad again until it holds.
  while (spec_padded(n, cp, true, a) != n) n = spec_padded(n, cp, true, a);
  return n;
}

// --- the packer's layouts ------------------------------------------------------

enum class Size { free, edge, aligned, long_stream };

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

// --- layouts beyond the packer's ------------------------------------------------

// The split modes of each sample (true: full), in packed order.
using Modes = std::vector<std::vector<bool>>;

// [causal, full] samples, k of them.
Modes pair_samples(int k) { return Modes(static_cast<std::size_t>(k), std::vector<bool>{false, true}); }

void insert_anywhere(Modes& m, std::vector<bool> sample) {
  m.insert(m.begin() + *gen::inRange<std::ptrdiff_t>(0, static_cast<std::ptrdiff_t>(m.size()) + 1), std::move(sample));
}

// Layouts whose pad segment cannot pair: as many causal as full splits, but
// not one full split per sample; of several samples if asked.
Modes unpairable_modes(bool several_samples) {
  Modes m;
  const int others = *gen::inRange(several_samples ? 1 : 0, 4);
  switch (*gen::inRange(several_samples ? 1 : 0, 3)) {
    case 0:  // one sample of two or three [causal, full] pairs (NOTES.md 5, E7)
      m.emplace_back();
      for (int k = *gen::inRange(2, 4); k > 0; --k) m[0].insert(m[0].end(), {false, true});
      break;
    case 1:  // a sample without a full split: a causal-only and a full-only sample among pairs
      m = pair_samples(others);
      insert_anywhere(m, {false});
      insert_anywhere(m, {true});
      break;
    default:  // a sample with two full splits among pairs
      m = pair_samples(others);
      insert_anywhere(m, {false, true, false, true});
      break;
  }
  return m;
}

// Any valid mix: per sample 0-3 causal and 0-2 full splits in any order, now
// and then an empty sample without splits; or an unpairable layout.
Modes unusual_modes() {
  if (coin(2, 3)) return unpairable_modes(false);
  Modes m;
  for (int s = *gen::inRange(1, 6); s > 0; --s) {
    if (coin(1, 8)) {
      m.emplace_back();
      continue;
    }
    const int fulls = *gen::weightedElement<int>({{1, 0}, {3, 1}, {1, 2}});
    std::vector<bool> sample(static_cast<std::size_t>(*gen::inRange(fulls == 0 ? 1 : 0, 4)), false);
    for (int f = 0; f < fulls; ++f) {
      sample.insert(sample.begin() + *gen::inRange<std::ptrdiff_t>(0, static_cast<std::ptrdiff_t>(sample.size()) + 1),
                    true);
    }
    m.push_back(std::move(sample));
  }
  return m;
}

// Short lengths for the modes; returns the sample of each split.
std::vector<std::size_t> fill_layout(Case& c, const Modes& modes) {
  c.layout = {};
  std::vector<std::size_t> owner;
  for (std::size_t s = 0; s < modes.size(); ++s) {
    std::int64_t len = 0;
    for (const bool full : modes[s]) {
      const std::int64_t l = short_len(full ? 20 : 6);
      c.layout.attn_modes.push_back(full ? "full" : "causal");
      c.layout.split_lens.push_back(l);
      owner.push_back(s);
      len += l;
    }
    c.layout.sample_lens.push_back(len);
  }
  return owner;
}

struct SplitCounts {
  std::int64_t causal = 0, full = 0, samples = 0;
};

SplitCounts split_counts(const reference::Layout& L) {
  SplitCounts n;
  for (std::size_t j = 0; j < std::min(L.split_lens.size(), L.attn_modes.size()); ++j) {
    (L.attn_modes[j] == "causal" ? n.causal : n.full) += 1;
  }
  n.samples = static_cast<std::int64_t>(L.sample_lens.size());
  return n;
}

// As many causal as full splits (so a pad segment is supported), but not one
// full split per sample: building fails where a segment is due.
bool unpairable(const reference::Layout& L) {
  const SplitCounts n = split_counts(L);
  return n.causal == n.full && n.full > 0 && n.full != n.samples;
}

// Lengthens the last split of each stream to a multiple of lcm(alignment,
// cp), so that neither stream is padded.
void align_streams(Case& c, const std::vector<std::size_t>& owner) {
  auto& L = c.layout;
  for (const bool full : {false, true}) {
    const std::int64_t e =
        spec_lcm(full ? c.options.full_seq_alignment : c.options.causal_seq_alignment, c.options.cp_world_size);
    std::int64_t total = 0;
    std::size_t last = L.split_lens.size();
    for (std::size_t j = 0; j < L.split_lens.size(); ++j) {
      if ((L.attn_modes[j] == "full") != full) continue;
      total += L.split_lens[j];
      last = j;
    }
    if (last == L.split_lens.size()) continue;
    const std::int64_t add = (e - total % e) % e;
    L.split_lens[last] += add;
    L.sample_lens[owner[last]] += add;
  }
}

// Valid layouts beyond the packer's (unusual_modes). An unpairable one is
// valid only where no pad segment is due: under pad_segment_only_when_padded,
// without graphs, on streams already aligned (NOTES.md 4.5, 4.9).
Case unusual_case() {
  Case c = packer_case();  // options, marks, row width and data
  const std::vector<std::size_t> owner = fill_layout(c, unusual_modes());
  if (unpairable(c.layout)) {
    auto& o = c.options;
    o.pad_segment_only_when_padded = true;
    o.pad_for_cuda_graphs = false;
    o.cp_world_size = *gen::element<std::int64_t>(1, 1, 2, 3, 5);
    o.causal_seq_alignment = *gen::element<std::int64_t>(1, 2, 3, 4, 7, 8);
    o.full_seq_alignment = coin(1, 1) ? o.causal_seq_alignment : *gen::element<std::int64_t>(1, 2, 3, 4, 7, 8);
    align_streams(c, owner);
  }
  list_und_tokens(c);
  // Not every und token need be listed.
  if (*gen::arbitrary<bool>() && !c.layout.und_token_indexes.empty()) c.layout.und_token_indexes.pop_back();
  maybe_unorder_und(c);
  c.rows = sum(c.layout.sample_lens);
  return c;
}

// --- planted faults --------------------------------------------------------------

enum class Fault {
  option,
  negative_mark,
  empty,
  mode_count,
  negative,
  negative_sample,
  unknown_mode,
  tiling_sum,
  tiling_boundary,
  und_range,
  und_repeat,
  und_in_full,
  length,
  overflow_alignment,
  overflow_lcm,
  overflow_mark,
  overflow_interleaved,
  pairing,
  pairing_layout,
};

// The fault's name in the case, the second half of its category
// ("<class>/<fault>"). Faults of one kind share a name (a negative sample
// length is a negative length, as a negative mark is an option out of
// range), so known-failure lists name the kind; classify() tells them apart.
const char* fault_name(Fault f) {
  switch (f) {
    case Fault::option:
    case Fault::negative_mark:
      return "option";
    case Fault::empty:
      return "empty";
    case Fault::mode_count:
      return "mode_count";
    case Fault::negative:
    case Fault::negative_sample:
      return "negative_length";
    case Fault::unknown_mode:
      return "unknown_mode";
    case Fault::tiling_sum:
      return "tiling_sum";
    case Fault::tiling_boundary:
      return "tiling_boundary";
    case Fault::und_range:
      return "und_out_of_range";
    case Fault::und_repeat:
      return "und_repeated";
    case Fault::und_in_full:
      return "und_in_full";
    case Fault::length:
      return "length";
    case Fault::overflow_alignment:
    case Fault::overflow_lcm:
      return "overflow_alignment";
    case Fault::overflow_mark:
    case Fault::overflow_interleaved:
      return "overflow_mark";
    case Fault::pairing:
    case Fault::pairing_layout:
      return "pairing";
  }
  return "unknown";
}

const char* class_of(Fault f) {
  switch (f) {
    case Fault::option:
    case Fault::negative_mark:
      return "invalid_option";
    case Fault::empty:
      return "empty_batch";
    case Fault::und_in_full:
      return "und_token_in_full_split";
    case Fault::length:
      return "length_mismatch";
    case Fault::overflow_alignment:
    case Fault::overflow_lcm:
    case Fault::overflow_mark:
    case Fault::overflow_interleaved:
      return "overflow";
    case Fault::pairing:
    case Fault::pairing_layout:
      return "pad_segment_pairing";
    default:
      return "invalid_layout";
  }
}

// One sample [full: 1] more, so that the full stream is not empty.
void append_full_row(Case& c) {
  c.layout.sample_lens.push_back(1);
  c.layout.split_lens.push_back(1);
  c.layout.attn_modes.push_back("full");
  c.rows += 1;
}

std::int64_t full_rows(const reference::Layout& L) {
  std::int64_t n = 0;
  for (std::size_t j = 0; j < std::min(L.split_lens.size(), L.attn_modes.size()); ++j) {
    if (L.attn_modes[j] == "full" && L.split_lens[j] > 0) n += L.split_lens[j];
  }
  return n;
}

// Plants fault `f` in `c` (a valid case, or one whose other planted faults
// belong to later classes) and names it as the case's expected error.
void plant(Case& c, Fault f) {
  auto& L = c.layout;
  // Where a new sample starts, whatever `rows` says (a length fault may be planted).
  const std::int64_t end = sum(L.sample_lens);
  switch (f) {
    case Fault::option: {
      const std::int64_t bad = *gen::element<std::int64_t>(0, -1, -7, INT64_MIN);
      switch (*gen::inRange(0, 3)) {
        case 0:
          c.options.cp_world_size = bad;
          break;
        case 1:
          c.options.full_seq_alignment = bad;
          break;
        default:
          c.options.causal_seq_alignment = bad;
          break;
      }
      break;
    }
    case Fault::negative_mark: {
      const std::int64_t bad = *gen::element<std::int64_t>(-1, -128, INT64_MIN);
      std::int64_t* marks[] = {&c.marks.image_causal, &c.marks.image_full, &c.marks.video_causal, &c.marks.video_full};
      *marks[*gen::inRange(0, 4)] = bad;
      break;
    }
    case Fault::empty: {
      const bool length_planted = c.rows != end;
      L.sample_lens.clear();
      if (*gen::arbitrary<bool>()) L = {};
      c.rows = length_planted ? *gen::inRange<std::int64_t>(1, 4) : 0;
      break;
    }
    case Fault::mode_count:
      if (*gen::arbitrary<bool>() || L.attn_modes.empty())
        L.attn_modes.push_back("full");
      else
        L.attn_modes.pop_back();
      break;
    case Fault::negative: {
      if (L.split_lens.empty()) append_full_row(c);
      const std::size_t j = *gen::inRange<std::size_t>(0, L.split_lens.size());
      L.split_lens[j] = -*gen::inRange<std::int64_t>(1, 5);
      break;
    }
    case Fault::negative_sample: {
      if (L.sample_lens.empty()) append_full_row(c);
      const std::size_t j = *gen::inRange<std::size_t>(0, L.sample_lens.size());
      L.sample_lens[j] = -*gen::element<std::int64_t>(1, 3, INT64_MAX);
      break;
    }
    case Fault::unknown_mode: {
      if (L.attn_modes.empty()) append_full_row(c);
      const std::size_t j = *gen::inRange<std::size_t>(0, L.attn_modes.size());
      L.attn_modes[j] = *gen::element<std::string>("sliding", "Causal", "", "full ");
      break;
    }
    case Fault::tiling_sum: {
      if (L.split_lens.empty()) append_full_row(c);
      const std::size_t j = *gen::inRange<std::size_t>(0, L.split_lens.size());
      L.split_lens[j] += 1;
      list_und_tokens(c);
      break;
    }
    case Fault::tiling_boundary:
      // Move one row across a sample boundary: sums still agree.
      L.sample_lens.insert(L.sample_lens.begin(), {2, 2});
      L.split_lens.insert(L.split_lens.begin(), {1, 2, 1});
      L.attn_modes.insert(L.attn_modes.begin(), {"causal", "full", "full"});
      list_und_tokens(c);
      c.rows += 4;
      break;
    case Fault::und_range:
      L.und_token_indexes.push_back(*gen::element<std::int64_t>(-1, end, end + 5, INT64_MAX));
      maybe_unorder_und(c);
      break;
    case Fault::und_repeat:
      if (L.und_token_indexes.empty())
        L.und_token_indexes.push_back(end);  // then out of range instead
      else
        L.und_token_indexes.push_back(L.und_token_indexes[*gen::inRange<std::size_t>(0, L.und_token_indexes.size())]);
      maybe_unorder_und(c);
      break;
    case Fault::und_in_full: {
      // A sample whose full split is never empty, then its first full row as und.
      L.sample_lens.push_back(3);
      L.split_lens.insert(L.split_lens.end(), {1, 2});
      L.attn_modes.insert(L.attn_modes.end(), {"causal", "full"});
      list_und_tokens(c);
      L.und_token_indexes.push_back(end + 1);
      maybe_unorder_und(c);
      c.rows += 3;
      break;
    }
    case Fault::length:
      c.rows += *gen::element<std::int64_t>(1, -1);
      if (c.rows < 0) c.rows = end + 1;
      break;
    case Fault::overflow_alignment:
      // A non-empty stream with an alignment past int32.
      append_full_row(c);
      c.options.full_seq_alignment = *gen::element<std::int64_t>(2147483648LL, 1LL << 40, INT64_MAX);
      break;
    case Fault::overflow_lcm: {
      // Alignment and cp within int32 whose lcm (with the bucket, under
      // graphs) is past it, on a non-empty full stream.
      if (full_rows(L) == 0) append_full_row(c);
      switch (*gen::inRange(0, 4)) {
        case 0:
          c.options.cp_world_size = 65521;  // primes
          c.options.full_seq_alignment = 65537;
          break;
        case 1:
          c.options.cp_world_size = 65536;
          c.options.full_seq_alignment = 65537;
          break;
        case 2:
          c.options.cp_world_size = 3;
          c.options.full_seq_alignment = 1431655766;  // 2 x 715827883, not a multiple of 3
          break;
        default:
          c.options.pad_for_cuda_graphs = true;
          c.options.cp_world_size = 1;
          c.options.full_seq_alignment = 33554433;  // odd: times the bucket of 128 passes int32
          break;
      }
      break;
    }
    case Fault::overflow_mark:
      c.options.pad_for_cuda_graphs = true;
      c.marks.image_full = c.marks.video_full = *gen::element<std::int64_t>(2147483648LL, INT64_MAX);
      break;
    case Fault::overflow_interleaved: {
      // Marks within int32 whose sum, the pad segment's interleaved sample
      // offset (padded causal + padded full), is past it.
      // (Any layout with a segment: one that cannot pair fails on the sum first.)
      if (split_counts(L).causal != split_counts(L).full || split_counts(L).full == 0) {
        fill_layout(c, pair_samples(*gen::inRange(1, 4)));
        list_und_tokens(c);
        c.rows = sum(L.sample_lens);
      }
      c.options.pad_for_cuda_graphs = true;
      const std::int64_t causal = *gen::element<std::int64_t>(1073741824, 1200000000, kInt32Limit);
      const std::int64_t full = kInt32Limit - causal + *gen::inRange<std::int64_t>(1, 1000);
      (c.options.is_image_batch ? c.marks.image_causal : c.marks.video_causal) = causal;
      (c.options.is_image_batch ? c.marks.image_full : c.marks.video_full) = full;
      break;
    }
    case Fault::pairing:
    case Fault::pairing_layout: {
      // A layout that cannot pair (one sample of two or more pairs; or, with
      // pairing_layout, one of several samples without a full split or with
      // two), with a pad segment due.
      Modes modes;
      if (f == Fault::pairing) {
        modes.emplace_back();
        for (int k = *gen::inRange(2, 4); k > 0; --k) modes[0].insert(modes[0].end(), {false, true});
      } else {
        modes = unpairable_modes(true);
      }
      fill_layout(c, modes);
      list_und_tokens(c);
      c.rows = sum(L.sample_lens);
      if (f == Fault::pairing) {
        c.options.pad_segment_only_when_padded = false;
        c.options.causal_seq_alignment = c.options.full_seq_alignment = 1;
        c.options.cp_world_size = *gen::inRange<std::int64_t>(1, 4);
        c.marks = {};
      } else {
        // Due by the options: always, or padded anyway under graphs.
        c.options.pad_segment_only_when_padded = coin(1, 2);
        if (c.options.pad_segment_only_when_padded) c.options.pad_for_cuda_graphs = true;
        c.options.cp_world_size = *gen::element<std::int64_t>(1, 2, 3);
        c.options.causal_seq_alignment = *gen::element<std::int64_t>(1, 2, 3, 7, 8);
        c.options.full_seq_alignment = *gen::element<std::int64_t>(1, 2, 3, 7, 8);
      }
      break;
    }
  }
  c.expect_error = class_of(f);
  c.fault = fault_name(f);
}

Case planted_case() {
  Case c = packer_case();
  plant(c, *gen::element(Fault::option, Fault::negative_mark, Fault::empty, Fault::mode_count, Fault::negative,
                         Fault::negative_sample, Fault::unknown_mode, Fault::tiling_sum, Fault::tiling_boundary,
                         Fault::und_range, Fault::und_repeat, Fault::und_in_full, Fault::length,
                         Fault::overflow_alignment, Fault::overflow_lcm, Fault::overflow_mark,
                         Fault::overflow_interleaved, Fault::pairing, Fault::pairing_layout));
  return c;
}

// Several faults at once: the expected class is the first in PROTOCOL.md's
// order, the reference's order of checks (options and marks, the batch, the
// layout, und tokens, the row count, int32, pairing). The later faults are
// planted first; each combination keeps every fault in place.
Case precedence_case() {
  static const std::vector<std::vector<Fault>> combos = {
      {Fault::option, Fault::tiling_sum},
      {Fault::option, Fault::length},
      {Fault::option, Fault::und_in_full},
      {Fault::option, Fault::empty},
      {Fault::option, Fault::pairing_layout},
      {Fault::option, Fault::tiling_sum, Fault::length},
      {Fault::negative_mark, Fault::length},
      {Fault::negative_mark, Fault::overflow_mark},
      {Fault::empty, Fault::length},
      {Fault::empty, Fault::overflow_mark},
      {Fault::mode_count, Fault::length},
      {Fault::negative, Fault::length},
      {Fault::negative_sample, Fault::overflow_mark},
      {Fault::unknown_mode, Fault::length},
      {Fault::tiling_sum, Fault::overflow_alignment},
      {Fault::tiling_boundary, Fault::length},
      {Fault::und_range, Fault::und_in_full},
      {Fault::und_in_full, Fault::length},
      {Fault::und_in_full, Fault::pairing_layout},
      {Fault::length, Fault::pairing_layout},
      {Fault::overflow_mark, Fault::pairing_layout},
      {Fault::overflow_interleaved, Fault::pairing},
  };
  Case c = packer_case();
  const std::vector<Fault>& faults = combos[*gen::inRange<std::size_t>(0, combos.size())];
  for (auto f = faults.rbegin(); f != faults.rend(); ++f) plant(c, *f);
  return c;
}

// --- classes ----------------------------------------------------------------------

// PROTOCOL.md's order of the error classes.
int class_rank(const std::string& error) {
  static const char* const order[] = {"invalid_option",  "empty_batch", "invalid_layout",     "und_token_in_full_split",
                                      "length_mismatch", "overflow",    "pad_segment_pairing"};
  for (int i = 0; i < 7; ++i)
    if (error == order[i]) return i;
  return -1;
}

// Whether a non-empty stream of alignment a has a step past int32.
bool step_past_int32(std::int64_t rows, std::int64_t a, std::int64_t cp, bool graphs) {
  if (rows <= 0 || a < 1 || cp < 1) return false;
  return spec_lcm(spec_lcm(a, cp), graphs ? 128 : 1) > kInt32Limit;
}

// The latest error class (by rank) that the case's content shows through
// simple checks, or -1; not every fault shows (a split across a sample
// boundary does not), which only makes error:precedence rarer.
int latest_visible_class(const Case& c) {
  const auto& L = c.layout;
  const auto& o = c.options;
  const auto& m = c.marks;
  int latest = -1;
  const auto saw = [&](int rank) { latest = std::max(latest, rank); };
  if (o.cp_world_size < 1 || o.causal_seq_alignment < 1 || o.full_seq_alignment < 1 || m.image_causal < 0 ||
      m.image_full < 0 || m.video_causal < 0 || m.video_full < 0) {
    saw(0);
  }
  if (L.sample_lens.empty()) saw(1);
  bool well_formed = L.split_lens.size() == L.attn_modes.size();
  for (const std::int64_t v : L.sample_lens) well_formed = well_formed && v >= 0;
  for (const std::int64_t v : L.split_lens) well_formed = well_formed && v >= 0;
  for (const auto& mode : L.attn_modes) well_formed = well_formed && (mode == "causal" || mode == "full");
  const Wide tokens = wide_sum(L.sample_lens);
  well_formed = well_formed && wide_sum(L.split_lens) == tokens;
  I64 und = L.und_token_indexes;
  std::sort(und.begin(), und.end());
  well_formed = well_formed && std::adjacent_find(und.begin(), und.end()) == und.end() &&
                (und.empty() || (und.front() >= 0 && und.back() < tokens));
  if (!well_formed) saw(2);
  if (well_formed) {
    std::int64_t start = 0;
    std::size_t j = 0;
    for (const std::int64_t u : und) {
      while (j < L.split_lens.size() && start + L.split_lens[j] <= u) start += L.split_lens[j++];
      if (j < L.split_lens.size() && L.attn_modes[j] == "full") saw(3);
    }
  }
  if (Wide{c.rows} != tokens) saw(4);
  const SplitCounts n = split_counts(L);
  std::int64_t causal = 0, full = 0;
  for (std::size_t j = 0; j < std::min(L.split_lens.size(), L.attn_modes.size()); ++j) {
    (L.attn_modes[j] == "causal" ? causal : full) += std::max<std::int64_t>(0, L.split_lens[j]);
  }
  const bool segment = n.causal == n.full && n.full > 0;
  const std::int64_t mark_causal = o.is_image_batch ? m.image_causal : m.video_causal;
  const std::int64_t mark_full = o.is_image_batch ? m.image_full : m.video_full;
  if (tokens > kInt32Limit || step_past_int32(causal, o.causal_seq_alignment, o.cp_world_size, o.pad_for_cuda_graphs) ||
      step_past_int32(full, o.full_seq_alignment, o.cp_world_size, o.pad_for_cuda_graphs) ||
      (o.pad_for_cuda_graphs && (mark_causal > kInt32Limit || mark_full > kInt32Limit ||
                                 (segment && Wide{mark_causal} + mark_full > kInt32Limit)))) {
    saw(5);
  }
  if (segment && n.full != n.samples && (!o.pad_segment_only_when_padded || o.pad_for_cuda_graphs)) saw(6);
  return latest;
}

void error_tags(const Case& c, std::vector<std::string>& tags) {
  const auto& L = c.layout;
  const auto& o = c.options;
  const auto& m = c.marks;
  tags.push_back("fault:" + c.fault);
  // An und fault that is not the list's last index (the planted one is last
  // unless the list was reordered): out of range, repeated, or the largest
  // index (the one in a full split).
  if (const auto& u = L.und_token_indexes; u.size() >= 2) {
    const std::int64_t last = u.back();
    std::int64_t tokens = 0;
    for (const std::int64_t len : L.sample_lens) tokens += std::max<std::int64_t>(0, len);
    const bool moved = (c.fault == "und_out_of_range" && last >= 0 && last < tokens) ||
                       (c.fault == "und_repeated" && std::count(u.begin(), u.end(), last) == 1) ||
                       (c.fault == "und_in_full" && last != *std::max_element(u.begin(), u.end()));
    if (moved) tags.push_back("fault:und_unordered");
  }
  if (latest_visible_class(c) > class_rank(c.expect_error)) tags.push_back("error:precedence");
  if (std::any_of(L.sample_lens.begin(), L.sample_lens.end(), [](std::int64_t v) { return v < 0; })) {
    tags.push_back("fault:negative_sample_len");
  }
  if (m.image_causal < 0 || m.image_full < 0 || m.video_causal < 0 || m.video_full < 0) {
    tags.push_back("fault:negative_mark");
  }
  if (c.expect_error == "overflow") {
    const bool in_range = o.cp_world_size >= 1 && o.cp_world_size <= kInt32Limit && o.full_seq_alignment >= 1 &&
                          o.full_seq_alignment <= kInt32Limit && o.causal_seq_alignment >= 1 &&
                          o.causal_seq_alignment <= kInt32Limit;
    if (in_range && step_past_int32(full_rows(L), o.full_seq_alignment, o.cp_world_size, o.pad_for_cuda_graphs)) {
      tags.push_back("fault:overflow_lcm");
    }
    const std::int64_t mc = o.is_image_batch ? m.image_causal : m.video_causal;
    const std::int64_t mf = o.is_image_batch ? m.image_full : m.video_full;
    if (o.pad_for_cuda_graphs && mc <= kInt32Limit && mf <= kInt32Limit && Wide{mc} + mf > kInt32Limit) {
      tags.push_back("fault:overflow_interleaved");
    }
  }
  if (c.expect_error == "pad_segment_pairing") {
    const SplitCounts n = split_counts(L);
    if (n.samples >= 2) tags.push_back("error:pairing_multi_sample");
    if (n.full < n.samples) tags.push_back("error:pairing_fewer_full_splits");
    if (n.full > n.samples) tags.push_back("error:pairing_more_full_splits");
  }
}

}  // namespace

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

std::vector<std::string> classify(const Case& c) {
  std::vector<std::string> tags;
  if (!c.expect_error.empty()) {
    tags.push_back("error:" + c.expect_error);
    error_tags(c, tags);
    return tags;
  }
  const auto& L = c.layout;
  std::int64_t causal = 0, full = 0;
  bool empty_causal = false, empty_full = false;
  for (std::size_t j = 0; j < L.split_lens.size(); ++j) {
    const bool is_causal = L.attn_modes[j] == "causal";
    (is_causal ? causal : full) += L.split_lens[j];
    if (L.split_lens[j] == 0) (is_causal ? empty_causal : empty_full) = true;
  }
  const SplitCounts n = split_counts(L);
  const auto& o = c.options;
  const auto [need_causal, need_full] = stream_needs(c);
  const std::int64_t reserve = n.causal == n.full && n.causal > 0 ? 1 : 0;
  for (const std::int64_t need : {causal + reserve, full + reserve}) {
    for (const std::int64_t b : kSpecTierEdges) {
      if (need == b) tags.push_back("bucket_boundary:on");
      if (need == b + 1 || need == b - 1) tags.push_back("bucket_boundary:off_by_one");
    }
    if (need > 0 && need % 128 == 0) tags.push_back("multiple_of_128");
  }
  // The edges of each stream's own arithmetic, from its need.
  for (const auto& [need, a] :
       {std::pair{need_causal, o.causal_seq_alignment}, std::pair{need_full, o.full_seq_alignment}}) {
    const std::int64_t e = spec_lcm(a, o.cp_world_size);
    const bool non_pow2 = !spec_is_pow2(e);
    for (const SpecEdge& edge : spec_edges_near(need, a, o.cp_world_size, o.pad_for_cuda_graphs)) {
      const std::string where = need == edge.at ? "on" : need < edge.at ? "below" : "above";
      switch (edge.kind) {
        case SpecEdge::Kind::tier:
          tags.push_back("bucket_edge:" + std::to_string(edge.at));
          tags.push_back("bucket_edge:" + where);
          tags.push_back(o.is_image_batch ? "bucket_edge:image" : "bucket_edge:video");
          if (non_pow2) tags.push_back("bucket_edge:non_pow2_alignment");
          if (o.cp_world_size > 1) tags.push_back("bucket_edge:cp>1");
          break;
        case SpecEdge::Kind::bucket_step:
          if (edge.at >= 2 * edge.step && non_pow2) tags.push_back("bucket_step_edge:non_pow2_alignment");
          if (edge.at > 8192) tags.push_back("bucket_step_edge:past_8192");
          break;
        case SpecEdge::Kind::alignment_multiple:
          // Long streams only: short ones sit next to a multiple of a small
          // alignment by chance.
          if (o.cp_world_size > 1 && non_pow2 && edge.step >= 5 && need >= 1024) {
            tags.push_back("alignment_multiple:cp>1");
            tags.push_back("alignment_multiple:cp>1:" + where);
          }
          break;
      }
    }
  }
  for (const std::int64_t a : {o.causal_seq_alignment, o.full_seq_alignment}) {
    if (a > 1 && a % 2 == 1) tags.push_back("alignment:odd");
    if (a >= 128) tags.push_back("alignment:large");
  }
  if (o.cp_world_size > 1) tags.push_back("cp>1");
  if (o.cp_world_size > 1 &&
      (std::gcd(o.cp_world_size, o.causal_seq_alignment) > 1 || std::gcd(o.cp_world_size, o.full_seq_alignment) > 1)) {
    tags.push_back("cp_shares_factor_with_alignment");
  }
  if (o.pad_for_cuda_graphs) tags.push_back("cuda_graphs");
  if (c.marks != reference::GraphMarks{}) tags.push_back("marks_from_earlier_calls");
  // Streams already on a multiple of everything that pads them (with graphs,
  // of the bucket at their length), on a layout that pairs.
  if (o.pad_segment_only_when_padded && n.causal == n.full && n.full > 0 &&
      spec_padded(causal, o.cp_world_size, o.pad_for_cuda_graphs, o.causal_seq_alignment) == causal &&
      spec_padded(full, o.cp_world_size, o.pad_for_cuda_graphs, o.full_seq_alignment) == full) {
    tags.push_back("only_when_padded_already_aligned");
    if (o.cp_world_size > 1) tags.push_back("only_when_padded_already_aligned:cp>1");
    if (o.pad_for_cuda_graphs && std::max(causal, full) > 2048) {
      tags.push_back("only_when_padded_already_aligned:graphs_past_2048");
    }
  }
  // Layouts beyond the packer's (by counts: not one full split per sample, or
  // causal splits in some samples only).
  if (n.full != n.samples || (n.causal != 0 && n.causal != n.samples)) tags.push_back("layout:unusual");
  if (n.causal == n.full && n.full > 0 && n.full != n.samples) tags.push_back("layout:pairing_violated");
  if (std::find(L.sample_lens.begin(), L.sample_lens.end(), 0) != L.sample_lens.end()) tags.push_back("sample:empty");
  if (!std::is_sorted(L.und_token_indexes.begin(), L.und_token_indexes.end())) tags.push_back("und:unordered");
  if (empty_causal) tags.push_back("empty_causal_split");
  if (empty_full) tags.push_back("empty_full_split");
  if (n.causal == 0) tags.push_back("full_only");
  if (L.sample_lens.size() == 1) tags.push_back("samples:1");
  if (L.sample_lens.size() >= 64) tags.push_back("samples:64+");
  if (causal > 20000 || full > 20000) tags.push_back("stream>20000");
  tags.push_back("row_bytes:" + std::to_string(c.row_bytes));
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  return tags;
}

const std::vector<RequiredClass>& required_classes(Profile profile) {
  // Shares of the runner's default run (1,000 cases); the distribution test
  // checks them at three seeds.
  static const std::vector<RequiredClass> packer = {
      {"bucket_boundary:on", 0.005},
      {"bucket_boundary:off_by_one", 0.005},
      {"multiple_of_128", 0.005},
      {"bucket_edge:2048", 0.005},
      {"bucket_edge:4096", 0.005},
      {"bucket_edge:8192", 0.005},
      {"bucket_edge:16384", 0.005},
      {"bucket_edge:on", 0.01},
      {"bucket_edge:below", 0.005},
      {"bucket_edge:above", 0.005},
      {"bucket_edge:image", 0.005},
      {"bucket_edge:video", 0.005},
      {"bucket_edge:cp>1", 0.005},
      {"bucket_edge:non_pow2_alignment", 0.03},
      {"bucket_step_edge:non_pow2_alignment", 0.005},
      {"bucket_step_edge:past_8192", 0.005},
      {"alignment_multiple:cp>1", 0.05},
      {"alignment_multiple:cp>1:on", 0.02},
      {"alignment_multiple:cp>1:below", 0.01},
      {"alignment_multiple:cp>1:above", 0.01},
      {"alignment:odd", 0.05},
      {"alignment:large", 0.05},
      {"cp>1", 0.1},
      {"cp_shares_factor_with_alignment", 0.05},
      {"cuda_graphs", 0.1},
      {"marks_from_earlier_calls", 0.1},
      {"only_when_padded_already_aligned", 0.02},
      {"only_when_padded_already_aligned:cp>1", 0.03},
      {"only_when_padded_already_aligned:graphs_past_2048", 0.003},
      {"layout:unusual", 0.01},
      {"layout:pairing_violated", 0.005},
      {"sample:empty", 0.02},
      {"empty_causal_split", 0.05},
      {"empty_full_split", 0.05},
      {"full_only", 0.05},
      {"samples:1", 0.03},
      {"samples:64+", 0.01},
      {"stream>20000", 0.01},
      {"row_bytes:1", 0.03},
      {"row_bytes:2", 0.03},
      {"row_bytes:4", 0.03},
      {"row_bytes:8", 0.03},
      {"row_bytes:16", 0.03},
      {"und:unordered", 0.05},
  };
  // The strict profile spends most cases on faults; its valid edges are the
  // packer's, checked there at larger shares.
  static const std::vector<RequiredClass> strict = {
      {"full_only", 0.01},
      {"cp>1", 0.03},
      {"cuda_graphs", 0.03},
      {"marks_from_earlier_calls", 0.03},
      {"bucket_edge:non_pow2_alignment", 0.005},
      {"alignment_multiple:cp>1", 0.005},
      {"only_when_padded_already_aligned", 0.002},
      {"layout:unusual", 0.03},
      {"layout:pairing_violated", 0.01},
      {"sample:empty", 0.01},
      {"error:invalid_option", 0.02},
      {"error:empty_batch", 0.01},
      {"error:invalid_layout", 0.05},
      {"error:und_token_in_full_split", 0.01},
      {"error:length_mismatch", 0.01},
      {"error:overflow", 0.02},
      {"error:pad_segment_pairing", 0.02},
      {"error:precedence", 0.1},
      {"error:pairing_multi_sample", 0.01},
      {"error:pairing_fewer_full_splits", 0.003},
      {"error:pairing_more_full_splits", 0.01},
      {"fault:negative_sample_len", 0.005},
      {"fault:negative_mark", 0.005},
      {"fault:overflow_lcm", 0.005},
      {"fault:overflow_interleaved", 0.005},
      {"und:unordered", 0.01},
      {"fault:und_unordered", 0.005},
  };
  return profile == Profile::packer ? packer : strict;
}

}  // namespace seqpack::properties
