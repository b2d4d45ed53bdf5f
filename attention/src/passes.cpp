// derive_passes (passes.hpp): the consumer passes, each built the way the
// original's getters hand a consumer its stream, offsets and maximum. The
// derivation and its line references: PASSES.md.
#include "seqpack/attention/passes.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace seqpack::attention {

const char* pass_id(PassKind kind) noexcept {
  switch (kind) {
    case PassKind::und_causal:
      return "und_causal";
    case PassKind::gen_full:
      return "gen_full";
    case PassKind::gen_to_und:
      return "gen_to_und";
    case PassKind::dense_full:
      return "dense_full";
    case PassKind::flex_gen:
      return "flex_gen";
  }
  return "?";
}

const char* pass_name(PassKind kind) noexcept {
  switch (kind) {
    case PassKind::und_causal:
      return "the causal (understanding) pass";
    case PassKind::gen_full:
      return "the full (generation) pass";
    case PassKind::gen_to_und:
      return "the generation-to-understanding pass";
    case PassKind::dense_full:
      return "the dense full pass";
    case PassKind::flex_gen:
      return "the block-sparse generation route";
  }
  return "?";
}

namespace {

// What get_causal_seq_padded / get_full_only_seq_padded / get_all_seq_padded
// hand a consumer: a stream (as row ids), its offsets and maximum, and the
// wire names of the fields they came from.
struct StreamView {
  RowIds rows;
  std::vector<std::int64_t> offsets;
  std::int64_t max_len = 0;
  std::string offsets_field, max_field;
  bool pad = false;
};

RowIds real_rows(const std::vector<std::int64_t>& indices) { return indices; }

// One stream's view: the pad-segment offsets and maximum when the pack has
// a segment and the variant takes the pack as it is, else the plain ones.
struct StreamFields {
  const std::vector<std::int64_t> PackMeta::*rows;
  const std::vector<std::int64_t> PackMeta::*indices;
  const std::vector<std::int64_t> PackMeta::*offsets;
  const std::vector<std::int64_t> PadSegmentMeta::*pad_offsets;
  std::int64_t PackMeta::*max_len;
  std::int64_t PadSegmentMeta::*pad_max_len;
  const char* offsets_name;
  const char* max_name;
};

StreamView stream_view(const PackMeta& m, Variant variant, const StreamFields& f) {
  StreamView s;
  const bool pad = variant == Variant::as_packed && m.pad_segment.has_value();
  s.rows = variant == Variant::as_packed ? m.*f.rows : real_rows(m.*f.indices);
  s.offsets = pad ? (*m.pad_segment).*f.pad_offsets : m.*f.offsets;
  s.max_len = pad ? (*m.pad_segment).*f.pad_max_len : m.*f.max_len;
  s.offsets_field = pad ? std::string("pad_segment.") + f.offsets_name : std::string(f.offsets_name);
  s.max_field = pad ? std::string("pad_segment.") + f.max_name : std::string(f.max_name);
  s.pad = pad;
  return s;
}

StreamView causal_view(const PackMeta& m, Variant variant) {
  return stream_view(m, variant,
                     {&PackMeta::causal_rows, &PackMeta::causal_indices, &PackMeta::causal_seq_offsets,
                      &PadSegmentMeta::causal_seq_offsets, &PackMeta::max_causal_len, &PadSegmentMeta::max_causal_len,
                      "causal_seq_offsets", "max_causal_len"});
}

StreamView full_view(const PackMeta& m, Variant variant) {
  return stream_view(m, variant,
                     {&PackMeta::full_only_rows, &PackMeta::full_indices, &PackMeta::full_only_seq_offsets,
                      &PadSegmentMeta::full_only_seq_offsets, &PackMeta::max_full_len, &PadSegmentMeta::max_full_len,
                      "full_only_seq_offsets", "max_full_len"});
}

// get_all_seq_padded (original ~660-708): with a pad segment, a zeroed buffer
// of both padded lengths with the real rows scattered to their packed
// positions; without, get_all_seq's real-rows-only buffer.
StreamView interleaved_view(const PackMeta& m, Variant variant, const StreamView& causal, const StreamView& full) {
  StreamView s;
  const bool pad = variant == Variant::as_packed && m.pad_segment.has_value();
  const std::size_t len = pad ? causal.rows.size() + full.rows.size() : m.causal_indices.size() + m.full_indices.size();
  s.rows.assign(len, -1);
  const auto scatter = [&](const std::vector<std::int64_t>& indices, const RowIds& stream, const char* name) {
    for (std::size_t i = 0; i < indices.size() && i < stream.size(); ++i) {
      const std::int64_t pos = indices[i];
      if (pos < 0 || static_cast<std::size_t>(pos) >= len)
        throw std::invalid_argument(std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(pos) +
                                    " is outside get_all_seq_padded's " + std::to_string(len) + " rows");
      s.rows[static_cast<std::size_t>(pos)] = stream[i];
    }
  };
  scatter(m.causal_indices, causal.rows, "causal_indices");
  scatter(m.full_indices, full.rows, "full_indices");
  s.offsets = pad ? m.pad_segment->sample_offsets : m.sample_offsets;
  s.max_len = pad ? m.pad_segment->max_sample_len : m.max_sample_len;
  s.offsets_field = pad ? "pad_segment.sample_offsets" : "sample_offsets";
  s.max_field = pad ? "pad_segment.max_sample_len" : "max_sample_len";
  s.pad = pad;
  return s;
}

Pass varlen_pass(PassKind kind, const StreamView& q, const StreamView& kv, bool causal) {
  Pass p;
  p.kind = kind;
  p.q_rows = q.rows;
  p.kv_rows = kv.rows;
  p.args.cu_seqlens_q = q.offsets;
  p.args.cu_seqlens_k = kv.offsets;
  p.args.max_seqlen_q = q.max_len;
  p.args.max_seqlen_k = kv.max_len;
  p.args.causal = causal;
  p.cu_q_field = q.offsets_field;
  p.cu_k_field = kv.offsets_field;
  p.max_q_field = q.max_field;
  p.max_k_field = kv.max_field;
  p.uses_pad_segment = q.pad || kv.pad;
  return p;
}

std::int64_t segments_of(const std::vector<std::int64_t>& offsets) {
  return offsets.empty() ? 0 : static_cast<std::int64_t>(offsets.size()) - 1;
}

std::vector<std::int64_t> ids_for(const std::vector<std::int64_t>& ids, std::size_t rows) {
  std::vector<std::int64_t> out(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(std::min(rows, ids.size())));
  out.resize(rows, -1);  // absent ids never match a real sample
  return out;
}

}  // namespace

std::vector<Pass> derive_passes(const PackMeta& meta, Variant variant) {
  if (const std::string problem = check_pack_meta(meta); !problem.empty()) throw std::invalid_argument(problem);
  const StreamView causal = causal_view(meta, variant);
  const StreamView full = full_view(meta, variant);
  const StreamView all = interleaved_view(meta, variant, causal, full);
  std::vector<Pass> passes;
  // get_causal_seq_padded: the causal tower's self-attention.
  if (!causal.rows.empty() || segments_of(causal.offsets) > 0)
    passes.push_back(varlen_pass(PassKind::und_causal, causal, causal, true));
  // get_full_only_seq_padded: the full tower's own (two-way) attention.
  if (!full.rows.empty() || segments_of(full.offsets) > 0)
    passes.push_back(varlen_pass(PassKind::gen_full, full, full, false));
  // The gen->und pass (original ~389-400, ~454-457): gen query segment i
  // against und key segment i; only where the pack has und segments at all.
  if (segments_of(meta.causal_seq_offsets) > 0 && segments_of(meta.full_only_seq_offsets) > 0)
    passes.push_back(varlen_pass(PassKind::gen_to_und, full, causal, false));
  // The two-way dense full pass: GEN queries keyed against the interleaved
  // stream (~474-481, ~660-708), a GEN segment paired with its own sample's
  // keys (the assertion at ~488-494); PASSES.md, choice 1.
  if (!full.rows.empty() || segments_of(full.offsets) > 0)
    passes.push_back(varlen_pass(PassKind::dense_full, full, all, false));
  // The fused FlexAttention path (docstring ~356-362): gen queries against
  // [und | gen], masked by per-row sample ids, blocks of full_seq_alignment.
  const std::size_t causal_n = causal.rows.size(), full_n = full.rows.size();
  const std::vector<std::int64_t>& causal_ids_src = meta.causal_sample_ids;
  const std::vector<std::int64_t>& full_ids_src = meta.full_only_sample_ids;
  if (full_n > 0) {
    Pass p;
    p.kind = PassKind::flex_gen;
    p.block_sparse = true;
    p.q_rows = full.rows;
    p.kv_rows = causal.rows;
    p.kv_rows.insert(p.kv_rows.end(), full.rows.begin(), full.rows.end());
    p.q_sample_ids = ids_for(full_ids_src, full_n);
    p.kv_sample_ids = ids_for(causal_ids_src, causal_n);
    const auto gen_ids = ids_for(full_ids_src, full_n);
    p.kv_sample_ids.insert(p.kv_sample_ids.end(), gen_ids.begin(), gen_ids.end());
    p.causal = false;
    p.block_size = meta.full_seq_alignment;
    p.uses_pad_segment = false;
    passes.push_back(std::move(p));
  }
  return passes;
}

}  // namespace seqpack::attention
