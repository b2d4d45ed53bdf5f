// Context-parallel sharding (NOTES.md section 8): contiguous slices of each
// stream and sample-id vector, gathering them back, and sharded position ids.
// Mirrors reference/src/context_parallel.cpp.
#include "detail.cuh"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace detail {

void check_world(std::int64_t rank, std::int64_t world_size) {
  if (world_size < 1) {
    fail(ref::Errc::invalid_option, "cp_world_size", std::to_string(world_size) + " ranks: at least one is needed");
  }
  if (rank < 0 || rank >= world_size) {
    fail(ref::Errc::invalid_argument, "rank",
         "rank " + std::to_string(rank) + " is not one of the " + std::to_string(world_size) + " ranks");
  }
}

std::size_t shard_len(std::size_t rows, std::int64_t world_size, const char* field) {
  const auto w = static_cast<std::size_t>(world_size);
  if (rows % w != 0) {
    fail(ref::Errc::not_divisible, field,
         "a stream of " + std::to_string(rows) + " rows is not a multiple of " + std::to_string(world_size) + " ranks");
  }
  return rows / w;
}

}  // namespace detail

DevicePack shard_pack(const DevicePack& pack, std::int64_t rank, std::int64_t world_size, Stream s) {
  detail::check_world(rank, world_size);
  if (pack.is_sharded) detail::fail(ref::Errc::sharded_pack, "pack.is_sharded", "a shard cannot be sharded again");
  const std::size_t causal_len = detail::shard_len(pack.causal_seq.rows, world_size, "causal_seq");
  const std::size_t full_len = detail::shard_len(pack.full_only_seq.rows, world_size, "full_only_seq");
  const auto r = static_cast<std::size_t>(rank);
  const detail::SerialWhenSmall scope(causal_len * (pack.causal_seq.row_bytes + 8) +
                                      full_len * (pack.full_only_seq.row_bytes + 8));
  DevicePack local;
  local.meta = pack.meta;
  local.max_num_tokens = pack.max_num_tokens;
  local.pad_segment = pack.pad_segment;  // global offsets, as every offset of a shard
  local.is_sharded = true;
  const auto slice = [s](const DeviceRows& rows, std::size_t first, std::size_t count) {
    DeviceRows out = detail::output_rows(count, rows.row_bytes, s);
    const auto begin = rows.bytes.begin() + static_cast<std::ptrdiff_t>(first * rows.row_bytes);
    thrust::copy(detail::exec(s), begin, begin + static_cast<std::ptrdiff_t>(count * rows.row_bytes),
                 out.bytes.begin());
    return out;
  };
  local.causal_seq = slice(pack.causal_seq, r * causal_len, causal_len);
  local.full_only_seq = slice(pack.full_only_seq, r * full_len, full_len);
  const auto slice_ids = [s](const DeviceBuffer<std::int64_t>& ids, std::size_t first, std::size_t count) {
    DeviceBuffer<std::int64_t> out = detail::output_ids<std::int64_t>(count, s);
    const auto begin = ids.begin() + static_cast<std::ptrdiff_t>(first);
    thrust::copy(detail::exec(s), begin, begin + static_cast<std::ptrdiff_t>(count), out.begin());
    return out;
  };
  local.causal_sample_ids = slice_ids(pack.causal_sample_ids, r * causal_len, causal_len);
  local.full_only_sample_ids = slice_ids(pack.full_only_sample_ids, r * full_len, full_len);
  local.num_causal_tokens_local =
      common::num_local_real_tokens(pack.meta->summary.num_causal_tokens, rank, static_cast<std::int64_t>(causal_len));
  local.num_full_tokens_local =
      common::num_local_real_tokens(pack.meta->summary.num_full_tokens, rank, static_cast<std::int64_t>(full_len));
  detail::check_device("shard_pack", s);
  return local;
}

DevicePack gather_shards(const std::vector<DevicePack>& shards, Stream s) {
  if (shards.empty()) detail::fail(ref::Errc::invalid_argument, "shards", "nothing to gather");
  const DevicePack& first = shards.front();
  std::int64_t causal_real = 0, full_real = 0;
  for (std::size_t r = 0; r < shards.size(); ++r) {
    const DevicePack& shard = shards[r];
    const std::string name = detail::at("shards", r);
    if (!shard.is_sharded) detail::fail(ref::Errc::sharded_pack, name + ".is_sharded", "is a whole pack, not a shard");
    if (!shard.meta || shard.meta != first.meta) {
      detail::fail(ref::Errc::invalid_argument, name + ".meta", "belongs to another pack than shards[0]");
    }
    if (shard.causal_seq.rows != first.causal_seq.rows || shard.full_only_seq.rows != first.full_only_seq.rows ||
        shard.causal_seq.row_bytes != first.causal_seq.row_bytes ||
        shard.full_only_seq.row_bytes != first.full_only_seq.row_bytes) {
      detail::fail(ref::Errc::invalid_argument, name, "differs in stream rows or row width from shards[0]");
    }
    if (!shard.num_causal_tokens_local || !shard.num_full_tokens_local) {
      detail::fail(ref::Errc::invalid_argument, "pack.num_causal_tokens_local",
                   name + " lacks its local real-row counts (shard_pack sets them)");
    }
    causal_real += *shard.num_causal_tokens_local;
    full_real += *shard.num_full_tokens_local;
  }
  const ref::Metadata& m = first.meta->summary;
  if (causal_real != m.num_causal_tokens || full_real != m.num_full_tokens) {
    detail::fail(ref::Errc::invalid_argument, "shards",
                 "the shards hold " + std::to_string(causal_real) + " causal and " + std::to_string(full_real) +
                     " full real rows, the pack " + std::to_string(m.num_causal_tokens) + " and " +
                     std::to_string(m.num_full_tokens) + ": a rank is missing or repeated");
  }
  const std::size_t n = shards.size();
  const detail::SerialWhenSmall scope(n * (first.causal_seq.bytes.size() + first.full_only_seq.bytes.size() +
                                           8 * (first.causal_sample_ids.size() + first.full_only_sample_ids.size())));
  DevicePack whole;
  whole.meta = first.meta;
  whole.max_num_tokens = first.max_num_tokens;
  whole.pad_segment = first.pad_segment;
  whole.causal_seq = detail::output_rows(first.causal_seq.rows * n, first.causal_seq.row_bytes, s);
  whole.full_only_seq = detail::output_rows(first.full_only_seq.rows * n, first.full_only_seq.row_bytes, s);
  whole.causal_sample_ids = detail::output_ids<std::int64_t>(first.causal_sample_ids.size() * n, s);
  whole.full_only_sample_ids = detail::output_ids<std::int64_t>(first.full_only_sample_ids.size() * n, s);
  // Shard r's part of each array goes to [r * part, (r + 1) * part).
  const auto place = [s](const auto& part, auto& whole_array, std::size_t r) {
    thrust::copy(detail::exec(s), part.begin(), part.end(),
                 whole_array.begin() + static_cast<std::ptrdiff_t>(r * part.size()));
  };
  for (std::size_t r = 0; r < n; ++r) {
    place(shards[r].causal_seq.bytes, whole.causal_seq.bytes, r);
    place(shards[r].full_only_seq.bytes, whole.full_only_seq.bytes, r);
    place(shards[r].causal_sample_ids, whole.causal_sample_ids, r);
    place(shards[r].full_only_sample_ids, whole.full_only_sample_ids, r);
  }
  detail::check_device("gather_shards", s);
  return whole;
}

DevicePositionIds shard_position_ids(const DevicePositionIds& ids, const DevicePack& pack, std::int64_t rank,
                                     std::int64_t world_size, Stream s) {
  detail::check_world(rank, world_size);
  detail::check_position_ids(ids, pack, "shard_position_ids");
  const std::size_t causal_len = detail::shard_len(pack.causal_seq.rows, world_size, "causal_seq");
  const std::size_t full_len = detail::shard_len(pack.full_only_seq.rows, world_size, "full_only_seq");
  const auto r = static_cast<std::size_t>(rank);
  const detail::SerialWhenSmall scope(ids.axes * (causal_len + full_len) * 8 * 2);
  const DevicePositionIds und = detail::gather_ids(ids, pack.meta->causal_indices, r * causal_len, causal_len, s);
  const DevicePositionIds gen = detail::gather_ids(ids, pack.meta->full_indices, r * full_len, full_len, s);
  // [causal shard ; full shard] per axis.
  const std::size_t len = causal_len + full_len;
  DevicePositionIds out{ids.two_dimensional, ids.axes, len, detail::output_ids<std::int64_t>(ids.axes * len, s)};
  const auto axis = [](const DeviceBuffer<std::int64_t>& v, std::size_t at) {
    return v.begin() + static_cast<std::ptrdiff_t>(at);
  };
  for (std::size_t a = 0; a < ids.axes; ++a) {
    thrust::copy(detail::exec(s), axis(und.values, a * causal_len), axis(und.values, (a + 1) * causal_len),
                 out.values.begin() + static_cast<std::ptrdiff_t>(a * len));
    thrust::copy(detail::exec(s), axis(gen.values, a * full_len), axis(gen.values, (a + 1) * full_len),
                 out.values.begin() + static_cast<std::ptrdiff_t>(a * len + causal_len));
  }
  // und and gen are freed on s as this returns, after the copies above (stream-ordered).
  detail::check_device("shard_position_ids", s);
  return out;
}

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
