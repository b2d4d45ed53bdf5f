// Test data shared by every suite: the float bit patterns that a conversion,
// a float copy or a comparison by value would change, planted into rows so
// that data movement is checked bit for bit for every dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace seqpack::reference::testing {

/// Overwrites the start of row number `r` (`width` bytes at `row`) by its
/// place in a cycle of `period` (>= 3) rows: 0 a quiet NaN with a payload, 1 a
/// negative zero (each 64-, 32- or 16-bit, the widest that fits), 2 a
/// signalling 32-bit NaN; other rows, and rows too narrow, stay as they are.
inline void plant_special_value(std::byte* row, std::size_t width, std::size_t r, std::size_t period) {
  const std::uint64_t nan64 = 0x7ff80000deadbeefull, neg_zero64 = 0x8000000000000000ull;
  const std::uint32_t nan32 = 0x7fc0beefu, snan32 = 0x7f800001u, neg_zero32 = 0x80000000u;
  const std::uint16_t nan16 = 0x7e01, neg_zero16 = 0x8000;
  switch (r % period) {
    case 0:
      if (width >= 8)
        std::memcpy(row, &nan64, 8);
      else if (width >= 4)
        std::memcpy(row, &nan32, 4);
      else if (width >= 2)
        std::memcpy(row, &nan16, 2);
      break;
    case 1:
      if (width >= 8)
        std::memcpy(row, &neg_zero64, 8);
      else if (width >= 4)
        std::memcpy(row, &neg_zero32, 4);
      else if (width >= 2)
        std::memcpy(row, &neg_zero16, 2);
      break;
    case 2:
      if (width >= 4) std::memcpy(row, &snan32, 4);
      break;
    default:
      break;
  }
}

}  // namespace seqpack::reference::testing
