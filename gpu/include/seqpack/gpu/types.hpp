// Device-side types of the GPU implementation: the same shapes as the
// reference's (reference/types.hpp), with the row data and every O(tokens)
// array in Thrust device vectors. Built once per backend (CUDA, and Thrust's
// CPP and OMP host backends); the backend is an inline namespace so that
// several backends can live in one program.
#pragma once

#include <thrust/device_vector.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <thrust/copy.h>

#include "seqpack/reference/types.hpp"

#ifndef SEQPACK_GPU_BACKEND
#define SEQPACK_GPU_BACKEND cpp
#endif

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {

/// `rows` rows of `row_bytes` bytes in device memory.
struct DeviceRows {
  std::size_t rows = 0;
  std::size_t row_bytes = 0;
  thrust::device_vector<unsigned char> bytes;
};

/// A device vector's contents on the host.
template <typename T>
std::vector<T> to_host_vector(const thrust::device_vector<T>& v) {
  std::vector<T> out(v.size());
  if (!v.empty()) thrust::copy(v.begin(), v.end(), out.begin());  // an empty vector's begin() is null
  return out;
}

/// Copies host rows to the device, and back.
DeviceRows to_device(const reference::Rows& rows);
reference::Rows to_host(const DeviceRows& rows);

/// Metadata of one layout. The O(splits) part (offsets, maxima, counts, the
/// layout itself) lives on the host in `summary`, whose O(tokens) vectors stay
/// empty; the O(tokens) arrays are built on the device.
struct DeviceMetadata {
  reference::Metadata summary;
  thrust::device_vector<std::int32_t> causal_indices;
  thrust::device_vector<std::int32_t> full_indices;
  thrust::device_vector<std::int64_t> causal_sample_ids;
  thrust::device_vector<std::int64_t> full_only_sample_ids;
};

/// A pack on the device. As reference::Pack; the pad segment (O(splits)) is
/// host data.
struct DevicePack {
  std::shared_ptr<const DeviceMetadata> meta;
  std::int64_t max_num_tokens = 0;
  DeviceRows causal_seq;
  DeviceRows full_only_seq;
  thrust::device_vector<std::int64_t> causal_sample_ids;
  thrust::device_vector<std::int64_t> full_only_sample_ids;
  std::optional<reference::PadSegment> pad_segment;
  bool is_sharded = false;
  std::optional<std::int64_t> num_causal_tokens_local;
  std::optional<std::int64_t> num_full_tokens_local;
};

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
