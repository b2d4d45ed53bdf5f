// Prepared metadata and its reuse, and the CUDA-graph high-water marks.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

namespace ref = seqpack::reference;
using seqpack::testing::expect_error;
using seqpack::testing::I32;
using seqpack::testing::make_layout;
using seqpack::testing::numbered_rows;

const ref::Layout kPairs = make_layout({7, 6}, {"causal", "full", "causal", "full"}, {3, 4, 2, 4});

TEST(Metadata, MatchesLayoutComparesLengthsAndModesOnly) {
  const ref::Metadata meta = ref::prepare_metadata(kPairs);
  EXPECT_TRUE(meta.matches_layout(kPairs));
  ref::Layout other_und = kPairs;
  other_und.und_token_indexes = {0};
  EXPECT_TRUE(meta.matches_layout(other_und));
  ref::Layout other_mode = kPairs;
  other_mode.attn_modes[3] = "causal";
  EXPECT_FALSE(meta.matches_layout(other_mode));
  ref::Layout other_split = kPairs;
  other_split.split_lens = {4, 3, 2, 4};
  EXPECT_FALSE(meta.matches_layout(other_split));
}

TEST(Metadata, PreparedMetadataIsReusedAsIs) {
  const auto prepared = std::make_shared<const ref::Metadata>(ref::prepare_metadata(kPairs));
  ref::GraphMarks marks;
  ref::Layout layout = kPairs;
  layout.und_token_indexes = {5};  // in a full split, but prepared metadata skips the und check
  const ref::Pack a = ref::build_pack(numbered_rows(13), layout, {}, marks, prepared);
  const ref::Pack b = ref::build_pack(numbered_rows(13), kPairs, {}, marks);
  EXPECT_EQ(a.meta, prepared);
  EXPECT_TRUE(a.causal_seq == b.causal_seq);
  EXPECT_TRUE(a.full_only_seq == b.full_only_seq);
  EXPECT_EQ(a.causal_sample_ids, b.causal_sample_ids);
  EXPECT_EQ(a.pad_segment, b.pad_segment);
  expect_error([&] { ref::build_pack(numbered_rows(12), kPairs, {}, marks, prepared); }, ref::Errc::length_mismatch,
               "rows", "12 rows");
}

TEST(Metadata, UnsortedUndIndexesAreAccepted) {
  ref::Layout layout = kPairs;
  layout.und_token_indexes = {8, 0, 7, 2, 1};
  EXPECT_NO_THROW(ref::prepare_metadata(layout));
  layout.und_token_indexes = {8, 0, 7, 2, 4};
  expect_error([&] { ref::prepare_metadata(layout); }, ref::Errc::und_token_in_full_split, "und_token_indexes",
               "row 4 lies in full split 1");
  // Descending lists and two ascending runs (the orders the generators send)
  // are put in order without a sort: the same checks, the same errors.
  for (const std::vector<std::int64_t>& und :
       {std::vector<std::int64_t>{8, 7, 2, 1, 0}, std::vector<std::int64_t>{1, 7, 0, 2, 8}}) {
    layout.und_token_indexes = und;
    EXPECT_NO_THROW(ref::prepare_metadata(layout));
  }
  for (const auto& [und, repeated] : {std::pair{std::vector<std::int64_t>{8, 7, 7, 0}, "index 7 "},
                                      std::pair{std::vector<std::int64_t>{1, 7, 1, 8}, "index 1 "}}) {
    layout.und_token_indexes = und;
    expect_error([&] { ref::prepare_metadata(layout); }, ref::Errc::invalid_layout, "und_token_indexes",
                 std::string(repeated) + "appears more than once");
  }
  layout.und_token_indexes = {2, 8, 0, 4, 7};
  expect_error([&] { ref::prepare_metadata(layout); }, ref::Errc::und_token_in_full_split, "und_token_indexes",
               "row 4 lies in full split 1");
}

ref::Options graphs(bool image) {
  ref::Options o;
  o.pad_for_cuda_graphs = true;
  o.is_image_batch = image;
  return o;
}

ref::Pack build_with(const ref::Layout& layout, const ref::Options& o, ref::GraphMarks& marks) {
  return ref::build_pack(numbered_rows(static_cast<std::size_t>(seqpack::testing::total_rows(layout))), layout, o,
                         marks);
}

TEST(GraphMarks, GrowPerBatchKindAndOnlyGrow) {
  ref::GraphMarks marks;
  const auto big = make_layout({3000}, {"causal", "full"}, {200, 2800});
  const auto small = make_layout({10}, {"causal", "full"}, {4, 6});
  ref::Pack p = build_with(big, graphs(false), marks);
  // 201 -> 256 (bucket 128); 2801 -> 2816 (bucket 256: 11 * 256).
  EXPECT_EQ(marks, (ref::GraphMarks{0, 0, 256, 2816}));
  EXPECT_EQ(p.causal_seq.rows(), 256u);
  EXPECT_EQ(p.full_only_seq.rows(), 2816u);
  // A smaller video batch pads to the marks; they do not shrink.
  p = build_with(small, graphs(false), marks);
  EXPECT_EQ(p.causal_seq.rows(), 256u);
  EXPECT_EQ(p.full_only_seq.rows(), 2816u);
  EXPECT_EQ(marks, (ref::GraphMarks{0, 0, 256, 2816}));
  ASSERT_TRUE(p.pad_segment);
  EXPECT_EQ(p.pad_segment->max_causal_len, 252);
  EXPECT_EQ(p.pad_segment->max_full_len, 2810);
  // An image batch has marks of its own.
  p = build_with(small, graphs(true), marks);
  EXPECT_EQ(p.causal_seq.rows(), 128u);
  EXPECT_EQ(p.full_only_seq.rows(), 128u);
  EXPECT_EQ(marks, (ref::GraphMarks{128, 128, 256, 2816}));
}

TEST(GraphMarks, MarksAreIgnoredWithoutGraphs) {
  ref::GraphMarks marks{1000, 1000, 1000, 1000};
  const ref::Pack p = build_with(make_layout({10}, {"causal", "full"}, {4, 6}), {}, marks);
  EXPECT_EQ(p.causal_seq.rows(), 5u);
  EXPECT_EQ(marks, (ref::GraphMarks{1000, 1000, 1000, 1000}));
}

TEST(GraphMarks, MarksFromAnotherCpSizeAreUsedWithoutReRounding) {
  // As the original: a mark of 512 left by a cp=1 call is used by a cp=3 call
  // as it is, and 512 rows do not split into 3 shards.
  ref::GraphMarks marks;
  build_with(make_layout({400}, {"full"}, {400}), graphs(false), marks);
  EXPECT_EQ(marks.video_full, 512);
  ref::Options o = graphs(false);
  o.cp_world_size = 3;
  const ref::Pack p = build_with(make_layout({5}, {"full"}, {5}), o, marks);
  EXPECT_EQ(p.full_only_seq.rows(), 512u);
  expect_error([&] { ref::shard_pack(p, 0, 3); }, ref::Errc::not_divisible, "full_only_seq",
               "512 padded rows do not split into 3 shards");
}

TEST(GraphMarks, PlanPackIsPure) {
  const ref::Metadata meta = ref::prepare_metadata(kPairs);
  const ref::GraphMarks marks{1, 2, 3, 4};
  const ref::PackShape shape = ref::plan_pack(meta, 13, graphs(true), marks);
  EXPECT_EQ(shape.causal_len, 128);
  EXPECT_EQ(shape.full_len, 128);
  EXPECT_EQ(shape.marks_after, (ref::GraphMarks{128, 128, 3, 4}));
  EXPECT_EQ(marks, (ref::GraphMarks{1, 2, 3, 4}));
  ASSERT_TRUE(shape.pad_segment);
  EXPECT_EQ(shape.pad_segment->sample_offsets, (I32{0, 7, 13, 256}));
}

}  // namespace
