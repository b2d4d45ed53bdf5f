// Context-parallel sharding, gathering, and sharded position ids.
#include "seqpack/reference/context_parallel.hpp"

#include <cstring>
#include <string>

#include "seqpack/reference/errors.hpp"
#include "seqpack/reference/position_ids.hpp"
#include "seqpack/reference/views.hpp"

namespace seqpack::reference {
namespace {

void check_world(std::int64_t rank, std::int64_t world_size) {
  if (world_size < 1) {
    throw Error(Errc::invalid_option, "cp_world_size", "must be >= 1, got " + std::to_string(world_size));
  }
  if (rank < 0 || rank >= world_size) {
    throw Error(Errc::invalid_argument, "rank",
                "must lie in [0, " + std::to_string(world_size) + "), got " + std::to_string(rank));
  }
}

// The shard length of a stream of `rows` rows; not_divisible if it does not split evenly.
std::size_t shard_len(std::size_t rows, std::int64_t world_size, const char* field) {
  const auto w = static_cast<std::size_t>(world_size);
  if (rows % w != 0) {
    throw Error(Errc::not_divisible, field,
                std::to_string(rows) + " padded rows do not split into " + std::to_string(world_size) + " shards");
  }
  return rows / w;
}

Rows slice_rows(const Rows& rows, std::size_t first, std::size_t count) {
  Rows out(count, rows.row_bytes());
  if (out.size_bytes() != 0) std::memcpy(out.data(), rows.row(first), out.size_bytes());
  return out;
}

std::vector<std::int64_t> slice_ids(const std::vector<std::int64_t>& ids, std::size_t first, std::size_t count) {
  return {ids.begin() + static_cast<std::ptrdiff_t>(first), ids.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

void check_ids_cover(const Pack& pack) {
  if (pack.causal_sample_ids.size() != pack.causal_seq.rows()) {
    throw Error(
        Errc::invalid_argument, "pack.causal_sample_ids",
        std::to_string(pack.causal_sample_ids.size()) + " ids for " + std::to_string(pack.causal_seq.rows()) + " rows");
  }
  if (pack.full_only_sample_ids.size() != pack.full_only_seq.rows()) {
    throw Error(Errc::invalid_argument, "pack.full_only_sample_ids",
                std::to_string(pack.full_only_sample_ids.size()) + " ids for " +
                    std::to_string(pack.full_only_seq.rows()) + " rows");
  }
}

Rows concat(const std::vector<Pack>& shards, Rows Pack::*stream) {
  const Rows& first = shards.front().*stream;
  Rows out(first.rows() * shards.size(), first.row_bytes());
  for (std::size_t r = 0; r < shards.size(); ++r) {
    const Rows& part = shards[r].*stream;
    if (part.size_bytes() != 0) std::memcpy(out.row(r * first.rows()), part.data(), part.size_bytes());
  }
  return out;
}

std::vector<std::int64_t> concat_ids(const std::vector<Pack>& shards, std::vector<std::int64_t> Pack::*ids) {
  std::vector<std::int64_t> out;
  for (const Pack& shard : shards) out.insert(out.end(), (shard.*ids).begin(), (shard.*ids).end());
  return out;
}

}  // namespace

Pack shard_pack(const Pack& pack, std::int64_t rank, std::int64_t world_size) {
  check_world(rank, world_size);
  if (!pack.meta) throw Error(Errc::invalid_argument, "pack.meta", "the pack has no metadata");
  if (pack.is_sharded) throw Error(Errc::sharded_pack, "pack.is_sharded", "the pack is already a shard");
  check_ids_cover(pack);
  const std::size_t causal_len = shard_len(pack.causal_seq.rows(), world_size, "causal_seq");
  const std::size_t full_len = shard_len(pack.full_only_seq.rows(), world_size, "full_only_seq");
  const auto r = static_cast<std::size_t>(rank);

  Pack local;
  local.meta = pack.meta;
  local.max_num_tokens = pack.max_num_tokens;
  local.pad_segment = pack.pad_segment;  // global offsets, as every other offset of a shard
  local.causal_seq = slice_rows(pack.causal_seq, r * causal_len, causal_len);
  local.full_only_seq = slice_rows(pack.full_only_seq, r * full_len, full_len);
  local.causal_sample_ids = slice_ids(pack.causal_sample_ids, r * causal_len, causal_len);
  local.full_only_sample_ids = slice_ids(pack.full_only_sample_ids, r * full_len, full_len);
  local.is_sharded = true;
  local.num_causal_tokens_local =
      num_local_real_tokens(pack.meta->num_causal_tokens, rank, static_cast<std::int64_t>(causal_len));
  local.num_full_tokens_local =
      num_local_real_tokens(pack.meta->num_full_tokens, rank, static_cast<std::int64_t>(full_len));
  return local;
}

std::vector<Pack> shard_pack_all(const Pack& pack, std::int64_t world_size) {
  check_world(0, world_size);
  std::vector<Pack> shards;
  shards.reserve(static_cast<std::size_t>(world_size));
  for (std::int64_t r = 0; r < world_size; ++r) shards.push_back(shard_pack(pack, r, world_size));
  return shards;
}

Pack gather_shards(const std::vector<Pack>& shards) {
  if (shards.empty()) throw Error(Errc::invalid_argument, "shards", "no shards to gather");
  const Pack& first = shards.front();
  std::int64_t causal_real = 0;
  std::int64_t full_real = 0;
  for (std::size_t r = 0; r < shards.size(); ++r) {
    const Pack& s = shards[r];
    const std::string at = "shards[" + std::to_string(r) + "]";
    if (!s.is_sharded) throw Error(Errc::sharded_pack, at + ".is_sharded", "is not a context-parallel shard");
    if (!s.meta || s.meta != first.meta) {
      throw Error(Errc::invalid_argument, at + ".meta", "comes from another pack than shards[0]");
    }
    check_ids_cover(s);
    if (s.causal_seq.rows() != first.causal_seq.rows() || s.full_only_seq.rows() != first.full_only_seq.rows() ||
        s.causal_seq.row_bytes() != first.causal_seq.row_bytes() ||
        s.full_only_seq.row_bytes() != first.full_only_seq.row_bytes()) {
      throw Error(Errc::invalid_argument, at, "has another shard shape than shards[0]");
    }
    const auto [c, f] = get_num_real_tokens(s);
    causal_real += c;
    full_real += f;
  }
  if (causal_real != first.meta->num_causal_tokens || full_real != first.meta->num_full_tokens) {
    throw Error(Errc::invalid_argument, "shards",
                "local real rows add up to (" + std::to_string(causal_real) + ", " + std::to_string(full_real) +
                    "), the pack has (" + std::to_string(first.meta->num_causal_tokens) + ", " +
                    std::to_string(first.meta->num_full_tokens) + "): a rank is missing or repeated");
  }
  Pack whole;
  whole.meta = first.meta;
  whole.max_num_tokens = first.max_num_tokens;
  whole.pad_segment = first.pad_segment;
  whole.causal_seq = concat(shards, &Pack::causal_seq);
  whole.full_only_seq = concat(shards, &Pack::full_only_seq);
  whole.causal_sample_ids = concat_ids(shards, &Pack::causal_sample_ids);
  whole.full_only_sample_ids = concat_ids(shards, &Pack::full_only_sample_ids);
  return whole;
}

PositionIds shard_position_ids(const PositionIds& position_ids, const Pack& pack, std::int64_t rank,
                               std::int64_t world_size) {
  check_world(rank, world_size);
  // The checks of get_und_position_ids and get_gen_position_ids, whose ids
  // are sliced here: each stream's ids, zero past its real rows (the
  // padding), read only where the slice lies.
  if (auto e = get_und_position_ids_refusal(position_ids, pack)) throw *e;
  if (auto e = get_gen_position_ids_refusal(position_ids, pack)) throw *e;
  const std::size_t causal_len = shard_len(pack.causal_seq.rows(), world_size, "causal_seq");
  const std::size_t full_len = shard_len(pack.full_only_seq.rows(), world_size, "full_only_seq");
  const auto r = static_cast<std::size_t>(rank);

  PositionIds out;
  out.two_dimensional = position_ids.two_dimensional;
  out.axes = position_ids.axes;
  out.len = causal_len + full_len;
  out.values.reserve(out.axes * out.len);
  const auto append_slice = [&](const std::vector<std::int32_t>& indices, std::size_t axis, std::size_t first,
                                std::size_t count) {
    const std::int64_t* axis_ids = position_ids.values.data() + axis * position_ids.len;
    for (std::size_t i = first; i < first + count; ++i) {
      out.values.push_back(i < indices.size() ? axis_ids[indices[i]] : 0);
    }
  };
  for (std::size_t a = 0; a < out.axes; ++a) {
    append_slice(pack.meta->causal_indices, a, r * causal_len, causal_len);
    append_slice(pack.meta->full_indices, a, r * full_len, full_len);
  }
  return out;
}

}  // namespace seqpack::reference
