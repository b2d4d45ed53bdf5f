// One row's bytes, copied with a fixed size for the common widths: the
// packing loops copy row by row, and a call to memcpy per 4-byte row costs
// more than the row.
#pragma once

#include <cstddef>
#include <cstring>

namespace seqpack::reference::detail {

inline void copy_row(std::byte* to, const std::byte* from, std::size_t width) {
  switch (width) {
    case 2:
      std::memcpy(to, from, 2);
      return;
    case 4:
      std::memcpy(to, from, 4);
      return;
    case 8:
      std::memcpy(to, from, 8);
      return;
    default:
      std::memcpy(to, from, width);
  }
}

}  // namespace seqpack::reference::detail
