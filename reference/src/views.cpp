// Views of a pack and packs made from another pack's metadata.
#include "seqpack/reference/views.hpp"

#include <cstring>
#include <string>

#include "row_copy.hpp"
#include "seqpack/common/index_math.hpp"
#include "seqpack/reference/errors.hpp"

namespace seqpack::reference {
namespace {

Refusal unsharded_fault(const Pack& pack, const char* operation) {
  if (!pack.is_sharded) return std::nullopt;
  return Error(Errc::sharded_pack, "pack.is_sharded",
               std::string(operation) + " needs the whole pack, but this one is a context-parallel shard");
}
void require_unsharded(const Pack& pack, const char* operation) {
  if (auto e = unsharded_fault(pack, operation)) throw *e;
}

Refusal meta_fault(const Pack& pack) {
  if (pack.meta) return std::nullopt;
  return Error(Errc::invalid_argument, "pack.meta", "the pack has no metadata");
}
void require_meta(const Pack& pack) {
  if (auto e = meta_fault(pack)) throw *e;
}

void require_rows(const Rows& value, std::size_t rows, const char* field, const char* what) {
  if (value.rows() != rows) {
    throw Error(Errc::invalid_argument, field,
                "has " + std::to_string(value.rows()) + " rows, " + what + " has " + std::to_string(rows));
  }
}

Refusal width_fault(const Rows& value, std::size_t width, const char* field) {
  if (value.row_bytes() == width) return std::nullopt;
  return Error(
      Errc::invalid_argument, field,
      "rows of " + std::to_string(value.row_bytes()) + " bytes, the pack's streams have " + std::to_string(width));
}
void require_width(const Rows& value, std::size_t width, const char* field) {
  if (auto e = width_fault(value, width, field)) throw *e;
}

// Writes stream rows [0, indices.size()) to their packed positions in `out`.
void scatter_rows(const Rows& stream, const std::vector<std::int32_t>& indices, Rows& out) {
  const std::size_t width = stream.row_bytes();
  if (width == 0) return;
  for (std::size_t i = 0; i < indices.size(); ++i) {
    detail::copy_row(out.row(static_cast<std::size_t>(indices[i])), stream.row(i), width);
  }
}

// Reads packed positions `indices` of `value` into stream rows [0, indices.size()).
void gather_rows(const Rows& value, const std::vector<std::int32_t>& indices, Rows& stream) {
  const std::size_t width = value.row_bytes();
  if (width == 0) return;
  for (std::size_t i = 0; i < indices.size(); ++i) {
    detail::copy_row(stream.row(i), value.row(static_cast<std::size_t>(indices[i])), width);
  }
}

// The real rows of both streams in packed order, in a buffer of `rows` rows.
Rows interleave(const Pack& pack, std::size_t rows) {
  require_width(pack.full_only_seq, pack.causal_seq.row_bytes(), "pack.full_only_seq");
  Rows out(rows, pack.causal_seq.row_bytes());
  scatter_rows(pack.causal_seq, pack.meta->causal_indices, out);
  scatter_rows(pack.full_only_seq, pack.meta->full_indices, out);
  return out;
}

Refusal real_rows_fault(const Pack& pack) {
  if (auto e = meta_fault(pack)) return e;
  if (pack.causal_seq.rows() < pack.meta->causal_indices.size()) {
    return Error(Errc::invalid_argument, "pack.causal_seq",
                 "holds " + std::to_string(pack.causal_seq.rows()) + " rows, fewer than its " +
                     std::to_string(pack.meta->causal_indices.size()) + " real rows");
  }
  if (pack.full_only_seq.rows() < pack.meta->full_indices.size()) {
    return Error(Errc::invalid_argument, "pack.full_only_seq",
                 "holds " + std::to_string(pack.full_only_seq.rows()) + " rows, fewer than its " +
                     std::to_string(pack.meta->full_indices.size()) + " real rows");
  }
  return std::nullopt;
}
void require_real_rows_fit(const Pack& pack) {
  if (auto e = real_rows_fault(pack)) throw *e;
}

// The checks of get_all_seq and get_all_seq_padded, in their order.
Refusal interleave_fault(const Pack& pack, const char* operation) {
  if (auto e = meta_fault(pack)) return e;
  if (auto e = unsharded_fault(pack, operation)) return e;
  if (auto e = real_rows_fault(pack)) return e;
  return width_fault(pack.full_only_seq, pack.causal_seq.row_bytes(), "pack.full_only_seq");
}

}  // namespace

const Rows& get_und_seq(const Pack& pack) { return pack.causal_seq; }
const Rows& get_gen_seq(const Pack& pack) { return pack.full_only_seq; }

void set_und_seq(Pack& pack, Rows value) {
  require_rows(value, pack.causal_seq.rows(), "value", "the causal stream");
  pack.causal_seq = std::move(value);
}

void set_gen_seq(Pack& pack, Rows value) {
  require_rows(value, pack.full_only_seq.rows(), "value", "the full stream");
  pack.full_only_seq = std::move(value);
}

StreamView get_causal_seq(const Pack& pack) {
  require_meta(pack);
  return {pack.causal_seq, pack.meta->causal_seq_offsets};
}

StreamView get_full_only_seq(const Pack& pack) {
  require_meta(pack);
  return {pack.full_only_seq, pack.meta->full_only_seq_offsets};
}

bool has_pad_segment(const Pack& pack) noexcept { return pack.pad_segment.has_value(); }

Refusal get_causal_seq_padded_refusal(const Pack& pack) {
  if (auto e = meta_fault(pack)) return e;
  if (!pack.pad_segment) return std::nullopt;
  // Pad-segment offsets describe the unsharded stream (get_causal_seq_padded asserts the same).
  return unsharded_fault(pack, "get_causal_seq_padded with a pad segment");
}

PaddedStreamView get_causal_seq_padded(const Pack& pack) {
  if (auto e = get_causal_seq_padded_refusal(pack)) throw *e;
  if (!pack.pad_segment) return {pack.causal_seq, pack.meta->causal_seq_offsets, pack.meta->max_causal_len};
  return {pack.causal_seq, pack.pad_segment->causal_seq_offsets, pack.pad_segment->max_causal_len};
}

Refusal get_full_only_seq_padded_refusal(const Pack& pack) {
  if (auto e = meta_fault(pack)) return e;
  if (!pack.pad_segment) return std::nullopt;
  return unsharded_fault(pack, "get_full_only_seq_padded with a pad segment");
}

PaddedStreamView get_full_only_seq_padded(const Pack& pack) {
  if (auto e = get_full_only_seq_padded_refusal(pack)) throw *e;
  if (!pack.pad_segment) return {pack.full_only_seq, pack.meta->full_only_seq_offsets, pack.meta->max_full_len};
  return {pack.full_only_seq, pack.pad_segment->full_only_seq_offsets, pack.pad_segment->max_full_len};
}

Refusal get_all_seq_refusal(const Pack& pack) { return interleave_fault(pack, "get_all_seq"); }

Rows get_all_seq(const Pack& pack) {
  if (auto e = get_all_seq_refusal(pack)) throw *e;
  return interleave(pack, static_cast<std::size_t>(pack.meta->num_tokens()));
}

Refusal get_all_seq_padded_refusal(const Pack& pack) { return interleave_fault(pack, "get_all_seq_padded"); }

AllSeqPadded get_all_seq_padded(const Pack& pack) {
  if (auto e = get_all_seq_padded_refusal(pack)) throw *e;
  if (!pack.pad_segment) return {get_all_seq(pack), pack.meta->sample_offsets, pack.meta->max_sample_len};
  // The tail past the real rows is the two streams' padding together; it stays zero.
  return {interleave(pack, pack.causal_seq.rows() + pack.full_only_seq.rows()), pack.pad_segment->sample_offsets,
          pack.pad_segment->max_sample_len};
}

void set_all_seq(Pack& pack, const Rows& value) {
  require_meta(pack);
  // The original does not check; on a shard it would write past the local rows.
  require_unsharded(pack, "set_all_seq");
  require_real_rows_fit(pack);
  require_rows(value, static_cast<std::size_t>(pack.meta->num_tokens()), "value", "the packed sequence");
  require_width(value, pack.causal_seq.row_bytes(), "value");
  require_width(value, pack.full_only_seq.row_bytes(), "value");
  gather_rows(value, pack.meta->causal_indices, pack.causal_seq);
  gather_rows(value, pack.meta->full_indices, pack.full_only_seq);
}

Pack from_mode_splits(Rows causal_seq, Rows full_only_seq, const Pack& source, std::optional<bool> is_sharded) {
  require_meta(source);
  // Everything but the streams, which are not copied only to be replaced.
  Pack out;
  out.meta = source.meta;
  copy_pack_scalars(source, out);
  out.causal_sample_ids = source.causal_sample_ids;
  out.full_only_sample_ids = source.full_only_sample_ids;
  out.causal_seq = std::move(causal_seq);
  out.full_only_seq = std::move(full_only_seq);
  out.is_sharded = is_sharded.value_or(source.is_sharded);
  return out;
}

Pack from_und_gen_splits(Rows und_seq, Rows gen_seq, const Pack& source) {
  return from_mode_splits(std::move(und_seq), std::move(gen_seq), source);
}

Pack zeros_like(const Pack& source, std::optional<std::size_t> row_bytes) {
  return from_mode_splits(Rows(source.causal_seq.rows(), row_bytes.value_or(source.causal_seq.row_bytes())),
                          Rows(source.full_only_seq.rows(), row_bytes.value_or(source.full_only_seq.row_bytes())),
                          source);
}

Pack from_all_seq(const Rows& packed, const Pack& source) {
  require_meta(source);
  const std::size_t width = packed.row_bytes();
  if (source.is_sharded) {
    // A shard's rows arrive as [local causal ; local full]; the original splits at
    // the local causal length and takes whatever follows (here: exactly).
    const std::size_t causal_rows = source.causal_seq.rows();
    require_rows(packed, causal_rows + source.full_only_seq.rows(), "packed", "the local shard");
    Rows causal(causal_rows, width);
    Rows full(source.full_only_seq.rows(), width);
    if (causal.size_bytes() != 0) std::memcpy(causal.data(), packed.data(), causal.size_bytes());
    if (full.size_bytes() != 0) std::memcpy(full.data(), packed.row(causal_rows), full.size_bytes());
    return from_mode_splits(std::move(causal), std::move(full), source);
  }
  require_real_rows_fit(source);
  require_rows(packed, static_cast<std::size_t>(source.meta->num_tokens()), "packed", "the packed sequence");
  Rows causal(source.causal_seq.rows(), width);
  Rows full(source.full_only_seq.rows(), width);
  gather_rows(packed, source.meta->causal_indices, causal);
  gather_rows(packed, source.meta->full_indices, full);
  return from_mode_splits(std::move(causal), std::move(full), source);
}

std::pair<std::int64_t, std::int64_t> get_num_real_tokens(const Pack& pack) {
  require_meta(pack);
  if (!pack.is_sharded) return {pack.meta->num_causal_tokens, pack.meta->num_full_tokens};
  if (!pack.num_causal_tokens_local || !pack.num_full_tokens_local) {
    throw Error(Errc::invalid_argument, "pack.num_causal_tokens_local",
                "a sharded pack must carry its local real-row counts; make it with shard_pack");
  }
  return {*pack.num_causal_tokens_local, *pack.num_full_tokens_local};
}

std::int64_t num_local_real_tokens(std::int64_t num_real, std::int64_t rank, std::int64_t shard_len) {
  if (num_real < 0)
    throw Error(Errc::invalid_argument, "num_real_tokens", "must be >= 0, got " + std::to_string(num_real));
  if (rank < 0) throw Error(Errc::invalid_argument, "rank", "must be >= 0, got " + std::to_string(rank));
  if (shard_len < 0) throw Error(Errc::invalid_argument, "shard_len", "must be >= 0, got " + std::to_string(shard_len));
  // rank * shard_len may pass int64 for absurd ranks; any such shard starts past the stream.
  if (shard_len != 0 && rank > num_real / shard_len) return 0;
  return common::num_local_real_tokens(num_real, rank, shard_len);
}

}  // namespace seqpack::reference
