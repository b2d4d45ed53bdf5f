// The invariant catalogue's padding properties: padded size (padded.*),
// padding rows and lengths (padding.*) and the CUDA-graph marks (marks.*).
// The catalogue is listed in catalogue.cpp; catalogue_internal.hpp declares
// what the files share.
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

// --- padded size -------------------------------------------------------------

namespace {

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

}  // namespace

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
}  // namespace seqpack::properties::detail
