// The device's row copy: one work item per V-byte chunk of a moved row, V the
// widest vector width (16, 8, 4, 2 or 1 bytes) that divides the row width and
// both base addresses. `__host__ __device__`, self-contained (std and the
// common macro only), so that tests/gpu/row_copy_test.cpp runs it on the host
// for every width and alignment. Why chunks and not rows: gpu/README.md
// ("The device data path").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "seqpack/common/index_math.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace detail {

/// The widest V in {16, 8, 4, 2, 1} dividing the row width and both base
/// addresses: then every chunk of every row is V-aligned on both sides (row
/// r starts at base + r * width). A width that 16 does not divide has no
/// 16-byte aligned rows past the first, so the narrower vector is the tail
/// case: it applies to the whole stream, never to a piece of a row.
inline std::size_t vector_width(std::size_t width, std::uintptr_t src, std::uintptr_t dst) {
  const std::uintptr_t all = static_cast<std::uintptr_t>(width) | src | dst;
  std::size_t v = 16;
  while (v > 1 && all % v != 0) v /= 2;
  return v;
}

template <std::size_t V>
struct Word;
template <>
struct Word<1> {
  using type = std::uint8_t;
};
template <>
struct Word<2> {
  using type = std::uint16_t;
};
template <>
struct Word<4> {
  using type = std::uint32_t;
};
template <>
struct Word<8> {
  using type = std::uint64_t;
};
template <>
struct Word<16> {
  struct alignas(16) type {
    std::uint64_t a, b;
  };
};

/// Copies V bytes between V-aligned addresses: one vector load and store on
/// the device, a fixed-size memcpy (one move) on the host.
template <std::size_t V>
SEQPACK_HOST_DEVICE inline void copy_chunk(unsigned char* to, const unsigned char* from) {
#ifdef __CUDA_ARCH__
  using W = typename Word<V>::type;
  *reinterpret_cast<W*>(to) = *reinterpret_cast<const W*>(from);
#else
  std::memcpy(to, from, V);
#endif
}

/// Work item k moves chunk k % chunks of row k / chunks: dst row i <- src row
/// map[i] (gather) or dst row map[i] <- src row i (scatter). Consecutive items
/// touch consecutive V-byte words of one row, so a warp's loads and stores
/// are coalesced whatever the row width. `width` is a multiple of V and the
/// bases are V-aligned (vector_width); `shift` is log2(chunks) when chunks is
/// a power of two (a shift instead of a 64-bit division), else -1.
template <std::size_t V>
struct RowChunkCopy {
  const unsigned char* src;
  unsigned char* dst;
  const std::int32_t* map;
  std::size_t width;
  std::size_t chunks;
  int shift;
  bool scatter;

  SEQPACK_HOST_DEVICE void operator()(std::size_t k) const {
    const std::size_t i = shift >= 0 ? k >> shift : k / chunks;
    const std::size_t c = k - i * chunks;
    const auto m = static_cast<std::size_t>(map[i]);
    const std::size_t s = scatter ? i : m;
    const std::size_t d = scatter ? m : i;
    copy_chunk<V>(dst + d * width + c * V, src + s * width + c * V);
  }
};

/// The RowChunkCopy of `rows` rows of `width` bytes for the given bases.
template <std::size_t V>
RowChunkCopy<V> row_chunk_copy(const unsigned char* src, unsigned char* dst, const std::int32_t* map, std::size_t width,
                               bool scatter) {
  const std::size_t chunks = width / V;
  int shift = -1;
  if ((chunks & (chunks - 1)) == 0) {
    shift = 0;
    while ((std::size_t{1} << shift) < chunks) ++shift;
  }
  return RowChunkCopy<V>{src, dst, map, width, chunks, shift, scatter};
}

}  // namespace detail
}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
