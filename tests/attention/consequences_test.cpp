// The consequence oracle on the reference's worked examples (every pass
// covered, padding changes nothing real) and on planted pack faults: each
// fault is named with its severity and its rows, and its neighbours do not
// fire. Also the finding on full-only packs that padding reaches.
#include "seqpack/attention/consequences.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "../reference/test_support.hpp"

namespace {

namespace att = seqpack::attention;
namespace ref = seqpack::reference;
using seqpack::testing::build;
using seqpack::testing::make_layout;
using I64 = std::vector<std::int64_t>;
using att::Severity;

ref::Options aligned(std::int64_t causal, std::int64_t full, std::int64_t cp = 1) {
  ref::Options o;
  o.causal_seq_alignment = causal;
  o.full_seq_alignment = full;
  o.cp_world_size = cp;
  return o;
}

att::PackMeta meta_of(const ref::Layout& layout, const ref::Options& options) {
  return att::from_reference(build(layout, options), options);
}

const std::vector<std::string> kPairModes = {"causal", "full", "causal", "full"};

att::PackMeta e1() { return meta_of(make_layout({2, 2}, kPairModes, {1, 1, 1, 1}), aligned(4, 4)); }
att::PackMeta e2() { return meta_of(make_layout({112, 160}, kPairModes, {12, 100, 20, 140}), aligned(128, 128)); }

const att::PassReport& pass(const att::Report& r, att::PassKind kind) {
  const auto it = std::find_if(r.passes.begin(), r.passes.end(), [&](const auto& p) { return p.kind == kind; });
  if (it == r.passes.end()) throw std::runtime_error(std::string("no pass ") + att::pass_id(kind));
  return *it;
}

void expect_clean(const att::PackMeta& m, const std::string& what) {
  const att::Report r = att::evaluate(m);
  EXPECT_EQ(r.severity, Severity::metadata_only) << what << "\n" << att::format_report(r);
  EXPECT_TRUE(r.numeric) << what;
  EXPECT_EQ(r.summary, "consequence: none at the attention level (metadata only)") << what;
  for (const att::PassReport& p : r.passes) {
    EXPECT_TRUE(p.unwritten.empty()) << what << " " << att::pass_id(p.kind);
    EXPECT_TRUE(p.changed.empty()) << what << " " << att::pass_id(p.kind);
    EXPECT_TRUE(p.max_violations.empty()) << what << " " << att::pass_id(p.kind);
    EXPECT_TRUE(p.paired) << what << " " << att::pass_id(p.kind);
    EXPECT_FALSE(p.cross) << what << " " << att::pass_id(p.kind);
    for (const att::WeightGradient& g : p.weight_gradients)
      EXPECT_TRUE(g.finite && g.equals_unpadded) << what << " " << att::pass_id(p.kind) << " " << g.name;
  }
}

TEST(Consequences, WorkedExamplesWithAPadSegmentCoverEveryRowAndChangeNothingReal) {
  expect_clean(e1(), "E1");
  expect_clean(e2(), "E2");
  const auto e3 = make_layout({112, 160}, kPairModes, {12, 100, 20, 140});
  expect_clean(meta_of(e3, {}), "E3");
  expect_clean(meta_of(make_layout({8, 9}, kPairModes, {3, 5, 2, 7}), aligned(2, 2, 2)), "E6a");
  expect_clean(meta_of(make_layout({5, 7}, kPairModes, {0, 5, 0, 7}), aligned(2, 2, 2)), "E6b");
  expect_clean(meta_of(make_layout({3, 2}, kPairModes, {3, 0, 2, 0}), aligned(2, 2, 2)), "E6c");
}

TEST(Consequences, PackWithoutPadSegmentAndWithoutPaddingMatchesWithPlainOffsets) {
  ref::Options o;
  o.pad_segment_only_when_padded = true;  // E3's variant: 32 and 240 rows, no pad segment
  const att::PackMeta m = meta_of(make_layout({112, 160}, kPairModes, {12, 100, 20, 140}), o);
  ASSERT_FALSE(m.pad_segment);
  const att::Report r = att::evaluate(m);
  EXPECT_TRUE(r.plain_offsets_match);
  EXPECT_EQ(r.severity, Severity::metadata_only) << att::format_report(r);
}

TEST(Consequences, EmptyCausalSplitGivesGenQueriesAnEmptyKeyRangeButNoFault) {
  const att::Report r = att::evaluate(meta_of(make_layout({5, 7}, kPairModes, {0, 5, 0, 7}), aligned(2, 2, 2)));
  EXPECT_EQ(pass(r, att::PassKind::gen_to_und).empty_key_rows, 12);  // every real gen row: output 0
  EXPECT_EQ(r.severity, Severity::metadata_only);
}

// The dense pass pairs GEN segment i with sample i's keys: without its pad
// segment on sample_offsets the counts differ and the kernel refuses.
TEST(Consequences, PadSegmentMissingOnSampleOffsetsLeavesTheDensePassUnpaired) {
  att::PackMeta m = e1();
  m.pad_segment->sample_offsets = {0, 2, 4};
  m.pad_segment->max_sample_len = 2;
  const att::Report r = att::evaluate(m);
  EXPECT_EQ(r.severity, Severity::crash_or_refusal);
  const att::PassReport& dense = pass(r, att::PassKind::dense_full);
  EXPECT_FALSE(dense.paired);
  EXPECT_NE(dense.refusal.find("cu_seqlens_k has 2 segments but cu_seqlens_q has 3"), std::string::npos)
      << dense.refusal;
  EXPECT_EQ(pass(r, att::PassKind::und_causal).severity, Severity::metadata_only);  // neighbours quiet
  EXPECT_EQ(pass(r, att::PassKind::gen_to_und).severity, Severity::metadata_only);
}

TEST(Consequences, PadSegmentOnOneStreamOnlyIsUnpairedAndLeavesTheOtherUncovered) {
  att::PackMeta m = e1();
  m.pad_segment->full_only_seq_offsets = {0, 1, 2};  // the older upstream asymmetry
  m.pad_segment->max_full_len = 1;
  const att::Report r = att::evaluate(m);
  EXPECT_EQ(r.severity, Severity::silent_wrong_gradient);
  const att::PassReport& gen = pass(r, att::PassKind::gen_full);
  ASSERT_FALSE(gen.unwritten.empty());
  EXPECT_EQ(gen.unwritten[0].rows, (std::vector<att::RowRange>{{2, 3}}));
  const att::PassReport& g2u = pass(r, att::PassKind::gen_to_und);
  EXPECT_FALSE(g2u.paired);
  EXPECT_EQ(g2u.severity, Severity::crash_or_refusal);
  EXPECT_NE(g2u.refusal.find("cu_seqlens_k has 3 segments but cu_seqlens_q has 2"), std::string::npos) << g2u.refusal;
  EXPECT_EQ(pass(r, att::PassKind::und_causal).severity, Severity::metadata_only);
}

TEST(Consequences, PadSegmentMaximumLeftAtTheRealMaximumLeavesPaddingUnwritten) {
  att::PackMeta m = e1();
  m.pad_segment->max_causal_len = 1;  // the real maximum; the pad segment has 2 rows
  const att::Report r = att::evaluate(m);
  const att::PassReport& und = pass(r, att::PassKind::und_causal);
  ASSERT_EQ(und.max_violations.size(), 2u);
  EXPECT_EQ(und.max_violations[0], "pad_segment.max_causal_len = 1 < 2, segment 2 of pad_segment.causal_seq_offsets");
  ASSERT_FALSE(und.unwritten.empty());
  EXPECT_EQ(und.unwritten[0].buffer, "output");
  EXPECT_EQ(und.unwritten[0].rows, (std::vector<att::RowRange>{{3, 3}}));
  EXPECT_EQ(und.severity, Severity::silent_wrong_gradient);
  EXPECT_TRUE(pass(r, att::PassKind::dense_full).max_violations.empty());
}

TEST(Consequences, PadSegmentOneRowShortLeavesTheLastRowUnwritten) {
  att::PackMeta m = e1();
  m.pad_segment->causal_seq_offsets = {0, 1, 2, 3};
  const att::Report r = att::evaluate(m);
  EXPECT_EQ(r.summary,
            "consequence: the causal (understanding) pass leaves output row 3 unwritten; the projection weight "
            "gradient is NaN");
  EXPECT_EQ(r.severity, Severity::silent_wrong_gradient);
  EXPECT_TRUE(pass(r, att::PassKind::und_causal).max_violations.empty());
}

TEST(Consequences, SampleSegmentThatSpansTwoSamplesIsCrossSampleAttention) {
  att::PackMeta m = e1();
  m.pad_segment->sample_offsets = {0, 3, 4, 8};  // packed row 2 (sample 1) falls into segment 0
  const att::Report r = att::evaluate(m);
  const att::PassReport& dense = pass(r, att::PassKind::dense_full);
  ASSERT_TRUE(dense.cross);
  EXPECT_EQ(dense.cross->q_sample, 0);
  EXPECT_EQ(dense.cross->k_sample, 1);
  EXPECT_FALSE(dense.changed.empty());
  EXPECT_EQ(dense.severity, Severity::silent_wrong_gradient);  // the real rows' dq change too
}

TEST(Consequences, PaddingSampleIdOfARealSampleMakesTheFlexRouteAttendPadding) {
  att::PackMeta m = e1();
  for (std::size_t i = 2; i < 4; ++i) m.full_only_sample_ids[i] = 1;  // should be 2 (num_samples)
  const att::Report r = att::evaluate(m);
  const att::PassReport& flex = pass(r, att::PassKind::flex_gen);
  ASSERT_TRUE(flex.cross);
  EXPECT_EQ(flex.cross->k_sample, -1);
  EXPECT_NE(flex.consequence.find("a real row of sample 1 attends padding"), std::string::npos) << flex.consequence;
  EXPECT_EQ(pass(r, att::PassKind::gen_full).severity, Severity::metadata_only);
}

TEST(Consequences, StreamRowsOutOfOrderChangeRealRowsBitForBit) {
  att::PackMeta m = e2();
  std::swap(m.causal_rows[0], m.causal_rows[1]);  // the port gathered two und rows the wrong way round
  const att::Report r = att::evaluate(m, {}, nullptr);
  const att::PassReport& und = pass(r, att::PassKind::und_causal);
  ASSERT_FALSE(und.changed.empty()) << att::format_report(r);
  EXPECT_EQ(und.changed[0].buffer, "output");
  EXPECT_EQ(und.changed[0].rows.front().first, 0);
  EXPECT_EQ(r.severity, Severity::silent_wrong_gradient);
}

TEST(Consequences, PastTheWorkBoundCoverageStillComesFromTheOffsets) {
  att::PackMeta m = e1();
  m.pad_segment->full_only_seq_offsets = {0, 1, 2, 3};  // the pad segment one row short
  att::EvaluateOptions o;
  o.max_pairs = 0;
  const att::Report r = att::evaluate(m, o);
  EXPECT_FALSE(r.numeric);
  EXPECT_EQ(r.severity, Severity::silent_wrong_gradient);
  EXPECT_EQ(pass(r, att::PassKind::dense_full).unwritten.front().rows, (std::vector<att::RowRange>{{3, 3}}));
}

TEST(Consequences, ReportIsDeterministic) {
  att::PackMeta m = e2();
  m.pad_segment->max_full_len = 100;
  EXPECT_EQ(att::format_report(att::evaluate(m)), att::format_report(att::evaluate(m)));
}

TEST(Consequences, MalformedPackIsACrashOrRefusal) {
  att::PackMeta m = e1();
  m.causal_sample_ids.pop_back();
  const att::Report r = att::evaluate(m);
  EXPECT_EQ(r.severity, Severity::crash_or_refusal);
  EXPECT_NE(r.summary.find("causal_sample_ids has 3 entries for 4 causal rows"), std::string::npos) << r.summary;
}

// A finding about the original (attention/README.md, "Findings"): a full-only
// pack never carries a pad segment (sequence_pack_from_packed_sequence,
// ~393-396), yet context parallelism, alignment or CUDA graphs still pad it,
// so the full (generation) pass leaves its padding rows unwritten.
TEST(Consequences, FindingFullOnlyPackPaddedForContextParallelLeavesPaddingUnwritten) {
  const att::PackMeta m = meta_of(make_layout({5, 2}, {"full", "full"}, {5, 2}), aligned(1, 1, 2));  // E5
  ASSERT_FALSE(m.pad_segment);
  ASSERT_EQ(m.full_len(), 8);
  const att::Report r = att::evaluate(m);
  EXPECT_FALSE(r.plain_offsets_match);
  EXPECT_EQ(r.severity, Severity::silent_wrong_gradient);
  EXPECT_EQ(r.summary,
            "consequence: the full (generation) pass leaves output row 7 unwritten; the projection weight gradient "
            "is NaN");
}

}  // namespace
