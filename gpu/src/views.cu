// Views of a pack and packs made from another pack's metadata: row scatters
// and gathers through the metadata's index arrays. Mirrors
// reference/src/views.cpp.
#include "detail.cuh"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace {

std::size_t bytes_of(const DevicePack& pack) { return pack.causal_seq.bytes.size() + pack.full_only_seq.bytes.size(); }

}  // namespace

DeviceRows get_all_seq(const DevicePack& pack, Stream s) {
  detail::require_unsharded(pack, "get_all_seq");
  const detail::SerialWhenSmall scope(bytes_of(pack));
  DeviceRows out =
      detail::output_rows(static_cast<std::size_t>(pack.meta->summary.num_tokens()), pack.causal_seq.row_bytes, s);
  detail::move_rows(pack.causal_seq, out, pack.meta->causal_indices, true, s);
  detail::move_rows(pack.full_only_seq, out, pack.meta->full_indices, true, s);
  detail::check_device("get_all_seq", s);
  return out;
}

DeviceAllSeqPadded get_all_seq_padded(const DevicePack& pack, Stream s) {
  detail::require_unsharded(pack, "get_all_seq_padded");
  const ref::Metadata& m = pack.meta->summary;
  if (!pack.pad_segment) return {get_all_seq(pack, s), m.sample_offsets, m.max_sample_len};
  const detail::SerialWhenSmall scope(bytes_of(pack));
  DeviceRows out = detail::output_rows(pack.causal_seq.rows + pack.full_only_seq.rows, pack.causal_seq.row_bytes, s);
  detail::move_rows(pack.causal_seq, out, pack.meta->causal_indices, true, s);
  detail::move_rows(pack.full_only_seq, out, pack.meta->full_indices, true, s);
  detail::zero_tail(out, static_cast<std::size_t>(m.num_tokens()), s);
  detail::check_device("get_all_seq_padded", s);
  return {std::move(out), pack.pad_segment->sample_offsets, pack.pad_segment->max_sample_len};
}

void set_all_seq(DevicePack& pack, const DeviceRows& value, Stream s) {
  detail::require_unsharded(pack, "set_all_seq");
  const auto rows = static_cast<std::size_t>(pack.meta->summary.num_tokens());
  if (value.rows != rows || value.row_bytes != pack.causal_seq.row_bytes) {
    detail::fail(ref::Errc::invalid_argument, "value",
                 std::to_string(value.rows) + " rows of " + std::to_string(value.row_bytes) +
                     " bytes given, the pack takes " + std::to_string(rows) + " rows of " +
                     std::to_string(pack.causal_seq.row_bytes) + " bytes");
  }
  const detail::SerialWhenSmall scope(value.bytes.size());
  detail::move_rows(value, pack.causal_seq, pack.meta->causal_indices, false, s);
  detail::move_rows(value, pack.full_only_seq, pack.meta->full_indices, false, s);
  detail::check_device("set_all_seq", s);
}

DevicePack from_all_seq(const DeviceRows& packed, const DevicePack& source, Stream s) {
  if (source.is_sharded) {
    // A shard's rows arrive as [local causal ; local full], split at the local causal length.
    const std::size_t local = source.causal_seq.rows + source.full_only_seq.rows;
    if (packed.rows != local) {
      detail::fail(ref::Errc::invalid_argument, "packed",
                   std::to_string(packed.rows) + " rows given, the local shard takes " + std::to_string(local));
    }
    const detail::SerialWhenSmall scope(packed.bytes.size());
    DevicePack out = zeros_like(source, packed.row_bytes, s);
    const auto split = packed.bytes.begin() + static_cast<std::ptrdiff_t>(source.causal_seq.rows * packed.row_bytes);
    thrust::copy(detail::exec(s), packed.bytes.begin(), split, out.causal_seq.bytes.begin());
    thrust::copy(detail::exec(s), split, packed.bytes.end(), out.full_only_seq.bytes.begin());
    detail::check_device("from_all_seq", s);
    return out;
  }
  const auto rows = static_cast<std::size_t>(source.meta->summary.num_tokens());
  if (packed.rows != rows) {
    detail::fail(ref::Errc::invalid_argument, "packed",
                 std::to_string(packed.rows) + " rows given, the packed sequence has " + std::to_string(rows));
  }
  const detail::SerialWhenSmall scope((source.causal_seq.rows + source.full_only_seq.rows) * packed.row_bytes);
  DevicePack out = zeros_like(source, packed.row_bytes, s);
  detail::move_rows(packed, out.causal_seq, source.meta->causal_indices, false, s);
  detail::move_rows(packed, out.full_only_seq, source.meta->full_indices, false, s);
  detail::check_device("from_all_seq", s);
  return out;
}

DevicePack zeros_like(const DevicePack& source, std::optional<std::size_t> row_bytes, Stream s) {
  const std::size_t causal_width = row_bytes.value_or(source.causal_seq.row_bytes);
  const std::size_t full_width = row_bytes.value_or(source.full_only_seq.row_bytes);
  const detail::SerialWhenSmall scope(source.causal_seq.rows * (causal_width + 8) +
                                      source.full_only_seq.rows * (full_width + 8));
  DevicePack out;
  out.meta = source.meta;
  out.max_num_tokens = source.max_num_tokens;
  out.causal_sample_ids = detail::copy_of(source.causal_sample_ids, s);
  out.full_only_sample_ids = detail::copy_of(source.full_only_sample_ids, s);
  out.pad_segment = source.pad_segment;
  out.is_sharded = source.is_sharded;
  out.num_causal_tokens_local = source.num_causal_tokens_local;
  out.num_full_tokens_local = source.num_full_tokens_local;
  out.causal_seq = detail::output_rows(source.causal_seq.rows, causal_width, s);
  out.full_only_seq = detail::output_rows(source.full_only_seq.rows, full_width, s);
  detail::zero_tail(out.causal_seq, 0, s);
  detail::zero_tail(out.full_only_seq, 0, s);
  detail::check_device("zeros_like", s);
  return out;
}

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
