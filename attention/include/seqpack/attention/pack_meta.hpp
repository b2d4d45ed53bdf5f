// PackMeta: what the consequence oracle reads of a pack, as plain std data, so
// that the runner can fill it from a port's JSON answer (protocol/PROTOCOL.md,
// "Result": field names are the wire's) and a test from a reference Pack
// (from_reference). The passes over it are passes.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seqpack/reference/types.hpp"

namespace seqpack::attention {

/// The trailing pad segment (wire: `pack.pad_segment`; the original's
/// `_*_pad_segment` fields and `max_*_len_pad_segment`).
struct PadSegmentMeta {
  std::vector<std::int64_t> causal_seq_offsets;  ///< [causal splits + 2]
  std::int64_t max_causal_len = 0;
  std::vector<std::int64_t> full_only_seq_offsets;  ///< [full splits + 2]
  std::int64_t max_full_len = 0;
  std::vector<std::int64_t> sample_offsets;  ///< [samples + 2]
  std::int64_t max_sample_len = 0;
};

/// A pack's metadata and stream contents as the attention passes read them.
/// Every vector is the wire field of the same name under `pack`; rows are
/// identified by packed-sequence row (>= 0) or -1 for padding.
struct PackMeta {
  std::vector<std::int64_t> sample_offsets;  ///< plain, [samples + 1]
  std::int64_t max_sample_len = 0;
  std::int64_t max_causal_len = 0;
  std::int64_t max_full_len = 0;
  std::vector<std::int64_t> causal_indices;         ///< packed position of each real causal row
  std::vector<std::int64_t> full_indices;           ///< packed position of each real full row
  std::vector<std::int64_t> causal_seq_offsets;     ///< plain, [causal splits + 1]
  std::vector<std::int64_t> full_only_seq_offsets;  ///< plain, [full splits + 1]
  std::int64_t num_causal_tokens = 0;
  std::int64_t num_full_tokens = 0;
  std::vector<std::int64_t> causal_sample_ids;     ///< one per padded causal row; padding = samples
  std::vector<std::int64_t> full_only_sample_ids;  ///< one per padded full row; padding = samples
  std::vector<std::int64_t> causal_rows;           ///< one per padded causal row: packed row or -1
  std::vector<std::int64_t> full_only_rows;        ///< one per padded full row: packed row or -1
  std::optional<PadSegmentMeta> pad_segment;       ///< wire `null` when absent
  bool is_sharded = false;
  // From the case's options (wire: `options`), for the block-sparse routes.
  std::int64_t full_seq_alignment = 1;
  std::int64_t causal_seq_alignment = 1;

  /// Samples: sample_offsets entries - 1 (0 when empty).
  std::int64_t num_samples() const noexcept {
    return sample_offsets.empty() ? 0 : static_cast<std::int64_t>(sample_offsets.size()) - 1;
  }
  /// Padded stream lengths (the row vectors' lengths).
  std::int64_t causal_len() const noexcept { return static_cast<std::int64_t>(causal_rows.size()); }
  std::int64_t full_len() const noexcept { return static_cast<std::int64_t>(full_only_rows.size()); }
};

/// The PackMeta of a reference pack. Stream rows follow the reference's
/// gather (row i < num_*_tokens holds *_indices[i], the rest is padding);
/// `options` supplies the alignments (the Pack does not keep them).
PackMeta from_reference(const reference::Pack& pack, const reference::Options& options = {});

/// Structural checks that every pass relies on (vector lengths agree, indices
/// and rows in range). Returns an empty string when sound, else a message
/// naming the field; the oracle reports it as a refusal.
std::string check_pack_meta(const PackMeta& meta);

}  // namespace seqpack::attention
