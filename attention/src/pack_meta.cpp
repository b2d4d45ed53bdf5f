// from_reference and check_pack_meta (pack_meta.hpp).
#include "seqpack/attention/pack_meta.hpp"

#include <string>

#include "seqpack/reference/types.hpp"

namespace seqpack::attention {

namespace {

std::vector<std::int64_t> widen(const std::vector<std::int32_t>& v) { return {v.begin(), v.end()}; }

std::vector<std::int64_t> stream_rows(const std::vector<std::int32_t>& indices, std::size_t padded) {
  std::vector<std::int64_t> rows(indices.begin(), indices.end());
  rows.resize(padded, -1);
  return rows;
}

}  // namespace

PackMeta from_reference(const reference::Pack& pack, const reference::Options& options) {
  const reference::Metadata& m = *pack.meta;
  PackMeta out;
  out.sample_offsets = widen(m.sample_offsets);
  out.max_sample_len = m.max_sample_len;
  out.max_causal_len = m.max_causal_len;
  out.max_full_len = m.max_full_len;
  out.causal_indices = widen(m.causal_indices);
  out.full_indices = widen(m.full_indices);
  out.causal_seq_offsets = widen(m.causal_seq_offsets);
  out.full_only_seq_offsets = widen(m.full_only_seq_offsets);
  out.num_causal_tokens = m.num_causal_tokens;
  out.num_full_tokens = m.num_full_tokens;
  out.causal_sample_ids = pack.causal_sample_ids;
  out.full_only_sample_ids = pack.full_only_sample_ids;
  out.causal_rows = stream_rows(m.causal_indices, pack.causal_seq.rows());
  out.full_only_rows = stream_rows(m.full_indices, pack.full_only_seq.rows());
  if (pack.pad_segment) {
    const reference::PadSegment& p = *pack.pad_segment;
    out.pad_segment =
        PadSegmentMeta{widen(p.causal_seq_offsets), p.max_causal_len, widen(p.full_only_seq_offsets), p.max_full_len,
                       widen(p.sample_offsets),     p.max_sample_len};
  }
  out.is_sharded = pack.is_sharded;
  out.full_seq_alignment = options.full_seq_alignment;
  out.causal_seq_alignment = options.causal_seq_alignment;
  return out;
}

std::string check_pack_meta(const PackMeta& meta) {
  if (meta.sample_offsets.empty()) return "sample_offsets is empty";
  const std::int64_t n = meta.sample_offsets.back();
  if (meta.causal_sample_ids.size() != meta.causal_rows.size())
    return "causal_sample_ids has " + std::to_string(meta.causal_sample_ids.size()) + " entries for " +
           std::to_string(meta.causal_rows.size()) + " causal rows";
  if (meta.full_only_sample_ids.size() != meta.full_only_rows.size())
    return "full_only_sample_ids has " + std::to_string(meta.full_only_sample_ids.size()) + " entries for " +
           std::to_string(meta.full_only_rows.size()) + " full rows";
  for (const auto* rows : {&meta.causal_rows, &meta.full_only_rows})
    for (const std::int64_t r : *rows)
      if (r < -1 || r >= n)
        return std::string(rows == &meta.causal_rows ? "causal_rows" : "full_only_rows") + " holds " +
               std::to_string(r) + ", outside [-1, " + std::to_string(n) + ")";
  if (static_cast<std::int64_t>(meta.causal_indices.size()) > meta.causal_len())
    return "causal_indices has more entries than the causal stream has rows";
  if (static_cast<std::int64_t>(meta.full_indices.size()) > meta.full_len())
    return "full_indices has more entries than the full stream has rows";
  return {};
}

}  // namespace seqpack::attention
