// The strict profile's layouts: valid layouts beyond the packer's (any
// number of causal and zero to two full splits per sample, empty samples,
// unpairable layouts where no pad segment is due) and planted faults of each
// PROTOCOL.md error class, alone or several at once. The packer's layouts
// are in generators_packer.cpp, the classes of a case in
// generators_classes.cpp, the entry points in generators.cpp.
#include <algorithm>
#include <numeric>

#include "faults.hpp"
#include "generators_internal.hpp"
#include "seqpack/properties/spec.hpp"

namespace seqpack::properties::detail {

namespace {

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

}  // namespace

SplitCounts split_counts(const reference::Layout& L) {
  SplitCounts n;
  for (std::size_t j = 0; j < std::min(L.split_lens.size(), L.attn_modes.size()); ++j) {
    (L.attn_modes[j] == "causal" ? n.causal : n.full) += 1;
  }
  n.samples = static_cast<std::int64_t>(L.sample_lens.size());
  return n;
}

namespace {

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

}  // namespace

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

namespace {

// --- planted faults --------------------------------------------------------------

// One sample [full: 1] more, so that the full stream is not empty.
void append_full_row(Case& c) {
  c.layout.sample_lens.push_back(1);
  c.layout.split_lens.push_back(1);
  c.layout.attn_modes.push_back("full");
  c.rows += 1;
}

}  // namespace

std::int64_t full_rows(const reference::Layout& L) {
  std::int64_t n = 0;
  for (std::size_t j = 0; j < std::min(L.split_lens.size(), L.attn_modes.size()); ++j) {
    if (L.attn_modes[j] == "full" && L.split_lens[j] > 0) n += L.split_lens[j];
  }
  return n;
}

namespace {

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

}  // namespace

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

}  // namespace seqpack::properties::detail
