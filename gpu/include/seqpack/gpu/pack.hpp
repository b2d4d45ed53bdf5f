// The GPU implementation's operations, mirroring the reference's names
// (reference/metadata.hpp, pack.hpp, views.hpp, context_parallel.hpp).
// Errors are the reference's classes (seqpack::reference::Error, naming the
// same fields), from the gpu's own checks, made on the host before any device
// work.
//
// Streams and lifetimes (gpu/README.md, "Streams and lifetimes"): every entry
// point enqueues its device work on the stream it takes, allocates what it
// creates on that stream and frees it there (stream-ordered), and returns
// without waiting for the work, except to_host/to_host_vector, which wait for
// the stream before the host reads. Each ends with a device check that
// throws DeviceError.
#pragma once

#include <vector>

#include "seqpack/gpu/types.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {

/// Validates `layout` on the host (O(samples + splits + u log splits) for u
/// und indexes, plus a sort of them when they come out of order) and builds
/// its metadata: the O(splits) summary on the host, the indices and sample
/// ids on the device (a scan on CUDA, a loop per split on the host backends;
/// see set_scan_expansion).
DeviceMetadata prepare_metadata(const reference::Layout& layout, Stream stream = {});

/// Builds a pack from packed rows on the device; as reference::build_pack.
DevicePack build_pack(const DeviceRows& packed, const reference::Layout& layout, const reference::Options& options,
                      reference::GraphMarks& marks, std::shared_ptr<const DeviceMetadata> prepared = nullptr,
                      Stream stream = {});

/// The real rows back in packed order (a scatter); sharded_pack when sharded.
DeviceRows get_all_seq(const DevicePack& pack, Stream stream = {});

/// As reference::get_all_seq_padded.
struct DeviceAllSeqPadded {
  DeviceRows seq;
  std::vector<std::int32_t> offsets;
  std::int32_t max_len = 0;
};
DeviceAllSeqPadded get_all_seq_padded(const DevicePack& pack, Stream stream = {});

/// Overwrites the real rows of both streams from packed-order rows.
void set_all_seq(DevicePack& pack, const DeviceRows& value, Stream stream = {});

/// Gathers packed rows into streams zero-padded to `source`'s lengths.
DevicePack from_all_seq(const DeviceRows& packed, const DevicePack& source, Stream stream = {});

/// A pack with `source`'s metadata and zero streams of the same lengths;
/// `row_bytes` changes the row width. As reference::zeros_like.
DevicePack zeros_like(const DevicePack& source, std::optional<std::size_t> row_bytes = std::nullopt,
                      Stream stream = {});

/// Position ids on the device: `values` holds `axes` rows of `len` ids
/// (row-major); 1-D ids have one axis.
struct DevicePositionIds {
  bool two_dimensional = false;
  std::size_t axes = 1;
  std::size_t len = 0;
  DeviceBuffer<std::int64_t> values;
};
DevicePositionIds to_device(const reference::PositionIds& ids, Stream stream = {});
reference::PositionIds to_host(const DevicePositionIds& ids, Stream stream = {});

/// As reference::get_und_position_ids / get_gen_position_ids: a gather along the last axis.
DevicePositionIds get_und_position_ids(const DevicePositionIds& ids, const DevicePack& pack, Stream stream = {});
DevicePositionIds get_gen_position_ids(const DevicePositionIds& ids, const DevicePack& pack, Stream stream = {});

/// As reference::shard_position_ids.
DevicePositionIds shard_position_ids(const DevicePositionIds& ids, const DevicePack& pack, std::int64_t rank,
                                     std::int64_t world_size, Stream stream = {});

/// Rank `rank`'s contiguous shard; as reference::shard_pack.
DevicePack shard_pack(const DevicePack& pack, std::int64_t rank, std::int64_t world_size, Stream stream = {});

/// All ranks' shards back into the unsharded pack; as reference::gather_shards.
DevicePack gather_shards(const std::vector<DevicePack>& shards, Stream stream = {});

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
