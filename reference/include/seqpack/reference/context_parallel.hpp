// Context parallelism: contiguous shards of each padded stream per rank.
#pragma once

#include <cstdint>
#include <vector>

#include "seqpack/reference/types.hpp"

namespace seqpack::reference {

/// Rank `rank`'s local pack: rows [rank*L/W, (rank+1)*L/W) of each padded
/// stream and sample-id vector, its local real-row counts, global offsets, and
/// is_sharded set. Errors: invalid_option (world < 1), invalid_argument (rank
/// outside [0, world)), sharded_pack (already sharded), not_divisible.
Pack shard_pack(const Pack& pack, std::int64_t rank, std::int64_t world_size);

/// Every rank's local pack, rank order.
std::vector<Pack> shard_pack_all(const Pack& pack, std::int64_t world_size);

/// Concatenates all ranks' local packs (rank order) back into the unsharded
/// pack. invalid_argument if the shards do not come from one pack.
Pack gather_shards(const std::vector<Pack>& shards);

/// Rank `rank`'s position ids: the und and gen ids, each zero-padded to its
/// padded stream length, sliced to the rank's shard and concatenated
/// [causal shard ; full shard] along the last axis. `pack` is unsharded.
PositionIds shard_position_ids(const PositionIds& position_ids, const Pack& pack, std::int64_t rank,
                               std::int64_t world_size);

}  // namespace seqpack::reference
