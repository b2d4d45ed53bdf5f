// The GPU implementation's operations, mirroring the reference's names
// (reference/metadata.hpp, pack.hpp, views.hpp, context_parallel.hpp).
// Errors are the reference's (seqpack::reference::Error with the same classes),
// checked on the host before any device work.
#pragma once

#include <vector>

#include "seqpack/gpu/types.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {

/// Validates `layout` and builds its metadata: O(splits) on the host, the
/// indices and sample ids on the device by scans and searches.
DeviceMetadata prepare_metadata(const reference::Layout& layout);

/// Builds a pack from packed rows on the device; as reference::build_pack.
DevicePack build_pack(const DeviceRows& packed, const reference::Layout& layout, const reference::Options& options,
                      reference::GraphMarks& marks, std::shared_ptr<const DeviceMetadata> prepared = nullptr);

/// The real rows back in packed order (a scatter); sharded_pack when sharded.
DeviceRows get_all_seq(const DevicePack& pack);

/// As reference::get_all_seq_padded.
struct DeviceAllSeqPadded {
  DeviceRows seq;
  std::vector<std::int32_t> offsets;
  std::int32_t max_len = 0;
};
DeviceAllSeqPadded get_all_seq_padded(const DevicePack& pack);

/// Overwrites the real rows of both streams from packed-order rows.
void set_all_seq(DevicePack& pack, const DeviceRows& value);

/// Gathers packed rows into streams zero-padded to `source`'s lengths.
DevicePack from_all_seq(const DeviceRows& packed, const DevicePack& source);

/// Rank `rank`'s contiguous shard; as reference::shard_pack.
DevicePack shard_pack(const DevicePack& pack, std::int64_t rank, std::int64_t world_size);

/// All ranks' shards back into the unsharded pack; as reference::gather_shards.
DevicePack gather_shards(const std::vector<DevicePack>& shards);

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
