// The padding arithmetic of the spec, restated for the property suite from
// NOTES.md section 3 and the original's _get_padded_size, not taken from the
// reference: the catalogue checks the reference against it, and the
// generators and the fuzz decoder aim cases at its edges (bucket boundaries,
// high-water marks).
#pragma once

#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

namespace seqpack::properties {

/// The tier boundaries of the CUDA-graph bucket: past each one the bucket
/// doubles (128 up to 2048, 256 up to 4096, ... 2048 past 16384).
inline constexpr std::int64_t kSpecTierEdges[] = {2048, 4096, 8192, 16384};

inline std::int64_t spec_bucket(std::int64_t n) {
  if (n <= 2048) return 128;
  if (n <= 4096) return 256;
  if (n <= 8192) return 512;
  if (n <= 16384) return 1024;
  return 2048;
}

// Values past int64 stand as kPastInt64: the spec's arithmetic is exact in
// Python, and every such value is past int32 anyway, which is all the catalogue
// asks of it.
inline constexpr std::int64_t kPastInt64 = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kInt32Limit = std::numeric_limits<std::int32_t>::max();

// Total: an argument below 1 (an invalid option, which the spec refuses
// before any arithmetic) gives 0, so that classifying any case is defined.
inline std::int64_t spec_lcm(std::int64_t a, std::int64_t b) {
  if (a < 1 || b < 1) return 0;
  const std::int64_t x = a / std::gcd(a, b);
  return x > kPastInt64 / b ? kPastInt64 : x * b;
}

inline std::int64_t spec_step(std::int64_t n, std::int64_t cp, bool graphs, std::int64_t a) {
  std::int64_t step = a;
  if (graphs) step = spec_lcm(step, spec_bucket(n));
  return spec_lcm(step, cp);
}

// The least multiple of the step that is >= n (0 for n = 0, whatever the step).
inline std::int64_t spec_padded(std::int64_t n, std::int64_t cp, bool graphs, std::int64_t a) {
  const std::int64_t step = spec_step(n, cp, graphs, a);
  if (step < 1) return kPastInt64;  // an alignment or cp below 1: invalid_option, no length
  const std::int64_t multiples = n / step + (n % step != 0 ? 1 : 0);
  return multiples > kPastInt64 / step ? kPastInt64 : multiples * step;
}

inline bool spec_is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// An edge of the padding arithmetic: where a stream's padded length jumps.
struct SpecEdge {
  enum class Kind {
    tier,                ///< a tier boundary of the bucket (graphs only): 2048, 4096, 8192, 16384
    bucket_step,         ///< a multiple of lcm(alignment, bucket, cp) at that length (graphs only)
    alignment_multiple,  ///< a multiple of the effective alignment lcm(alignment, cp)
  };
  Kind kind;
  std::int64_t at;    ///< the edge, >= step
  std::int64_t step;  ///< the distance to the next smaller edge of this kind (tier: at / 2)
};

/// The edges that a stream need of `n` rows (its tokens plus the pad
/// segment's reserved row) sits on or next to (|n - at| <= 1), under the
/// stream's alignment `a`, cp and graphs; none for values out of range.
inline std::vector<SpecEdge> spec_edges_near(std::int64_t n, std::int64_t a, std::int64_t cp, bool graphs) {
  std::vector<SpecEdge> out;
  if (n < 0 || n > kInt32Limit || a < 1 || cp < 1) return out;
  const std::int64_t e = spec_lcm(a, cp);
  for (std::int64_t x = n - 1; x <= n + 1; ++x) {
    if (x < 1) continue;
    if (graphs) {
      for (const std::int64_t t : kSpecTierEdges) {
        if (x == t) out.push_back({SpecEdge::Kind::tier, x, x / 2});
      }
      const std::int64_t s = spec_step(x, cp, true, a);
      if (s <= kInt32Limit && x % s == 0) out.push_back({SpecEdge::Kind::bucket_step, x, s});
    }
    if (e <= kInt32Limit && x % e == 0) out.push_back({SpecEdge::Kind::alignment_multiple, x, e});
  }
  return out;
}

}  // namespace seqpack::properties
