// Rows on the device: the host boundary (to_device, to_host), the row moves
// every operation uses, and the poison test hook. Mirrors reference/src/types.cpp
// (Rows).
#include <cstdio>

#include "detail.cuh"
#include "row_copy.cuh"
#include "seqpack/gpu/testing.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace detail {
namespace {

#ifndef SEQPACK_GPU_CUDA
// Copies rows on the host backends: dst row i <- src row map[i] (gather) or
// dst row map[i] <- src row i (scatter), one memcpy per row (which the C
// library vectorises for the machine), or 16-byte non-temporal stores.
struct RowCopy {
  const unsigned char* src;
  unsigned char* dst;
  const std::int32_t* map;
  std::size_t width;
  bool scatter;
  bool streaming;  // non-temporal stores for outputs larger than the cache

  void operator()(std::size_t i) const {
    const std::size_t s = scatter ? i : static_cast<std::size_t>(map[i]);
    const std::size_t d = scatter ? static_cast<std::size_t>(map[i]) : i;
    const unsigned char* from = src + s * width;
    unsigned char* to = dst + d * width;
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
  }
};
#endif

// The device's data path (row_copy.cuh): one work item per V-byte chunk.
template <std::size_t V>
void move_chunks(const unsigned char* src, unsigned char* dst, const std::int32_t* map, std::size_t rows,
                 std::size_t width, bool scatter, Stream s) {
  thrust::for_each_n(exec(s), thrust::counting_iterator<std::size_t>(0), rows * (width / V),
                     row_chunk_copy<V>(src, dst, map, width, scatter));
}

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
  const unsigned char* from = thrust::raw_pointer_cast(src.bytes.data());
  unsigned char* to = thrust::raw_pointer_cast(dst.bytes.data());
  const std::int32_t* index = thrust::raw_pointer_cast(map.data());
  const std::size_t width = src.row_bytes;
  if (g_chunked_rows) {
    switch (vector_width(width, reinterpret_cast<std::uintptr_t>(from), reinterpret_cast<std::uintptr_t>(to))) {
      case 16:
        return move_chunks<16>(from, to, index, map.size(), width, scatter, s);
      case 8:
        return move_chunks<8>(from, to, index, map.size(), width, scatter, s);
      case 4:
        return move_chunks<4>(from, to, index, map.size(), width, scatter, s);
      case 2:
        return move_chunks<2>(from, to, index, map.size(), width, scatter, s);
      default:
        return move_chunks<1>(from, to, index, map.size(), width, scatter, s);
    }
  }
#ifndef SEQPACK_GPU_CUDA
  // On the host, a copy much larger than the last-level cache bypasses it, as
  // the C library's memcpy does: the rows would only evict the cache, and
  // non-temporal stores save the read of each destination line.
  bool streaming = false;
#if SEQPACK_STREAMING_STORES
  streaming =
      width % 16 == 0 && map.size() * width >= kStreamingBytes && reinterpret_cast<std::uintptr_t>(to) % 16 == 0;
#endif
  thrust::for_each(exec(s), thrust::counting_iterator<std::size_t>(0),
                   thrust::counting_iterator<std::size_t>(map.size()),
                   RowCopy{from, to, index, width, scatter, streaming});
#if SEQPACK_STREAMING_STORES
  if (streaming) _mm_sfence();
#endif
#endif
}

void zero_tail(DeviceRows& rows, std::size_t from, Stream s) {
  const std::size_t first = from * rows.row_bytes, size = rows.bytes.size() - first;
  if (size == 0) return;
#ifdef SEQPACK_GPU_CUDA
  cuda_check(cudaMemsetAsync(thrust::raw_pointer_cast(rows.bytes.data()) + first, 0, size, s), "zero_tail");
#else
  thrust::for_each(exec(s), thrust::counting_iterator<std::size_t>(0),
                   thrust::counting_iterator<std::size_t>((size + kZeroChunk - 1) / kZeroChunk),
                   ZeroChunk{thrust::raw_pointer_cast(rows.bytes.data()) + first, size});
#endif
}

#ifdef SEQPACK_GPU_CUDA
void cuda_check(cudaError_t e, const char* entry) {
  if (e != cudaSuccess) {
    throw DeviceError(std::string(entry) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}
#endif

void check_device(const char* entry, Stream s) {
  if (g_injected_error == entry) {
    throw DeviceError(std::string(entry) + ": injected device error (testing.hpp's inject_device_error)");
  }
#ifdef SEQPACK_GPU_CUDA
  cuda_check(cudaGetLastError(), entry);
  if (g_sync_check) cuda_check(cudaStreamSynchronize(s), entry);
#else
  (void)s;
#endif
}

bool sync_check_from_environment() {
  const char* v = std::getenv("SEQPACK_GPU_SYNC_CHECK");
  if (v) return std::string(v) != "0";
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

void* allocate_bytes(std::size_t count, std::size_t size, Stream s) {
  if (count == 0) return nullptr;
  if (count > (SIZE_MAX - 255) / size) {
    throw std::length_error("device buffer of " + std::to_string(count) + " elements of " + std::to_string(size) +
                            " bytes: the byte count passes size_t");
  }
  const std::size_t bytes = (count * size + 255) / 256 * 256;
#ifdef SEQPACK_GPU_CUDA
  void* p = nullptr;
  cuda_check(cudaMallocAsync(&p, bytes, s), "allocate");
  return p;
#else
  (void)s;
  void* p = std::aligned_alloc(256, bytes);
  if (!p) throw std::bad_alloc();
  return p;
#endif
}

void free_bytes(void* p, Stream s) noexcept {
#ifdef SEQPACK_GPU_CUDA
  const cudaError_t e = cudaFreeAsync(p, s);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "seqpack::gpu: cudaFreeAsync failed: %s (%s); the buffer is leaked\n", cudaGetErrorName(e),
                 cudaGetErrorString(e));
  }
#else
  (void)s;
  std::free(p);
#endif
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, Stream s, const char* entry) {
  if (bytes == 0) return;
#ifdef SEQPACK_GPU_CUDA
  cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), entry);
  cuda_check(cudaStreamSynchronize(s), entry);  // the host reads only finished work
#else
  (void)s;
  (void)entry;
  std::memcpy(dst, src, bytes);
#endif
}

void copy_to_device(void* dst, const void* src, std::size_t bytes, Stream s, const char* entry) {
  if (bytes == 0) return;
#ifdef SEQPACK_GPU_CUDA
  // From pageable memory the runtime stages the bytes before it returns, so the
  // source may be reused at once; the copy itself is ordered on s.
  cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), entry);
#else
  (void)s;
  (void)entry;
  std::memcpy(dst, src, bytes);
#endif
}

void copy_on_device(void* dst, const void* src, std::size_t bytes, Stream s, const char* entry) {
  if (bytes == 0) return;
#ifdef SEQPACK_GPU_CUDA
  cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), entry);
#else
  (void)s;
  (void)entry;
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace detail

void set_poison(int byte) { detail::g_poison = byte; }
void set_scan_expansion(bool scan) { detail::g_scan_expansion = scan; }
void set_chunked_row_copy(bool chunked) { detail::g_chunked_rows = chunked; }
void set_serial_threshold(std::size_t bytes) { detail::g_serial_below = bytes; }
std::size_t serial_threshold() { return detail::g_serial_below; }
void set_sync_check(bool on) { detail::g_sync_check = on; }
void inject_device_error(std::string entry) { detail::g_injected_error = std::move(entry); }

DeviceRows to_device(const reference::Rows& rows, Stream s) {
  DeviceRows d{rows.rows(), rows.row_bytes(), DeviceBuffer<unsigned char>(rows.size_bytes(), s)};
  detail::copy_to_device(thrust::raw_pointer_cast(d.bytes.data()), rows.data(), rows.size_bytes(), s, "to_device");
  detail::check_device("to_device", s);
  return d;
}

reference::Rows to_host(const DeviceRows& rows, Stream s) {
  if (rows.rows != 0 && (rows.row_bytes > SIZE_MAX / rows.rows || rows.bytes.size() != rows.rows * rows.row_bytes)) {
    detail::fail(ref::Errc::invalid_argument, "rows.bytes",
                 std::to_string(rows.bytes.size()) + " bytes do not hold " + std::to_string(rows.rows) + " rows of " +
                     std::to_string(rows.row_bytes) + " bytes");
  }
  reference::Rows h(rows.rows, rows.row_bytes);
  detail::copy_to_host(h.data(), thrust::raw_pointer_cast(rows.bytes.data()), h.size_bytes(), s, "to_host");
  detail::check_device("to_host", s);
  return h;
}

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
