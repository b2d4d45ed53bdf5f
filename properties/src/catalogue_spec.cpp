// The spec restated for the invariant catalogue: the streams of a layout, the
// pad-segment rule, the expected padded lengths and the variants a property
// builds, written from the spec independently of the reference's own
// arithmetic (common/ is not used), so a fault in the shared helpers shows as
// a violation. The properties that use them are in the catalogue_*.cpp files;
// catalogue_internal.hpp declares them.
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

// spec_bucket, spec_lcm, spec_step and spec_padded: spec.hpp (the generators use them too).

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
}  // namespace seqpack::properties::detail
