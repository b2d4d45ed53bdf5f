// The boundary-directed draws of the generators: stream needs on, one below
// or one above an edge of the padding arithmetic (a tier boundary of the
// CUDA-graph bucket, a step of the bucket, a multiple of the effective
// alignment), and streams that need no padding. The packer's layouts that
// use them are in generators_packer.cpp; generators_internal.hpp declares
// them.
#include <algorithm>

#include "generators_internal.hpp"
#include "seqpack/properties/spec.hpp"

namespace seqpack::properties::detail {

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

namespace {

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

}  // namespace

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

}  // namespace seqpack::properties::detail
