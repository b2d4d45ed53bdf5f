// Rows on the device: the host boundary (to_device, to_host), the row moves
// every operation uses, and the poison test hook. Mirrors reference/src/types.cpp
// (Rows).
#include "detail.cuh"
#include "seqpack/gpu/testing.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace detail {
namespace {

// Copies rows: dst row i <- src row map[i] (gather) or dst row map[i] <- src row i (scatter).
// On the device each thread moves 16, 8 or 1 bytes at a time, whichever divides
// the row width; on the host backends the row is one memcpy (which the C
// library vectorises for the machine).
struct RowCopy {
  const unsigned char* src;
  unsigned char* dst;
  const std::int32_t* map;
  std::size_t width;
  bool scatter;
  bool streaming;  // host only: non-temporal stores for outputs larger than the cache

  SEQPACK_HOST_DEVICE void operator()(std::size_t i) const {
    const std::size_t s = scatter ? i : static_cast<std::size_t>(map[i]);
    const std::size_t d = scatter ? static_cast<std::size_t>(map[i]) : i;
    const unsigned char* from = src + s * width;
    unsigned char* to = dst + d * width;
#ifndef __CUDA_ARCH__
#if SEQPACK_STREAMING_STORES
    if (streaming) {  // 16-byte aligned rows of a multiple of 16 bytes (checked by move_rows)
      for (std::size_t k = 0; k < width; k += 16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(to + k),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + k)));
      }
      return;
    }
#endif
    std::memcpy(to, from, width);
#else
    if (width % 16 == 0) {
      struct alignas(16) V16 {
        std::uint64_t a, b;
      };
      for (std::size_t k = 0; k < width; k += 16)
        *reinterpret_cast<V16*>(to + k) = *reinterpret_cast<const V16*>(from + k);
    } else if (width % 8 == 0) {
      for (std::size_t k = 0; k < width; k += 8)
        *reinterpret_cast<std::uint64_t*>(to + k) = *reinterpret_cast<const std::uint64_t*>(from + k);
    } else {
      for (std::size_t k = 0; k < width; ++k) to[k] = from[k];
    }
#endif
  }
};

#ifndef SEQPACK_GPU_CUDA
// Zeroes chunk k of kZeroChunk bytes of [base, base + size) with memset. A
// byte fill through Thrust is one functor call, one store, per byte on the
// host backends (the OMP build spent two thirds of a small pack in it).
constexpr std::size_t kZeroChunk = std::size_t{64} << 10;
struct ZeroChunk {
  unsigned char* base;
  std::size_t size;
  void operator()(std::size_t k) const {
    const std::size_t from = k * kZeroChunk;
    std::memset(base + from, 0, size - from < kZeroChunk ? size - from : kZeroChunk);
  }
};
#endif

}  // namespace

void move_rows(const DeviceRows& src, DeviceRows& dst, const DeviceBuffer<std::int32_t>& map, bool scatter, Stream s) {
  if (src.row_bytes == 0 || map.empty()) return;
  // On the host, a copy much larger than the last-level cache bypasses it, as
  // the C library's memcpy does: the rows would only evict the cache, and
  // non-temporal stores save the read of each destination line.
  bool streaming = false;
#if SEQPACK_STREAMING_STORES
  streaming = src.row_bytes % 16 == 0 && map.size() * src.row_bytes >= (std::size_t{16} << 20) &&
              reinterpret_cast<std::uintptr_t>(thrust::raw_pointer_cast(dst.bytes.data())) % 16 == 0;
#endif
  thrust::for_each(exec(s), thrust::counting_iterator<std::size_t>(0),
                   thrust::counting_iterator<std::size_t>(map.size()),
                   RowCopy{thrust::raw_pointer_cast(src.bytes.data()), thrust::raw_pointer_cast(dst.bytes.data()),
                           thrust::raw_pointer_cast(map.data()), src.row_bytes, scatter, streaming});
#if SEQPACK_STREAMING_STORES
  if (streaming) _mm_sfence();
#endif
}

void zero_tail(DeviceRows& rows, std::size_t from, Stream s) {
#ifdef SEQPACK_GPU_CUDA
  thrust::fill(exec(s), rows.bytes.begin() + static_cast<std::ptrdiff_t>(from * rows.row_bytes), rows.bytes.end(),
               static_cast<unsigned char>(0));
#else
  const std::size_t first = from * rows.row_bytes, size = rows.bytes.size() - first;
  if (size == 0) return;
  thrust::for_each(exec(s), thrust::counting_iterator<std::size_t>(0),
                   thrust::counting_iterator<std::size_t>((size + kZeroChunk - 1) / kZeroChunk),
                   ZeroChunk{thrust::raw_pointer_cast(rows.bytes.data()) + first, size});
#endif
}

}  // namespace detail

void set_poison(int byte) { detail::g_poison = byte; }
void set_scan_expansion(bool scan) { detail::g_scan_expansion = scan; }
void set_serial_threshold(std::size_t bytes) { detail::g_serial_below = bytes; }
std::size_t serial_threshold() { return detail::g_serial_below; }

DeviceRows to_device(const reference::Rows& rows, Stream) {
  const detail::SerialWhenSmall scope(rows.size_bytes());
  DeviceRows d{rows.rows(), rows.row_bytes(), DeviceBuffer<unsigned char>(rows.size_bytes())};
  if (rows.size_bytes()) {
    const auto* p = reinterpret_cast<const unsigned char*>(rows.data());
    thrust::copy(p, p + rows.size_bytes(), d.bytes.begin());
  }
  return d;
}

reference::Rows to_host(const DeviceRows& rows, Stream) {
  const detail::SerialWhenSmall scope(rows.bytes.size());
  reference::Rows h(rows.rows, rows.row_bytes);
  if (h.size_bytes()) thrust::copy(rows.bytes.begin(), rows.bytes.end(), reinterpret_cast<unsigned char*>(h.data()));
  return h;
}

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
