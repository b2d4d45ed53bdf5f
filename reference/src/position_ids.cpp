// Position ids of each stream.
#include "seqpack/reference/position_ids.hpp"

#include <string>

#include "seqpack/reference/errors.hpp"

namespace seqpack::reference {
namespace {

PositionIds gather_ids(const PositionIds& ids, const Pack& pack, const std::vector<std::int32_t>& indices,
                       const char* operation) {
  if (!pack.meta) throw Error(Errc::invalid_argument, "pack.meta", "the pack has no metadata");
  if (pack.is_sharded) {
    throw Error(Errc::sharded_pack, "pack.is_sharded",
                std::string(operation) + " needs the whole pack, but this one is a context-parallel shard");
  }
  if (!ids.two_dimensional && ids.axes != 1) {
    throw Error(Errc::invalid_argument, "position_ids.axes",
                "1-D position ids have one axis, got " + std::to_string(ids.axes));
  }
  if (ids.values.size() != ids.axes * ids.len) {
    throw Error(Errc::invalid_argument, "position_ids.values",
                "holds " + std::to_string(ids.values.size()) + " values for shape [" + std::to_string(ids.axes) + ", " +
                    std::to_string(ids.len) + "]");
  }
  // The original indexes with the stream indices and so accepts any longer
  // tensor; the reference wants one id per packed token.
  if (ids.len != static_cast<std::size_t>(pack.meta->num_tokens())) {
    throw Error(Errc::invalid_argument, "position_ids.len",
                "has " + std::to_string(ids.len) + " positions for " + std::to_string(pack.meta->num_tokens()) +
                    " packed tokens");
  }
  PositionIds out;
  out.two_dimensional = ids.two_dimensional;
  out.axes = ids.axes;
  out.len = indices.size();
  out.values.reserve(out.axes * out.len);
  for (std::size_t a = 0; a < ids.axes; ++a) {
    const std::int64_t* axis = ids.values.data() + a * ids.len;
    for (const std::int32_t i : indices) out.values.push_back(axis[i]);
  }
  return out;
}

}  // namespace

PositionIds get_und_position_ids(const PositionIds& ids, const Pack& pack) {
  return gather_ids(ids, pack, pack.meta ? pack.meta->causal_indices : std::vector<std::int32_t>{},
                    "get_und_position_ids");
}

PositionIds get_gen_position_ids(const PositionIds& ids, const Pack& pack) {
  return gather_ids(ids, pack, pack.meta ? pack.meta->full_indices : std::vector<std::int32_t>{},
                    "get_gen_position_ids");
}

}  // namespace seqpack::reference
