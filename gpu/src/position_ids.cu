// Position ids of each stream: a gather along the last axis through the
// stream's index array. Mirrors reference/src/position_ids.cpp.
#include <thrust/transform.h>

#include "detail.cuh"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace detail {
namespace {

// out[a][i] = ids[a][index[first + i]] for i < count, or 0 past the index array
// (the padding of a stream), as position ids are sliced per shard.
struct GatherIds {
  const std::int64_t* ids;
  const std::int32_t* index;
  std::size_t len, index_size, first, count;
  SEQPACK_HOST_DEVICE std::int64_t operator()(std::size_t k) const {
    const std::size_t a = k / count, i = first + k % count;
    return i < index_size ? ids[a * len + static_cast<std::size_t>(index[i])] : 0;
  }
};

}  // namespace

void check_position_ids(const DevicePositionIds& ids, const DevicePack& pack, const char* operation) {
  require_unsharded(pack, operation);
  if (!ids.two_dimensional && ids.axes != 1) {
    fail(ref::Errc::invalid_argument, "position_ids.axes",
         "1-D ids take exactly one axis, not " + std::to_string(ids.axes));
  }
  if (ids.values.size() != ids.axes * ids.len) {
    fail(ref::Errc::invalid_argument, "position_ids.values",
         std::to_string(ids.values.size()) + " values do not fill " + std::to_string(ids.axes) + " axes of " +
             std::to_string(ids.len));
  }
  const auto tokens = static_cast<std::size_t>(pack.meta->summary.num_tokens());
  if (ids.len != tokens) {
    fail(ref::Errc::invalid_argument, "position_ids.len",
         std::to_string(ids.len) + " ids per axis, the pack has " + std::to_string(tokens) + " packed tokens");
  }
}

DevicePositionIds gather_ids(const DevicePositionIds& ids, const DeviceBuffer<std::int32_t>& index, std::size_t first,
                             std::size_t count, Stream s) {
  DevicePositionIds out{ids.two_dimensional, ids.axes, count, output_ids<std::int64_t>(ids.axes * count, s)};
  if (!out.values.empty()) {
    thrust::transform(exec(s), thrust::counting_iterator<std::size_t>(0),
                      thrust::counting_iterator<std::size_t>(out.values.size()), out.values.begin(),
                      GatherIds{thrust::raw_pointer_cast(ids.values.data()), thrust::raw_pointer_cast(index.data()),
                                ids.len, index.size(), first, count});
  }
  return out;
}

}  // namespace detail

DevicePositionIds to_device(const reference::PositionIds& ids, Stream s) {
  DevicePositionIds out{ids.two_dimensional, ids.axes, ids.len, detail::upload(ids.values, s, "to_device")};
  detail::check_device("to_device", s);
  return out;
}

reference::PositionIds to_host(const DevicePositionIds& ids, Stream s) {
  reference::PositionIds h{ids.two_dimensional, ids.axes, ids.len, to_host_vector(ids.values, s)};
  detail::check_device("to_host", s);
  return h;
}

DevicePositionIds get_und_position_ids(const DevicePositionIds& ids, const DevicePack& pack, Stream s) {
  detail::check_position_ids(ids, pack, "get_und_position_ids");
  const detail::SerialWhenSmall scope(ids.values.size() * 8);
  DevicePositionIds out = detail::gather_ids(ids, pack.meta->causal_indices, 0, pack.meta->causal_indices.size(), s);
  detail::check_device("get_und_position_ids", s);
  return out;
}

DevicePositionIds get_gen_position_ids(const DevicePositionIds& ids, const DevicePack& pack, Stream s) {
  detail::check_position_ids(ids, pack, "get_gen_position_ids");
  const detail::SerialWhenSmall scope(ids.values.size() * 8);
  DevicePositionIds out = detail::gather_ids(ids, pack.meta->full_indices, 0, pack.meta->full_indices.size(), s);
  detail::check_device("get_gen_position_ids", s);
  return out;
}

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
