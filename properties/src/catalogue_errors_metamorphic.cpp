// The invariant catalogue's properties across cases: the planted error class
// (errors.*) and metamorphic relations between a case and a variant
// (metamorphic.*). The catalogue is listed in catalogue.cpp;
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
}  // namespace seqpack::properties::detail
