// The padding arithmetic of the spec, restated for the property suite from
// NOTES.md section 3 and the original's _get_padded_size, not taken from the
// reference: the catalogue checks the reference against it, and the
// generators and the fuzz decoder aim cases at its edges (bucket boundaries,
// high-water marks).
#pragma once

#include <cstdint>
#include <limits>
#include <numeric>

namespace seqpack::properties {

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

inline std::int64_t spec_lcm(std::int64_t a, std::int64_t b) {
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

}  // namespace seqpack::properties
