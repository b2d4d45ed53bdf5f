// The invariant catalogue. Expected values are restated from the spec here,
// independently of the reference's own arithmetic (common/ is not used), so a
// fault in the shared helpers shows up as a violation.
#include "seqpack/properties/catalogue.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "seqpack/properties/spec.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::properties {
namespace {

namespace ref = seqpack::reference;
using I32 = std::vector<std::int32_t>;
using I64 = std::vector<std::int64_t>;

template <typename T>
std::string show(const std::vector<T>& v) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < v.size() && i < 40; ++i) out << (i ? " " : "") << v[i];
  if (v.size() > 40) out << " ... (" << v.size() << " entries)";
  out << "]";
  return out.str();
}

#define REQUIRE(cond, detail)                               \
  do {                                                      \
    if (!(cond)) {                                          \
      std::ostringstream msg_;                              \
      msg_ << "(" #cond ") fails: " << detail; /* NOLINT */ \
      throw Violation(msg_.str());                          \
    }                                                       \
  } while (0)

// --- the spec restated -------------------------------------------------------

// spec_bucket, spec_lcm, spec_step and spec_padded: spec.hpp (the generators use them too).

struct Streams {
  std::int64_t causal = 0, full = 0, causal_splits = 0, full_splits = 0;
  I64 causal_lens, full_lens;
};

Streams streams_of(const ref::Layout& L) {
  Streams s;
  // (A layout with more splits than modes is invalid_layout; read what pairs up.)
  for (std::size_t j = 0; j < std::min(L.split_lens.size(), L.attn_modes.size()); ++j) {
    if (L.attn_modes[j] == "causal") {
      s.causal += L.split_lens[j];
      s.causal_splits++;
      s.causal_lens.push_back(L.split_lens[j]);
    } else {
      s.full += L.split_lens[j];
      s.full_splits++;
      s.full_lens.push_back(L.split_lens[j]);
    }
  }
  return s;
}

I32 prefix(const I64& lens) {
  I32 out{0};
  for (const std::int64_t l : lens) out.push_back(out.back() + static_cast<std::int32_t>(l));
  return out;
}

bool pad_segment_expected(const Case& c) {
  const Streams s = streams_of(c.layout);
  if (s.causal_splits != s.full_splits || s.causal_splits == 0) return false;
  if (!c.options.pad_segment_only_when_padded) return true;
  const auto& o = c.options;
  return o.pad_for_cuda_graphs || spec_padded(s.causal, o.cp_world_size, false, o.causal_seq_alignment) != s.causal ||
         spec_padded(s.full, o.cp_world_size, false, o.full_seq_alignment) != s.full;
}

std::pair<std::int64_t&, std::int64_t&> kind_marks(ref::GraphMarks& m, bool image) {
  return image ? std::pair<std::int64_t&, std::int64_t&>{m.image_causal, m.image_full}
               : std::pair<std::int64_t&, std::int64_t&>{m.video_causal, m.video_full};
}

// The expected padded lengths of the streams.
std::pair<std::int64_t, std::int64_t> expected_lengths(const Case& c) {
  const Streams s = streams_of(c.layout);
  const auto& o = c.options;
  const std::int64_t reserve = pad_segment_expected(c) ? 1 : 0;
  std::int64_t causal = spec_padded(s.causal + reserve, o.cp_world_size, o.pad_for_cuda_graphs, o.causal_seq_alignment);
  std::int64_t full = spec_padded(s.full + reserve, o.cp_world_size, o.pad_for_cuda_graphs, o.full_seq_alignment);
  if (o.pad_for_cuda_graphs) {
    ref::GraphMarks m = c.marks;
    auto [mc, mf] = kind_marks(m, o.is_image_batch);
    causal = std::max(causal, mc);
    full = std::max(full, mf);
  }
  return {causal, full};
}

// A variant of a valid case that a property compares with it, built; nothing
// when the spec refuses the variant for a reason of its own, or when it is
// far larger than the case:
//  - a stream (or the pad segment's offset) passes int32: an alignment past
//    int32 is legal only on a stream that stays empty (overflow);
//  - the case built without a pad segment and the variant needs one that the
//    layout cannot pair, by the catalogue's rule of one full split per sample
//    (pad_segment_pairing; pad_segment_only_when_padded keeps such layouts
//    valid while nothing is padded);
//  - its padded streams pass 4x the case's plus 65536 rows (an alignment of a
//    million rows on an empty stream the variant fills): the properties stay
//    within a fixed factor of what the generator or the fuzz budget gave them.
std::optional<ref::Pack> build_variant(const Case& c, const ref::Pack& built, const Case& variant) {
  const auto [causal, full] = expected_lengths(variant);
  if (causal > kInt32Limit || full > kInt32Limit || causal + full > kInt32Limit) return std::nullopt;
  const auto [case_causal, case_full] = expected_lengths(c);
  if (causal + full > 4 * (std::min(case_causal, kInt32Limit) + std::min(case_full, kInt32Limit)) + 65536) {
    return std::nullopt;
  }
  try {
    return build_case(variant);
  } catch (const ref::Error& e) {
    // Refused pairing is the spec's answer only where the catalogue's own rule
    // says the layout cannot pair (one full split per sample).
    const bool unpairable =
        streams_of(variant.layout).full_splits != static_cast<std::int64_t>(variant.layout.sample_lens.size());
    if (e.code() == ref::Errc::pad_segment_pairing && !built.pad_segment && unpairable) return std::nullopt;
    throw;
  }
}

bool row_is_zero(const ref::Rows& rows, std::size_t r) {
  for (std::size_t b = 0; b < rows.row_bytes(); ++b)
    if (rows.row(r)[b] != std::byte{0}) return false;
  return true;
}

bool rows_equal(const ref::Rows& a, std::size_t ra, const ref::Rows& b, std::size_t rb) {
  return a.row_bytes() == b.row_bytes() && std::memcmp(a.row(ra), b.row(rb), a.row_bytes()) == 0;
}

// --- padded size -------------------------------------------------------------

// The lengths a case asks padded_size about: each stream's need and neighbours.
I64 probe_lengths(const Case& c) {
  const Streams s = streams_of(c.layout);
  I64 out;
  for (const std::int64_t n : {s.causal, s.full}) {
    for (const std::int64_t d : {-1, 0, 1, 2}) {
      if (n + d >= 0) out.push_back(n + d);
    }
  }
  return out;
}

// Calls f for each probe length and alignment whose padded size fits int32.
// The others must be refused as overflow (reference README, divergence 6): an
// alignment past int32 is legal on a stream that stays empty, since 0 pads to
// 0, but not on a probe of one row.
template <typename F>
void for_each_probe(const Case& c, F&& f) {
  const auto& o = c.options;
  for (const std::int64_t n : probe_lengths(c)) {
    for (const std::int64_t a : {o.causal_seq_alignment, o.full_seq_alignment}) {
      if (spec_padded(n, o.cp_world_size, o.pad_for_cuda_graphs, a) <= kInt32Limit) {
        f(n, o.cp_world_size, o.pad_for_cuda_graphs, a);
        continue;
      }
      std::string got = "no error";
      try {
        got = "padded size " + std::to_string(ref::padded_size(n, o.cp_world_size, o.pad_for_cuda_graphs, a));
      } catch (const ref::Error& e) {
        got = ref::to_string(e.code());
      }
      REQUIRE(got == "overflow", "padded_size(" << n << ", cp=" << o.cp_world_size
                                                << ", graphs=" << o.pad_for_cuda_graphs << ", a=" << a
                                                << ") passes int32, got " << got);
    }
  }
}

void padded_at_least_n(const Subject& subject) {
  const Case& c = subject.c();
  for_each_probe(c, [](std::int64_t n, std::int64_t cp, bool g, std::int64_t a) {
    REQUIRE(ref::padded_size(n, cp, g, a) >= n, "n=" << n << " cp=" << cp << " graphs=" << g << " a=" << a);
  });
}

void padded_divisible(const Subject& subject) {
  const Case& c = subject.c();
  for_each_probe(c, [](std::int64_t n, std::int64_t cp, bool g, std::int64_t a) {
    const std::int64_t p = ref::padded_size(n, cp, g, a);
    REQUIRE(p % a == 0 && p % cp == 0 && (!g || p % spec_bucket(n) == 0),
            "padded_size(" << n << ", cp=" << cp << ", graphs=" << g << ", a=" << a << ") = " << p);
  });
}

void padded_least(const Subject& subject) {
  const Case& c = subject.c();
  for_each_probe(c, [](std::int64_t n, std::int64_t cp, bool g, std::int64_t a) {
    const std::int64_t p = ref::padded_size(n, cp, g, a);
    REQUIRE(p == spec_padded(n, cp, g, a), "padded_size(" << n << ", cp=" << cp << ", graphs=" << g << ", a=" << a
                                                          << ") = " << p << ", least is " << spec_padded(n, cp, g, a));
  });
}

// Holds without CUDA graphs, and with them when the padded length stays in n's bucket.
void padded_idempotent(const Subject& subject) {
  const Case& c = subject.c();
  for_each_probe(c, [](std::int64_t n, std::int64_t cp, bool g, std::int64_t a) {
    const std::int64_t p = ref::padded_size(n, cp, g, a);
    if (g && spec_bucket(p) != spec_bucket(n)) return;
    REQUIRE(ref::padded_size(p, cp, g, a) == p,
            "n=" << n << " padded " << p << " re-pads to " << ref::padded_size(p, cp, g, a));
  });
}

void padded_monotone(const Subject& subject) {
  const Case& c = subject.c();
  for_each_probe(c, [](std::int64_t n, std::int64_t cp, bool g, std::int64_t a) {
    for (const std::int64_t m : {n + 1, n + 127, n + 2049}) {
      if (spec_padded(m, cp, g, a) > kInt32Limit) continue;  // refused as overflow (for_each_probe)
      REQUIRE(ref::padded_size(n, cp, g, a) <= ref::padded_size(m, cp, g, a),
              "padded(" << n << ")=" << ref::padded_size(n, cp, g, a) << " > padded(" << m
                        << ")=" << ref::padded_size(m, cp, g, a) << " cp=" << cp << " graphs=" << g << " a=" << a);
    }
  });
}

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

// --- padding -----------------------------------------------------------------

void padding_zero_rows(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  for (const auto& [rows, real] :
       {std::pair{&p.causal_seq, p.meta->num_causal_tokens}, std::pair{&p.full_only_seq, p.meta->num_full_tokens}}) {
    for (std::size_t r = static_cast<std::size_t>(real); r < rows->rows(); ++r)
      REQUIRE(row_is_zero(*rows, r), "padding row " << r << " is not zero");
  }
}

void padding_sample_ids(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  const auto& m = *p.meta;
  for (const auto& [ids, real, meta_ids, rows] :
       {std::tuple{&p.causal_sample_ids, m.num_causal_tokens, &m.causal_sample_ids, p.causal_seq.rows()},
        std::tuple{&p.full_only_sample_ids, m.num_full_tokens, &m.full_only_sample_ids, p.full_only_seq.rows()}}) {
    REQUIRE(ids->size() == rows, ids->size() << " ids for " << rows << " rows");
    for (std::size_t i = 0; i < ids->size(); ++i) {
      const std::int64_t want = static_cast<std::int64_t>(i) < real ? (*meta_ids)[i] : m.num_samples();
      REQUIRE((*ids)[i] == want, "row " << i << " has sample id " << (*ids)[i] << ", want " << want);
    }
  }
}

void padding_lengths(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const auto [causal, full] = expected_lengths(c);
  REQUIRE(static_cast<std::int64_t>(p.causal_seq.rows()) == causal,
          "causal rows " << p.causal_seq.rows() << ", want " << causal);
  REQUIRE(static_cast<std::int64_t>(p.full_only_seq.rows()) == full,
          "full rows " << p.full_only_seq.rows() << ", want " << full);
}

// Divisible by alignment and cp unless CUDA-graph marks set the length (they are not re-rounded).
void padding_divisible_unless_marks(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const auto& o = c.options;
  ref::GraphMarks m = c.marks;
  auto [mc, mf] = kind_marks(m, o.is_image_batch);
  const auto check = [&](std::size_t rows, std::int64_t a, std::int64_t mark, const char* what) {
    if (o.pad_for_cuda_graphs && static_cast<std::int64_t>(rows) == mark) return;
    const auto n = static_cast<std::int64_t>(rows);
    REQUIRE(n % a == 0 && n % o.cp_world_size == 0,
            what << " rows " << n << " alignment " << a << " cp " << o.cp_world_size);
    if (o.pad_for_cuda_graphs) REQUIRE(n % 128 == 0, what << " rows " << n << " not a bucket multiple");
  };
  check(p.causal_seq.rows(), o.causal_seq_alignment, mc, "causal");
  check(p.full_only_seq.rows(), o.full_seq_alignment, mf, "full");
}

// --- graph marks -------------------------------------------------------------

void marks_follow_the_call(const Subject& subject) {
  const Case& c = subject.c();
  const ref::GraphMarks& after = subject.marks_after();
  const ref::Pack& p = subject.pack();
  const auto& o = c.options;
  if (!o.pad_for_cuda_graphs) {
    REQUIRE(after == c.marks, "marks changed without CUDA graphs");
    return;
  }
  ref::GraphMarks want = c.marks;
  auto [mc, mf] = kind_marks(want, o.is_image_batch);
  mc = std::max<std::int64_t>(mc, static_cast<std::int64_t>(p.causal_seq.rows()));
  mf = std::max<std::int64_t>(mf, static_cast<std::int64_t>(p.full_only_seq.rows()));
  REQUIRE(after == want, "marks after: image " << after.image_causal << "/" << after.image_full << " video "
                                               << after.video_causal << "/" << after.video_full);
}

void marks_only_grow(const Subject& subject) {
  const Case& c = subject.c();
  const ref::GraphMarks& after = subject.marks_after();
  REQUIRE(after.image_causal >= c.marks.image_causal && after.image_full >= c.marks.image_full &&
              after.video_causal >= c.marks.video_causal && after.video_full >= c.marks.video_full,
          "a mark shrank");
}

void marks_lengths_cover_marks(const Subject& subject) {
  const Case& c = subject.c();
  if (!c.options.pad_for_cuda_graphs) return;
  const ref::Pack& p = subject.pack();
  ref::GraphMarks m = c.marks;
  auto [mc, mf] = kind_marks(m, c.options.is_image_batch);
  REQUIRE(
      static_cast<std::int64_t>(p.causal_seq.rows()) >= mc && static_cast<std::int64_t>(p.full_only_seq.rows()) >= mf,
      "lengths " << p.causal_seq.rows() << "/" << p.full_only_seq.rows() << " below marks " << mc << "/" << mf);
}

// --- round trips -------------------------------------------------------------

void roundtrip_get_all_seq(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  REQUIRE(ref::get_all_seq(p) == subject.rows(), "get_all_seq differs from the input");
}

void roundtrip_from_all_seq(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  const ref::Pack q = ref::from_all_seq(ref::get_all_seq(p), p);
  REQUIRE(q.causal_seq == p.causal_seq && q.full_only_seq == p.full_only_seq, "from_all_seq(get_all_seq) differs");
  // Rows distinct from the source's: an implementation that returns the
  // source's own streams fails here. They land where a build puts them.
  Case other = subject.c();
  other.data_seed = other.data_seed + 1;
  const ref::Rows value = case_rows(other);
  const ref::Pack r = ref::from_all_seq(value, p);
  const ref::Metadata& m = *p.meta;
  REQUIRE(r.causal_seq.rows() == p.causal_seq.rows() && r.full_only_seq.rows() == p.full_only_seq.rows(),
          "from_all_seq changed the padded lengths");
  for (std::size_t i = 0; i < r.causal_seq.rows(); ++i) {
    const bool real = i < m.causal_indices.size();
    REQUIRE(real ? rows_equal(r.causal_seq, i, value, static_cast<std::size_t>(m.causal_indices[i]))
                 : row_is_zero(r.causal_seq, i),
            "from_all_seq causal row " << i << (real ? " is not its packed row" : " (padding) is not zero"));
  }
  for (std::size_t i = 0; i < r.full_only_seq.rows(); ++i) {
    const bool real = i < m.full_indices.size();
    REQUIRE(real ? rows_equal(r.full_only_seq, i, value, static_cast<std::size_t>(m.full_indices[i]))
                 : row_is_zero(r.full_only_seq, i),
            "from_all_seq full row " << i << (real ? " is not its packed row" : " (padding) is not zero"));
  }
}

void roundtrip_set_all_seq(const Subject& subject) {
  const Case& c = subject.c();
  ref::Pack p = subject.pack();  // a copy: the property writes to it
  Case other = c;
  other.data_seed = c.data_seed + 1;
  const ref::Rows value = case_rows(other);
  const ref::Pack before = p;
  ref::set_all_seq(p, value);
  REQUIRE(ref::get_all_seq(p) == value, "set_all_seq then get_all_seq differs");
  for (std::size_t r = static_cast<std::size_t>(p.meta->num_causal_tokens); r < p.causal_seq.rows(); ++r)
    REQUIRE(rows_equal(p.causal_seq, r, before.causal_seq, r), "set_all_seq wrote causal padding row " << r);
  for (std::size_t r = static_cast<std::size_t>(p.meta->num_full_tokens); r < p.full_only_seq.rows(); ++r)
    REQUIRE(rows_equal(p.full_only_seq, r, before.full_only_seq, r), "set_all_seq wrote full padding row " << r);
}

void roundtrip_all_seq_padded(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  const ref::AllSeqPadded all = ref::get_all_seq_padded(p);
  const ref::Rows& input = subject.rows();
  if (!p.pad_segment) {
    REQUIRE(all.seq == input && all.offsets == p.meta->sample_offsets && all.max_len == p.meta->max_sample_len,
            "without a pad segment get_all_seq_padded must be get_all_seq with the plain offsets");
    return;
  }
  REQUIRE(all.seq.rows() == p.causal_seq.rows() + p.full_only_seq.rows(), all.seq.rows() << " rows");
  for (std::size_t r = 0; r < input.rows(); ++r)
    REQUIRE(rows_equal(all.seq, r, input, r), "real row " << r << " differs");
  for (std::size_t r = input.rows(); r < all.seq.rows(); ++r)
    REQUIRE(row_is_zero(all.seq, r), "tail row " << r << " is not zero");
  REQUIRE(all.offsets == p.pad_segment->sample_offsets && all.max_len == p.pad_segment->max_sample_len,
          show(all.offsets));
}

void roundtrip_zeros_like(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  const ref::Pack z = ref::zeros_like(p);
  REQUIRE(z.causal_seq == ref::Rows(p.causal_seq.rows(), p.causal_seq.row_bytes()) &&
              z.full_only_seq == ref::Rows(p.full_only_seq.rows(), p.full_only_seq.row_bytes()),
          "zeros_like is not zero streams of the same shape");
  REQUIRE(z.causal_sample_ids == p.causal_sample_ids && z.pad_segment == p.pad_segment && z.meta == p.meta,
          "zeros_like changed the metadata");
}

// --- context parallelism -----------------------------------------------------

bool divisible(const ref::Pack& p, std::int64_t w) {
  return p.causal_seq.rows() % static_cast<std::size_t>(w) == 0 &&
         p.full_only_seq.rows() % static_cast<std::size_t>(w) == 0;
}

void cp_not_divisible_iff(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  bool threw = false;
  try {
    ref::shard_pack(p, 0, w);
  } catch (const ref::Error& e) {
    REQUIRE(e.code() == ref::Errc::not_divisible, e.what());
    threw = true;
  }
  REQUIRE(threw == !divisible(p, w), "shard_pack threw " << threw << " for rows " << p.causal_seq.rows() << "/"
                                                         << p.full_only_seq.rows() << " and world " << w);
}

void cp_shards_tile(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  if (!divisible(p, w)) return;
  std::size_t causal_at = 0, full_at = 0;
  for (std::int64_t r = 0; r < w; ++r) {
    const ref::Pack s = ref::shard_pack(p, r, w);
    REQUIRE(s.causal_seq.rows() * static_cast<std::size_t>(w) == p.causal_seq.rows(),
            "causal shard of " << s.causal_seq.rows());
    REQUIRE(s.full_only_seq.rows() * static_cast<std::size_t>(w) == p.full_only_seq.rows(),
            "full shard of " << s.full_only_seq.rows());
    for (std::size_t i = 0; i < s.causal_seq.rows(); ++i, ++causal_at) {
      REQUIRE(rows_equal(s.causal_seq, i, p.causal_seq, causal_at), "rank " << r << " causal row " << i);
      REQUIRE(s.causal_sample_ids[i] == p.causal_sample_ids[causal_at], "rank " << r << " causal id " << i);
    }
    for (std::size_t i = 0; i < s.full_only_seq.rows(); ++i, ++full_at) {
      REQUIRE(rows_equal(s.full_only_seq, i, p.full_only_seq, full_at), "rank " << r << " full row " << i);
      REQUIRE(s.full_only_sample_ids[i] == p.full_only_sample_ids[full_at], "rank " << r << " full id " << i);
    }
  }
}

void cp_gather_identity(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  if (!divisible(p, w)) return;
  const ref::Pack g = ref::gather_shards(ref::shard_pack_all(p, w));
  REQUIRE(g.causal_seq == p.causal_seq && g.full_only_seq == p.full_only_seq &&
              g.causal_sample_ids == p.causal_sample_ids && g.full_only_sample_ids == p.full_only_sample_ids &&
              !g.is_sharded,
          "gathered pack differs");
}

void cp_local_counts(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  if (!divisible(p, w)) return;
  const auto lc = static_cast<std::int64_t>(p.causal_seq.rows()) / w,
             lf = static_cast<std::int64_t>(p.full_only_seq.rows()) / w;
  std::int64_t sc = 0, sf = 0;
  for (std::int64_t r = 0; r < w; ++r) {
    const auto [c_local, f_local] = ref::get_num_real_tokens(ref::shard_pack(p, r, w));
    const std::int64_t want_c = std::clamp<std::int64_t>(p.meta->num_causal_tokens - r * lc, 0, lc);
    const std::int64_t want_f = std::clamp<std::int64_t>(p.meta->num_full_tokens - r * lf, 0, lf);
    REQUIRE(c_local == want_c && f_local == want_f,
            "rank " << r << ": (" << c_local << ", " << f_local << ") want (" << want_c << ", " << want_f << ")");
    sc += c_local;
    sf += f_local;
  }
  REQUIRE(sc == p.meta->num_causal_tokens && sf == p.meta->num_full_tokens,
          "local counts add up to " << sc << ", " << sf);
}

void cp_position_ids(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  if (!divisible(p, w)) return;
  ref::PositionIds ids{true, 3, static_cast<std::size_t>(c.rows), {}};
  for (std::size_t a = 0; a < 3; ++a)
    for (std::int64_t i = 0; i < c.rows; ++i) ids.values.push_back(static_cast<std::int64_t>(a) * 1000003 + i * 7 + 1);
  const auto& m = *p.meta;
  const std::size_t lc = p.causal_seq.rows() / static_cast<std::size_t>(w),
                    lf = p.full_only_seq.rows() / static_cast<std::size_t>(w);
  for (std::int64_t r = 0; r < w; ++r) {
    const ref::PositionIds got = ref::shard_position_ids(ids, p, r, w);
    REQUIRE(got.len == lc + lf && got.axes == 3, "shape [" << got.axes << ", " << got.len << "]");
    for (std::size_t a = 0; a < 3; ++a) {
      for (std::size_t i = 0; i < lc + lf; ++i) {
        const bool causal = i < lc;
        const std::size_t k =
            causal ? static_cast<std::size_t>(r) * lc + i : static_cast<std::size_t>(r) * lf + (i - lc);
        const I32& idx = causal ? m.causal_indices : m.full_indices;
        const std::int64_t want = k < idx.size() ? ids.values[a * ids.len + static_cast<std::size_t>(idx[k])] : 0;
        REQUIRE(got.values[a * got.len + i] == want, "rank " << r << " axis " << a << " position " << i);
      }
    }
  }
}

// --- errors ------------------------------------------------------------------

void errors_planted_class(const Subject& subject) {
  const Case& c = subject.c();
  std::string got;
  try {
    subject.pack();
  } catch (const ref::Error& e) {
    got = ref::to_string(e.code());
    REQUIRE(std::string(e.what()).find(e.field()) != std::string::npos,
            "message does not name the field: " << e.what());
  }
  REQUIRE(got == c.expect_error, "got error '" << got << "', planted '" << c.expect_error << "'");
}

// --- metamorphic -------------------------------------------------------------

// A multiple of an alignment never gives a shorter stream (a merely larger one can).
void metamorphic_alignment_multiple(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  for (const std::int64_t k : {2, 3}) {
    if (c.options.causal_seq_alignment > kPastInt64 / k || c.options.full_seq_alignment > kPastInt64 / k) continue;
    Case m = c;
    m.options.causal_seq_alignment *= k;
    m.options.full_seq_alignment *= k;
    const std::optional<ref::Pack> variant = build_variant(c, p, m);
    if (!variant) continue;  // refused by the spec itself, or too large: nothing to compare
    const ref::Pack& q = *variant;
    REQUIRE(q.causal_seq.rows() >= p.causal_seq.rows() && q.full_only_seq.rows() >= p.full_only_seq.rows(),
            "alignment x" << k << " shortened a stream: " << q.causal_seq.rows() << "/" << q.full_only_seq.rows()
                          << " < " << p.causal_seq.rows() << "/" << p.full_only_seq.rows());
  }
}

// Appending a sample leaves earlier offsets, indices, sample ids and rows as they were.
void metamorphic_append_sample(const Subject& subject) {
  const Case& c = subject.c();
  Case m = c;
  const bool pairs = streams_of(c.layout).causal_splits > 0;
  if (pairs) {
    m.layout.split_lens.insert(m.layout.split_lens.end(), {2, 3});
    m.layout.attn_modes.insert(m.layout.attn_modes.end(), {"causal", "full"});
    m.layout.und_token_indexes.insert(m.layout.und_token_indexes.end(), {c.rows, c.rows + 1});
    m.layout.sample_lens.push_back(5);
    m.rows += 5;
  } else {
    m.layout.split_lens.push_back(4);
    m.layout.attn_modes.push_back("full");
    m.layout.sample_lens.push_back(4);
    m.rows += 4;
  }
  const ref::Pack& p = subject.pack();
  const std::optional<ref::Pack> variant = build_variant(c, p, m);
  if (!variant) return;  // refused by the spec itself, or too large: nothing to compare
  const ref::Pack& q = *variant;
  const ref::Rows qa = case_rows(m);
  const auto prefix_of = [](const auto& longer, const auto& shorter) {
    return longer.size() >= shorter.size() && std::equal(shorter.begin(), shorter.end(), longer.begin());
  };
  const auto& a = *p.meta;
  const auto& b = *q.meta;
  REQUIRE(prefix_of(b.sample_offsets, a.sample_offsets) && prefix_of(b.causal_seq_offsets, a.causal_seq_offsets) &&
              prefix_of(b.full_only_seq_offsets, a.full_only_seq_offsets),
          "offsets changed");
  REQUIRE(prefix_of(b.causal_indices, a.causal_indices) && prefix_of(b.full_indices, a.full_indices),
          "indices changed");
  REQUIRE(
      prefix_of(b.causal_sample_ids, a.causal_sample_ids) && prefix_of(b.full_only_sample_ids, a.full_only_sample_ids),
      "sample ids changed");
  // Row data comes from the seed, so compare the packed rows that were moved.
  for (std::size_t i = 0; i < a.causal_indices.size(); ++i)
    REQUIRE(rows_equal(q.causal_seq, i, qa, static_cast<std::size_t>(a.causal_indices[i])), "causal row " << i);
  for (std::size_t i = 0; i < a.full_indices.size(); ++i)
    REQUIRE(rows_equal(q.full_only_seq, i, qa, static_cast<std::size_t>(a.full_indices[i])), "full row " << i);
}

std::vector<Property> make_catalogue() {
  return {
      {"padded.at_least_n", "NOTES 3: round n up to a multiple", true, padded_at_least_n},
      {"padded.divisible", "_get_padded_size: satisfies alignment, bucket and cp at once", true, padded_divisible},
      {"padded.least", "NOTES 3: the least multiple of lcm(alignment, bucket, cp) >= n", true, padded_least},
      {"padded.idempotent", "padding a padded length changes nothing (graphs: same bucket)", true, padded_idempotent},
      {"padded.monotone", "a longer stream never pads shorter", true, padded_monotone},
      {"metadata.indices_partition", "NOTES 1: indices ascend and cover [0, N) once, each in its mode's split", true,
       metadata_indices_partition},
      {"metadata.offsets_prefix_sums", "NOTES 1: offsets start at 0, one entry per split (zero-length too)", true,
       metadata_offsets_prefix_sums},
      {"metadata.sample_ids_agree", "NOTES 1: sample ids are the sample each row belongs to", true,
       metadata_sample_ids_agree},
      {"metadata.maxima", "NOTES 1: longest sample, longest split per mode (0 if none)", true, metadata_maxima},
      {"metadata.counts", "num tokens per stream and max_num_tokens = sum(sample_lens)", true, metadata_counts},
      {"pad_segment.shape", "six fields as a set: each offsets vector has one entry more", true, pad_segment_shape},
      {"pad_segment.supported_iff", "NOTES 4.4-4.5: equal non-zero split counts (and padded anyway under the flag)",
       true, pad_segment_supported_iff},
      {"pad_segment.non_empty", "NOTES 4.6: the pad segment is never empty on either stream", true,
       pad_segment_non_empty},
      {"pad_segment.extends_plain_offsets", "NOTES 4.9: plain offsets plus the padded length", true,
       pad_segment_extends_plain},
      {"pad_segment.maxima", "NOTES 4.9: max(real max, pad rows); samples max(max_sample_len, pad_c + pad_f)", true,
       pad_segment_maxima},
      {"pad_segment.only_when_padded", "NOTES 4.5: the flag keeps the segment only if padding happens anyway", true,
       pad_segment_only_when_padded},
      {"pad_segment.full_only_never", "NOTES 4.4: full-only packs are never supported", true,
       pad_segment_full_only_never},
      {"padding.zero_rows", "_pad_to_size: padding rows are zero", true, padding_zero_rows},
      {"padding.sample_ids", "NOTES 1: padding rows carry num_samples", true, padding_sample_ids},
      {"padding.lengths", "NOTES 4.6-4.7: padded(len + reserve), raised to the marks under graphs", true,
       padding_lengths},
      {"padding.divisible_unless_marks", "NOTES 6: divisible by alignment and cp unless a mark set the length", true,
       padding_divisible_unless_marks},
      {"marks.follow_the_call", "NOTES 4.7: this kind's marks rise to the lengths, others stay", true,
       marks_follow_the_call},
      {"marks.only_grow", "_grow_cuda_graph_bounds: the marks only grow", true, marks_only_grow},
      {"marks.lengths_cover_marks", "NOTES 4.7: under graphs the lengths are at least the marks", true,
       marks_lengths_cover_marks},
      {"roundtrip.get_all_seq", "NOTES 7: get_all_seq is the input bit for bit", true, roundtrip_get_all_seq},
      {"roundtrip.from_all_seq",
       "NOTES 7: from_all_seq(get_all_seq) gives the same streams; other rows land at their indices", true,
       roundtrip_from_all_seq},
      {"roundtrip.set_all_seq", "NOTES 7: set_all_seq writes real rows, padding untouched", true,
       roundtrip_set_all_seq},
      {"roundtrip.all_seq_padded", "NOTES 7: real prefix at packed positions, zero tail, pad offsets", true,
       roundtrip_all_seq_padded},
      {"roundtrip.zeros_like", "NOTES 7: zero streams, same lengths and metadata", true, roundtrip_zeros_like},
      {"cp.not_divisible_iff", "NOTES 8: each padded stream must divide by W, else fail", true, cp_not_divisible_iff},
      {"cp.shards_tile", "NOTES 8: rank r holds rows [r*L/W, (r+1)*L/W) and the same ids", true, cp_shards_tile, true},
      {"cp.gather_identity", "NOTES 8: gathering every rank gives the unsharded streams", true, cp_gather_identity,
       true},
      {"cp.local_counts", "NOTES 8: max(0, min(shard_len, real - r*shard_len)), adding up", true, cp_local_counts,
       true},
      {"cp.position_ids", "NOTES 8: zero-padded und/gen ids, sliced and concatenated", true, cp_position_ids, true},
      {"errors.planted_class", "PROTOCOL: each invalid input gives its class, valid ones none", false,
       errors_planted_class},
      {"metamorphic.alignment_multiple", "a multiple of the alignment never shortens a stream", true,
       metamorphic_alignment_multiple},
      {"metamorphic.append_sample", "appending a sample leaves the earlier metadata and rows", true,
       metamorphic_append_sample},
  };
}

}  // namespace

std::pair<std::int64_t, std::int64_t> expected_stream_lengths(const Case& c) { return expected_lengths(c); }

const std::vector<Property>& catalogue() {
  static const std::vector<Property> all = make_catalogue();
  return all;
}

const reference::Rows& Subject::rows() const {
  if (!rows_) rows_ = case_rows(case_);
  return *rows_;
}

// Packs past this many rows are not built: the size is decided from the plan
// before anything is allocated, so that a fault which makes a planted error
// pass (a mark or an overflow not raised) fails at once instead of filling
// the machine's memory. No generated valid case comes near it.
constexpr std::int64_t kSubjectRowLimit = std::int64_t{1} << 24;

void Subject::build() const {
  if (pack_ || error_) return;
  marks_after_ = case_.marks;
  try {
    ref::validate_options(case_.options, case_.marks);
    ref::validate_layout(case_.layout);
    const ref::PackShape shape =
        ref::plan_pack(ref::prepare_metadata(case_.layout), case_.rows, case_.options, case_.marks);
    if (shape.causal_len > kSubjectRowLimit - shape.full_len) {
      std::ostringstream why;
      why << "planned " << shape.causal_len << " causal and " << shape.full_len
          << " full rows, past the catalogue's limit of 2^24 rows: not built";
      error_ = std::make_exception_ptr(std::length_error(why.str()));
      return;
    }
  } catch (const ref::Error&) {
    // build_pack raises it again, in its own order.
  }
  try {
    pack_ = ref::build_pack(rows(), case_.layout, case_.options, marks_after_);
  } catch (...) {
    error_ = std::current_exception();
  }
}

const reference::Pack& Subject::pack() const {
  build();
  if (error_) std::rethrow_exception(error_);
  return *pack_;
}

const reference::GraphMarks& Subject::marks_after() const {
  pack();
  return marks_after_;
}

std::vector<std::string> check_all(const Case& c) { return check_all(Subject(c)); }

std::vector<std::string> check_all(const Subject& subject, Sweeps sweeps) {
  const Case& c = subject.c();
  std::vector<std::string> out;
  for (const Property& p : catalogue()) {
    if (p.valid_only && !c.expect_error.empty()) continue;
    if (p.sweeps_ranks && sweeps == Sweeps::skip) continue;
    try {
      p.check(subject);
    } catch (const std::exception& e) {
      out.push_back(p.name + ": " + e.what());
    }
  }
  return out;
}

}  // namespace seqpack::properties
