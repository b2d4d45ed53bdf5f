// The invariant catalogue's metadata properties (metadata.*: indices,
// offsets, sample ids, maxima, counts) and pad-segment properties
// (pad_segment.*). The catalogue is listed in catalogue.cpp;
// catalogue_internal.hpp declares what the files share.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "catalogue_internal.hpp"
#include "seqpack/properties/spec.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::properties::detail {

// --- metadata ----------------------------------------------------------------

void metadata_indices_partition(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const auto& m = *p.meta;
  std::vector<int> seen(static_cast<std::size_t>(c.rows), 0);
  for (const I32* idx : {&m.causal_indices, &m.full_indices}) {
    REQUIRE(std::is_sorted(idx->begin(), idx->end()), "indices not ascending " << show(*idx));
    for (const std::int32_t i : *idx) {
      REQUIRE(i >= 0 && i < c.rows, "index " << i << " outside [0, " << c.rows << ")");
      seen[static_cast<std::size_t>(i)]++;
    }
  }
  for (std::size_t i = 0; i < seen.size(); ++i)
    REQUIRE(seen[i] == 1, "row " << i << " covered " << seen[i] << " times");
  // Each index lies in a split of its stream's mode.
  const ref::Layout& L = c.layout;
  std::size_t ci = 0, fi = 0;
  std::int64_t pos = 0;
  for (std::size_t j = 0; j < L.split_lens.size(); ++j) {
    const bool causal = L.attn_modes[j] == "causal";
    for (std::int64_t r = 0; r < L.split_lens[j]; ++r, ++pos) {
      const I32& idx = causal ? m.causal_indices : m.full_indices;
      std::size_t& k = causal ? ci : fi;
      REQUIRE(k < idx.size() && idx[k] == pos, "row " << pos << " of split " << j << " is not next in its stream");
      ++k;
    }
  }
}

void metadata_offsets_prefix_sums(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const Streams s = streams_of(c.layout);
  REQUIRE(p.meta->causal_seq_offsets == prefix(s.causal_lens), show(p.meta->causal_seq_offsets)
                                                                   << " vs splits " << show(s.causal_lens));
  REQUIRE(p.meta->full_only_seq_offsets == prefix(s.full_lens), show(p.meta->full_only_seq_offsets)
                                                                    << " vs splits " << show(s.full_lens));
  REQUIRE(p.meta->sample_offsets == prefix(c.layout.sample_lens), show(p.meta->sample_offsets));
}

void metadata_sample_ids_agree(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  const auto& m = *p.meta;
  for (const auto& [idx, ids] :
       {std::pair{&m.causal_indices, &m.causal_sample_ids}, std::pair{&m.full_indices, &m.full_only_sample_ids}}) {
    REQUIRE(idx->size() == ids->size(), idx->size() << " indices, " << ids->size() << " ids");
    for (std::size_t i = 0; i < idx->size(); ++i) {
      const std::int64_t id = (*ids)[i];
      REQUIRE(id >= 0 && id < m.num_samples(), "sample id " << id);
      REQUIRE(m.sample_offsets[id] <= (*idx)[i] && (*idx)[i] < m.sample_offsets[id + 1],
              "row " << (*idx)[i] << " has sample id " << id << " but sample " << id << " covers ["
                     << m.sample_offsets[id] << ", " << m.sample_offsets[id + 1] << ")");
    }
  }
}

void metadata_maxima(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const Streams s = streams_of(c.layout);
  const auto mx = [](const I64& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); };
  REQUIRE(p.meta->max_sample_len == mx(c.layout.sample_lens), p.meta->max_sample_len);
  REQUIRE(p.meta->max_causal_len == mx(s.causal_lens), p.meta->max_causal_len);
  REQUIRE(p.meta->max_full_len == mx(s.full_lens), p.meta->max_full_len);
}

void metadata_counts(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const Streams s = streams_of(c.layout);
  REQUIRE(p.meta->num_causal_tokens == s.causal && p.meta->num_full_tokens == s.full,
          p.meta->num_causal_tokens << ", " << p.meta->num_full_tokens);
  REQUIRE(p.max_num_tokens == c.rows, p.max_num_tokens);
  REQUIRE(ref::get_num_real_tokens(p) == std::make_pair(s.causal, s.full), "get_num_real_tokens");
}

// --- pad segment -------------------------------------------------------------

void pad_segment_shape(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  if (!p.pad_segment) return;
  const auto& seg = *p.pad_segment;
  REQUIRE(seg.causal_seq_offsets.size() == p.meta->causal_seq_offsets.size() + 1, show(seg.causal_seq_offsets));
  REQUIRE(seg.full_only_seq_offsets.size() == p.meta->full_only_seq_offsets.size() + 1,
          show(seg.full_only_seq_offsets));
  REQUIRE(seg.sample_offsets.size() == p.meta->sample_offsets.size() + 1, show(seg.sample_offsets));
}

void pad_segment_supported_iff(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  REQUIRE(p.pad_segment.has_value() == pad_segment_expected(c),
          "has pad segment: " << p.pad_segment.has_value() << ", expected " << pad_segment_expected(c));
}

void pad_segment_non_empty(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  if (!p.pad_segment) return;
  for (const I32* v :
       {&p.pad_segment->causal_seq_offsets, &p.pad_segment->full_only_seq_offsets, &p.pad_segment->sample_offsets}) {
    REQUIRE(v->size() >= 2 && v->back() > (*v)[v->size() - 2], "empty last segment " << show(*v));
  }
}

void pad_segment_extends_plain(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  if (!p.pad_segment) return;
  I32 causal = p.meta->causal_seq_offsets, full = p.meta->full_only_seq_offsets, samples = p.meta->sample_offsets;
  causal.push_back(static_cast<std::int32_t>(p.causal_seq.rows()));
  full.push_back(static_cast<std::int32_t>(p.full_only_seq.rows()));
  samples.push_back(static_cast<std::int32_t>(p.causal_seq.rows() + p.full_only_seq.rows()));
  REQUIRE(p.pad_segment->causal_seq_offsets == causal, show(p.pad_segment->causal_seq_offsets)
                                                           << " vs " << show(causal));
  REQUIRE(p.pad_segment->full_only_seq_offsets == full, show(p.pad_segment->full_only_seq_offsets)
                                                            << " vs " << show(full));
  REQUIRE(p.pad_segment->sample_offsets == samples, show(p.pad_segment->sample_offsets) << " vs " << show(samples));
}

void pad_segment_maxima(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  if (!p.pad_segment) return;
  const std::int64_t pc = static_cast<std::int64_t>(p.causal_seq.rows()) - p.meta->num_causal_tokens;
  const std::int64_t pf = static_cast<std::int64_t>(p.full_only_seq.rows()) - p.meta->num_full_tokens;
  REQUIRE(p.pad_segment->max_causal_len == std::max<std::int64_t>(p.meta->max_causal_len, pc),
          p.pad_segment->max_causal_len);
  REQUIRE(p.pad_segment->max_full_len == std::max<std::int64_t>(p.meta->max_full_len, pf), p.pad_segment->max_full_len);
  REQUIRE(p.pad_segment->max_sample_len == std::max<std::int64_t>(p.meta->max_sample_len, pc + pf),
          p.pad_segment->max_sample_len);
}

void pad_segment_only_when_padded(const Subject& subject) {
  const Case& c = subject.c();
  if (!c.options.pad_segment_only_when_padded) return;
  Case always = c;
  always.options.pad_segment_only_when_padded = false;
  const ref::Pack& with = subject.pack();
  const Streams s = streams_of(c.layout);
  const auto& o = c.options;
  const bool padded_anyway = o.pad_for_cuda_graphs ||
                             spec_padded(s.causal, o.cp_world_size, false, o.causal_seq_alignment) != s.causal ||
                             spec_padded(s.full, o.cp_world_size, false, o.full_seq_alignment) != s.full;
  const std::optional<ref::Pack> flag_off = build_variant(c, with, always);
  if (!flag_off) {
    // Refused without the flag (a segment the layout cannot pair, or a stream
    // past int32): then the flag must have dropped the segment, since nothing
    // is padded anyway.
    REQUIRE(!with.pad_segment && !padded_anyway, "the flag kept a segment that the flag-off build refuses");
    return;
  }
  const ref::Pack& without = *flag_off;
  REQUIRE(with.pad_segment.has_value() == (without.pad_segment.has_value() && padded_anyway),
          "flag on: " << with.pad_segment.has_value() << ", off: " << without.pad_segment.has_value()
                      << ", padded anyway: " << padded_anyway);
  if (with.pad_segment) REQUIRE(with.pad_segment == without.pad_segment, "the flag changed the segment itself");
  if (!with.pad_segment && !o.pad_for_cuda_graphs) {
    REQUIRE(static_cast<std::int64_t>(with.causal_seq.rows()) ==
                spec_padded(s.causal, o.cp_world_size, false, o.causal_seq_alignment),
            "causal rows " << with.causal_seq.rows());
  }
}

void pad_segment_full_only_never(const Subject& subject) {
  const Case& c = subject.c();
  if (streams_of(c.layout).causal_splits != 0) return;
  REQUIRE(!subject.pack().pad_segment, "a full-only pack carries a pad segment");
}
}  // namespace seqpack::properties::detail
