// Device-side types of the GPU implementation: the same shapes as the
// reference's (reference/types.hpp), with the row data and every O(tokens)
// array in Thrust device vectors. Built once per backend (CUDA, and Thrust's
// CPP and OMP host backends); the backend is an inline namespace so that
// several backends can live in one program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#ifndef SEQPACK_GPU_CUDA
#include <thrust/system/cpp/execution_policy.h>
#endif

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
/// stream). See gpu/README.md for the host synchronisations that remain.
using Stream = cudaStream_t;
#else
/// Host backends run on the calling thread; the stream argument is accepted
/// so that code written against the CUDA build compiles unchanged.
struct Stream {};
#endif

/// Device memory whose elements are not initialised on allocation. Every
/// buffer the implementation allocates is written in full by the operation
/// (padding rows are zeroed explicitly), so the value-initialisation of a
/// plain device_vector would be a second, wasted pass over the memory.
template <typename T>
struct UninitializedAllocator : thrust::device_allocator<T> {
  UninitializedAllocator() = default;
  UninitializedAllocator(const UninitializedAllocator&) = default;
  UninitializedAllocator& operator=(const UninitializedAllocator&) = default;
  ~UninitializedAllocator() = default;
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  SEQPACK_HOST_DEVICE void construct(T*) {}  // leaves the element as the memory holds it
#ifndef SEQPACK_GPU_CUDA
  // Thrust runs the (empty) construction pass of an allocation on the
  // allocator's system: on the host backends the sequential one, so that the
  // OMP build does not open a parallel region per allocation. Host memory either way.
  using system_type = thrust::system::cpp::tag;
#endif
};

/// The buffers of the GPU implementation: device vectors without the zero pass.
template <typename T>
using DeviceBuffer = thrust::device_vector<T, UninitializedAllocator<T>>;

/// `rows` rows of `row_bytes` bytes in device memory.
struct DeviceRows {
  std::size_t rows = 0;
  std::size_t row_bytes = 0;
  DeviceBuffer<unsigned char> bytes;
};

/// A device vector's contents on the host.
template <typename T, typename Alloc>
std::vector<T> to_host_vector(const thrust::device_vector<T, Alloc>& v) {
  std::vector<T> out(v.size());
  if (!v.empty()) thrust::copy(v.begin(), v.end(), out.begin());  // an empty vector's begin() is null
  return out;
}

/// Copies host rows to the device, and back.
/// Both synchronise with the host (they are the boundary of the device data).
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
