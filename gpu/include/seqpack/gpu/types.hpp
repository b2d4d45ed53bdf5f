// Device-side types of the GPU implementation: the same shapes as the
// reference's (reference/types.hpp), with the row data and every O(tokens)
// array in stream-ordered device buffers. Built once per backend (CUDA, and Thrust's
// CPP and OMP host backends); the backend is an inline namespace so that
// several backends can live in one program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <thrust/device_ptr.h>

#include "seqpack/reference/types.hpp"

#ifndef SEQPACK_GPU_BACKEND
#define SEQPACK_GPU_BACKEND cpp
#endif

#ifdef SEQPACK_GPU_CUDA
#include <cuda_runtime_api.h>
#endif

#include "seqpack/common/index_math.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {

#ifdef SEQPACK_GPU_CUDA
/// The stream every entry point enqueues its work on (0: the legacy default
/// stream). The stream and lifetime contract of each entry point is in
/// gpu/README.md ("Streams and lifetimes").
using Stream = cudaStream_t;
#else
/// Host backends run on the calling thread; the stream argument is accepted
/// so that code written against the CUDA build compiles unchanged.
struct Stream {};
#endif

/// What an entry point throws when the device reports an error (a failed
/// allocation, launch or copy; with the synchronising check of testing.hpp,
/// a fault of the enqueued work): the entry point and the CUDA error's name.
/// Refused input is reference::Error, never this.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
/// `count` elements of `size` bytes, 256-byte aligned, allocated on `stream`
/// (cudaMallocAsync: usable by work enqueued on `stream` after the call); null
/// for none. std::length_error when the byte count passes size_t, DeviceError
/// when the device refuses. Defined in src/types.cu.
void* allocate_bytes(std::size_t count, std::size_t size, Stream stream);
/// Frees on `stream` (cudaFreeAsync: after the work enqueued on it so far).
/// Never throws: a failure is written to stderr.
void free_bytes(void* p, Stream stream) noexcept;
/// Copies `bytes` from the device to host memory on `stream`, then waits for
/// the stream, so that the host reads only finished work.
void copy_to_host(void* dst, const void* src, std::size_t bytes, Stream stream, const char* entry);
/// Copies `bytes` of host memory to the device, ordered on `stream`; the host
/// memory may be reused when it returns.
void copy_to_device(void* dst, const void* src, std::size_t bytes, Stream stream, const char* entry);
/// Copies `bytes` between device buffers, ordered on `stream`.
void copy_on_device(void* dst, const void* src, std::size_t bytes, Stream stream, const char* entry);
}  // namespace detail

/// Device memory of `size()` elements of T, allocated on a stream and freed on
/// the same stream (stream-ordered allocation on CUDA, so the free waits for
/// the work enqueued on that stream before it). The elements are not
/// initialised: every buffer the implementation allocates is written in full
/// by the operation (padding rows are zeroed explicitly). Move-only; the
/// stream it was allocated on must outlive it. Destruction never throws.
template <typename T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable elements");

 public:
  using value_type = T;
  using iterator = thrust::device_ptr<T>;
  using const_iterator = thrust::device_ptr<const T>;

  DeviceBuffer() = default;
  /// `n` uninitialised elements, allocated on `stream`.
  explicit DeviceBuffer(std::size_t n, Stream stream = {})
      : p_(static_cast<T*>(detail::allocate_bytes(n, sizeof(T), stream))), n_(n), stream_(stream) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_), stream_(o.stream_) {
    o.p_ = nullptr;
    o.n_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_;
      n_ = o.n_;
      stream_ = o.stream_;
      o.p_ = nullptr;
      o.n_ = 0;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }

  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  /// The stream it was allocated on, and will be freed on.
  Stream stream() const { return stream_; }
  iterator data() { return iterator(p_); }
  const_iterator data() const { return const_iterator(p_); }
  iterator begin() { return data(); }
  iterator end() { return data() + static_cast<std::ptrdiff_t>(n_); }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + static_cast<std::ptrdiff_t>(n_); }

 private:
  void release() noexcept {
    if (p_) detail::free_bytes(p_, stream_);
    p_ = nullptr;
    n_ = 0;
  }
  T* p_ = nullptr;
  std::size_t n_ = 0;
  Stream stream_{};
};

/// `rows` rows of `row_bytes` bytes in device memory.
struct DeviceRows {
  std::size_t rows = 0;
  std::size_t row_bytes = 0;
  DeviceBuffer<unsigned char> bytes;
};

/// A device buffer's contents on the host: copied on `stream` after the work
/// enqueued on it, which it waits for.
template <typename T>
std::vector<T> to_host_vector(const DeviceBuffer<T>& v, Stream stream = {}) {
  std::vector<T> out(v.size());
  detail::copy_to_host(out.data(), thrust::raw_pointer_cast(v.data()), v.size() * sizeof(T), stream, "to_host_vector");
  return out;
}

/// A copy of a device buffer, allocated and made on `stream` (buffers are
/// move-only; this is the explicit copy).
template <typename T>
DeviceBuffer<T> clone(const DeviceBuffer<T>& v, Stream stream = {}) {
  DeviceBuffer<T> out(v.size(), stream);
  detail::copy_on_device(thrust::raw_pointer_cast(out.data()), thrust::raw_pointer_cast(v.data()), v.size() * sizeof(T),
                         stream, "clone");
  return out;
}

/// Copies host rows to the device (ordered on `stream`; the host rows may be
/// reused on return), and back (after the work enqueued on `stream`, which
/// to_host waits for).
DeviceRows to_device(const reference::Rows& rows, Stream stream = {});
reference::Rows to_host(const DeviceRows& rows, Stream stream = {});

/// Metadata of one layout. The O(splits) part (offsets, maxima, counts, the
/// layout itself) lives on the host in `summary`, whose O(tokens) vectors stay
/// empty; the O(tokens) arrays are built on the device.
struct DeviceMetadata {
  reference::Metadata summary;
  DeviceBuffer<std::int32_t> causal_indices;
  DeviceBuffer<std::int32_t> full_indices;
  DeviceBuffer<std::int64_t> causal_sample_ids;
  DeviceBuffer<std::int64_t> full_only_sample_ids;
};

/// A pack on the device. As reference::Pack; the pad segment (O(splits)) is
/// host data.
struct DevicePack {
  std::shared_ptr<const DeviceMetadata> meta;
  std::int64_t max_num_tokens = 0;
  DeviceRows causal_seq;
  DeviceRows full_only_seq;
  DeviceBuffer<std::int64_t> causal_sample_ids;
  DeviceBuffer<std::int64_t> full_only_sample_ids;
  std::optional<reference::PadSegment> pad_segment;
  bool is_sharded = false;
  std::optional<std::int64_t> num_causal_tokens_local;
  std::optional<std::int64_t> num_full_tokens_local;
};

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
