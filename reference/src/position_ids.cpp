// Position ids of each stream.
#include "seqpack/reference/position_ids.hpp"

#include <string>

#include "seqpack/reference/errors.hpp"

namespace seqpack::reference {
namespace {

Refusal ids_fault(const PositionIds& ids, const Pack& pack, const char* operation) {
  if (!pack.meta) return Error(Errc::invalid_argument, "pack.meta", "the pack has no metadata");
  if (pack.is_sharded) {
    return Error(Errc::sharded_pack, "pack.is_sharded",
                 std::string(operation) + " needs the whole pack, but this one is a context-parallel shard");
  }
  if (!ids.two_dimensional && ids.axes != 1) {
    return Error(Errc::invalid_argument, "position_ids.axes",
                 "1-D position ids have one axis, got " + std::to_string(ids.axes));
  }
  if (ids.values.size() != ids.axes * ids.len) {
    return Error(Errc::invalid_argument, "position_ids.values",
                 "holds " + std::to_string(ids.values.size()) + " values for shape [" + std::to_string(ids.axes) +
                     ", " + std::to_string(ids.len) + "]");
  }
  // The original indexes with the stream indices and so accepts any longer
  // tensor; the reference wants one id per packed token.
  if (ids.len != static_cast<std::size_t>(pack.meta->num_tokens())) {
    return Error(Errc::invalid_argument, "position_ids.len",
                 "has " + std::to_string(ids.len) + " positions for " + std::to_string(pack.meta->num_tokens()) +
                     " packed tokens");
  }
  return std::nullopt;
}

PositionIds gather_ids(const PositionIds& ids, const Pack& pack, const std::vector<std::int32_t>& indices,
                       const char* operation) {
  if (auto e = ids_fault(ids, pack, operation)) throw *e;
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

Refusal get_und_position_ids_refusal(const PositionIds& ids, const Pack& pack) {
  return ids_fault(ids, pack, "get_und_position_ids");
}

Refusal get_gen_position_ids_refusal(const PositionIds& ids, const Pack& pack) {
  return ids_fault(ids, pack, "get_gen_position_ids");
}

PositionIds get_und_position_ids(const PositionIds& ids, const Pack& pack) {
  return gather_ids(ids, pack, pack.meta ? pack.meta->causal_indices : std::vector<std::int32_t>{},
                    "get_und_position_ids");
}

PositionIds get_gen_position_ids(const PositionIds& ids, const Pack& pack) {
  return gather_ids(ids, pack, pack.meta ? pack.meta->full_indices : std::vector<std::int32_t>{},
                    "get_gen_position_ids");
}

}  // namespace seqpack::reference
