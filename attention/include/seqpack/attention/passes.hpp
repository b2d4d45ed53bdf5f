// The attention passes a pack feeds, derived from the original's text
// (PASSES.md in this folder has the derivation and the lines it rests on):
// for each pass, the streams it reads (as packed-row identities), the offsets
// and maxima it passes to the kernel, and whether it reads the pad segment.
// Neighbours: pack_meta.hpp (the input), consequences.hpp (what runs them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqpack/attention/pack_meta.hpp"
#include "seqpack/attention/varlen.hpp"

namespace seqpack::attention {

/// The consumer passes, in the order the report lists them.
enum class PassKind : std::uint8_t {
  und_causal,  ///< causal self-attention over the causal (und) stream
  gen_full,    ///< two-way self-attention over the full (gen) stream
  gen_to_und,  ///< gen queries against und keys, segment for segment
  dense_full,  ///< two-way: gen queries against get_all_seq_padded's interleaved stream
  flex_gen,    ///< block-sparse: gen queries against [und | gen] by sample id
};

/// A short id: "und_causal", "gen_full", "gen_to_und", "dense_full", "flex_gen".
const char* pass_id(PassKind kind) noexcept;
/// The name used in consequence lines, e.g. "the dense full pass".
const char* pass_name(PassKind kind) noexcept;

/// Which offsets a derivation uses: the pack's own choice (the pad-segment
/// variant when the pack carries one, as the original's getters prefer it), or
/// the unpadded streams (real rows only) with the plain offsets.
enum class Variant : std::uint8_t { as_packed, unpadded };

/// A stream's rows: the packed-sequence row each holds, or -1 for padding.
using RowIds = std::vector<std::int64_t>;

/// One attention call as a consumer makes it.
struct Pass {
  PassKind kind = PassKind::und_causal;
  bool block_sparse = false;  ///< flex route (mask by sample id) instead of varlen
  RowIds q_rows;              ///< the query stream
  RowIds kv_rows;             ///< the key/value stream
  // varlen routes
  VarlenArgs args;
  std::string cu_q_field, cu_k_field, max_q_field, max_k_field;  ///< wire names, for messages
  bool uses_pad_segment = false;
  // block-sparse routes
  std::vector<std::int64_t> q_sample_ids, kv_sample_ids;
  bool causal = false;
  std::int64_t block_size = 1;  ///< the alignment the original's docstring ties to the block size
};

/// The passes `meta` feeds under `variant`. A pass is listed only where its
/// query stream is non-empty or has segments (PASSES.md says why each is
/// present). Throws std::invalid_argument where the pack cannot be read as the
/// original reads it (an index outside get_all_seq_padded's buffer; a
/// malformed pack per check_pack_meta).
std::vector<Pass> derive_passes(const PackMeta& meta, Variant variant);

}  // namespace seqpack::attention
