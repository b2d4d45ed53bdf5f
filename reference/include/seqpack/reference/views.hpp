// Views of a pack: stream getters and setters, the interleaved stream, and
// packs made from other packs' metadata.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "seqpack/reference/errors.hpp"
#include "seqpack/reference/types.hpp"

namespace seqpack::reference {

/// The causal (understanding) stream, padded.
const Rows& get_und_seq(const Pack& pack);
/// The full (generation) stream, padded.
const Rows& get_gen_seq(const Pack& pack);
/// Replaces the causal stream. `value` must have the stream's row count (any
/// width); the original accepts any tensor.
void set_und_seq(Pack& pack, Rows value);
/// Replaces the full stream; as set_und_seq.
void set_gen_seq(Pack& pack, Rows value);

/// A stream with its plain offsets.
struct StreamView {
  const Rows& seq;
  const std::vector<std::int32_t>& offsets;
};
/// A stream with the offsets and maximum that varlen attention should use.
struct PaddedStreamView {
  const Rows& seq;
  const std::vector<std::int32_t>& offsets;
  std::int32_t max_len;
};

StreamView get_causal_seq(const Pack& pack);
StreamView get_full_only_seq(const Pack& pack);
/// Pad-segment offsets and maximum when the pack has them, else the plain ones.
/// sharded_pack if the pack is sharded and has a pad segment.
PaddedStreamView get_causal_seq_padded(const Pack& pack);
PaddedStreamView get_full_only_seq_padded(const Pack& pack);
/// What get_causal_seq_padded / get_full_only_seq_padded would throw (errors.hpp, Refusal).
Refusal get_causal_seq_padded_refusal(const Pack& pack);
Refusal get_full_only_seq_padded_refusal(const Pack& pack);

bool has_pad_segment(const Pack& pack) noexcept;

/// The real rows scattered back to packed order: [num_tokens, row width].
/// sharded_pack on a sharded pack.
Rows get_all_seq(const Pack& pack);
/// What get_all_seq would throw (errors.hpp, Refusal).
Refusal get_all_seq_refusal(const Pack& pack);

/// The interleaved stream for the two-way dense pass.
struct AllSeqPadded {
  Rows seq;
  std::vector<std::int32_t> offsets;
  std::int32_t max_len = 0;
};
/// With a pad segment: padded causal + padded full rows, real rows at their
/// packed positions and a zero tail, with the pad-segment sample offsets.
/// Without: get_all_seq with the plain sample offsets. sharded_pack when sharded.
AllSeqPadded get_all_seq_padded(const Pack& pack);
/// What get_all_seq_padded would throw (errors.hpp, Refusal).
Refusal get_all_seq_padded_refusal(const Pack& pack);

/// Overwrites the real rows of both streams from `value`, in packed order
/// ([num_tokens] rows of the streams' width); padding is left as it is.
/// sharded_pack on a sharded pack.
void set_all_seq(Pack& pack, const Rows& value);

/// A pack with `source`'s metadata around two given streams. `is_sharded`
/// defaults to the source's. The streams are taken as they are (as the original).
Pack from_mode_splits(Rows causal_seq, Rows full_only_seq, const Pack& source,
                      std::optional<bool> is_sharded = std::nullopt);
/// Same as from_mode_splits: und maps to causal, gen to full.
Pack from_und_gen_splits(Rows und_seq, Rows gen_seq, const Pack& source);

/// A pack with `source`'s metadata and zero streams of the same lengths;
/// `row_bytes` changes the row width (the original's shape (-1, ...)).
Pack zeros_like(const Pack& source, std::optional<std::size_t> row_bytes = std::nullopt);

/// Gathers `packed` (packed order, [num_tokens] rows) into streams zero-padded to
/// `source`'s lengths. For a sharded source, `packed` is the concatenation of
/// the local causal and full shards and is split at the local causal length.
Pack from_all_seq(const Rows& packed, const Pack& source);

/// The real (causal, full) row counts: the local ones on a sharded pack.
std::pair<std::int64_t, std::int64_t> get_num_real_tokens(const Pack& pack);

/// Real rows of a stream with `num_real` real rows in rank `rank`'s shard of
/// `shard_len` rows. invalid_argument if any argument is negative.
std::int64_t num_local_real_tokens(std::int64_t num_real, std::int64_t rank, std::int64_t shard_len);

/// The current high-water marks (the original's get_padding_stats).
inline const GraphMarks& get_padding_stats(const GraphMarks& marks) noexcept { return marks; }

}  // namespace seqpack::reference
