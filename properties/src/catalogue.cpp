// The invariant catalogue (catalogue.hpp): the list of properties, the
// Subject they share, and check_all. Expected values are restated from the
// spec (catalogue_spec.cpp), independently of the reference's own arithmetic
// (common/ is not used), so a fault in the shared helpers shows up as a
// violation. The properties are in catalogue_padding.cpp,
// catalogue_metadata.cpp, catalogue_streams.cpp and
// catalogue_errors_metamorphic.cpp; catalogue_internal.hpp declares them.
#include "seqpack/properties/catalogue.hpp"

#include <exception>
#include <sstream>
#include <stdexcept>

#include "catalogue_internal.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::properties {
namespace detail {
namespace {

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
      {"consequence.coverage", "has_pad_segment: varlen attention writes every row, forward and backward", true,
       consequence_coverage},
      {"consequence.padding_changes_nothing", "padding rows change no real row's output or gradient, bit for bit", true,
       consequence_padding_changes_nothing},
      {"consequence.weight_gradients", "the pad-segment comment: projection weight gradients finite and unchanged",
       true, consequence_weight_gradients},
      {"consequence.lengths_suffice", "every max_* covers each segment it is passed with", true,
       consequence_lengths_suffice},
      {"consequence.pairing", "paired passes get equal segment counts", true, consequence_pairing},
      {"consequence.no_cross_sample", "no real row attends another sample's or a padding key", true,
       consequence_no_cross_sample},
      {"consequence.plain_offsets", "pad_segment_only_when_padded: without a segment the plain offsets suffice", true,
       consequence_plain_offsets_without_pad_segment},
  };
}

}  // namespace

}  // namespace detail

using detail::expected_lengths;
using detail::make_catalogue;
namespace ref = seqpack::reference;

std::pair<std::int64_t, std::int64_t> expected_stream_lengths(const Case& c) { return expected_lengths(c); }

const std::vector<Property>& catalogue() {
  static const std::vector<Property> all = make_catalogue();
  return all;
}

const attention::Report& Subject::consequences() const {
  if (!consequences_) {
    attention::EvaluateOptions o;
    // Small enough for every catalogue run (fuzzing included); past it the
    // coverage, maxima, pairing and cross-sample checks run from the offsets.
    o.max_pairs = kConsequencePairs;
    consequences_ = attention::evaluate(attention::from_reference(pack(), case_.options), o);
  }
  return *consequences_;
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
