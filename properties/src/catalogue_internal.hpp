// The invariant catalogue's private parts (not installed): the spec restated
// (catalogue_spec.cpp), the REQUIRE macro that the properties throw
// Violation with, and every property, by family: catalogue_padding.cpp
// (padded size, padding, graph marks), catalogue_metadata.cpp (metadata, pad
// segment), catalogue_streams.cpp (round trips, context parallelism),
// catalogue_errors_metamorphic.cpp (the planted error class, metamorphic
// relations). catalogue.cpp lists them (make_catalogue) and holds Subject.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "seqpack/properties/catalogue.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::properties::detail {

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

// The spec restated (catalogue_spec.cpp), independently of common/.

/// A layout's streams: real rows, split counts and split lengths per mode.
struct Streams {
  std::int64_t causal = 0, full = 0, causal_splits = 0, full_splits = 0;
  I64 causal_lens, full_lens;
};

/// The streams of `L` (what pairs up, when splits and modes differ in number).
Streams streams_of(const ref::Layout& L);
/// Offsets of `lens`: 0, then the running sums.
I32 prefix(const I64& lens);
/// Whether the spec gives `c` a pad segment (NOTES 4.4-4.5).
bool pad_segment_expected(const Case& c);
/// The marks of one batch kind (image or video): causal, full.
std::pair<std::int64_t&, std::int64_t&> kind_marks(ref::GraphMarks& m, bool image);
/// The expected padded lengths of the streams.
std::pair<std::int64_t, std::int64_t> expected_lengths(const Case& c);
/// A variant of a valid case built, or nothing where the spec refuses it for
/// a reason of its own or it is far larger than the case.
std::optional<ref::Pack> build_variant(const Case& c, const ref::Pack& built, const Case& variant);
/// Whether row `r` of `rows` is all zero bytes.
bool row_is_zero(const ref::Rows& rows, std::size_t r);
/// Whether row `ra` of `a` and row `rb` of `b` hold the same bytes.
bool rows_equal(const ref::Rows& a, std::size_t ra, const ref::Rows& b, std::size_t rb);

// The properties; each throws Violation when it fails.

// Padded size, padding and graph marks (catalogue_padding.cpp).
void padded_at_least_n(const Subject& subject);
void padded_divisible(const Subject& subject);
void padded_least(const Subject& subject);
void padded_idempotent(const Subject& subject);
void padded_monotone(const Subject& subject);
void padding_zero_rows(const Subject& subject);
void padding_sample_ids(const Subject& subject);
void padding_lengths(const Subject& subject);
void padding_divisible_unless_marks(const Subject& subject);
void marks_follow_the_call(const Subject& subject);
void marks_only_grow(const Subject& subject);
void marks_lengths_cover_marks(const Subject& subject);

// Metadata and the pad segment (catalogue_metadata.cpp).
void metadata_indices_partition(const Subject& subject);
void metadata_offsets_prefix_sums(const Subject& subject);
void metadata_sample_ids_agree(const Subject& subject);
void metadata_maxima(const Subject& subject);
void metadata_counts(const Subject& subject);
void pad_segment_shape(const Subject& subject);
void pad_segment_supported_iff(const Subject& subject);
void pad_segment_non_empty(const Subject& subject);
void pad_segment_extends_plain(const Subject& subject);
void pad_segment_maxima(const Subject& subject);
void pad_segment_only_when_padded(const Subject& subject);
void pad_segment_full_only_never(const Subject& subject);

// Round trips and context parallelism (catalogue_streams.cpp).
void roundtrip_get_all_seq(const Subject& subject);
void roundtrip_from_all_seq(const Subject& subject);
void roundtrip_set_all_seq(const Subject& subject);
void roundtrip_all_seq_padded(const Subject& subject);
void roundtrip_zeros_like(const Subject& subject);
void cp_not_divisible_iff(const Subject& subject);
void cp_shards_tile(const Subject& subject);
void cp_gather_identity(const Subject& subject);
void cp_local_counts(const Subject& subject);
void cp_position_ids(const Subject& subject);

// The planted error class and metamorphic relations (catalogue_errors_metamorphic.cpp).
void errors_planted_class(const Subject& subject);
void metamorphic_alignment_multiple(const Subject& subject);
void metamorphic_append_sample(const Subject& subject);

// catalogue_consequences.cpp: what the reference's pack does to attention.
void consequence_coverage(const Subject& s);
void consequence_padding_changes_nothing(const Subject& s);
void consequence_weight_gradients(const Subject& s);
void consequence_lengths_suffice(const Subject& s);
void consequence_pairing(const Subject& s);
void consequence_no_cross_sample(const Subject& s);
void consequence_plain_offsets_without_pad_segment(const Subject& s);
/// Whether what `p` reports is one of the two documented findings about the
/// original (reference/README.md): then the consequence properties pass it.
bool consequence_finding(const Subject& s, const attention::PassReport& p);
/// The samples that own the causal splits and the full splits, in stream
/// order (an empty split at a sample's end stays with that sample while it
/// lacks a split of that mode): the findings' exemptions read them.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> split_owners(const Subject& s);

}  // namespace seqpack::properties::detail
