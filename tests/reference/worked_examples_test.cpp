// The worked examples E1 to E7 of NOTES.md section 5, every field checked.
// Expected values are the ones NOTES.md took from running the original; the
// rest (indices, sample ids, plain offsets) follow from the layout by hand.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

namespace ref = seqpack::reference;
using seqpack::testing::build;
using seqpack::testing::expect_error;
using seqpack::testing::I32;
using seqpack::testing::I64;
using seqpack::testing::make_layout;
using seqpack::testing::row_ids;

ref::Options aligned(std::int64_t causal, std::int64_t full) {
  ref::Options o;
  o.causal_seq_alignment = causal;
  o.full_seq_alignment = full;
  return o;
}

I32 range32(std::int32_t first, std::int32_t last) {  // [first, last)
  I32 out;
  for (std::int32_t i = first; i < last; ++i) out.push_back(i);
  return out;
}

I64 ids(std::initializer_list<std::pair<std::int64_t, std::int64_t>> runs) {  // (id, count) runs
  I64 out;
  for (const auto& [id, count] : runs) out.insert(out.end(), static_cast<std::size_t>(count), id);
  return out;
}

I64 rows_then_padding(const I32& indices, std::size_t padded) {
  I64 out(indices.begin(), indices.end());
  out.resize(padded, -1);
  return out;
}

TEST(WorkedExamples, E1TwoSamplesAlignedToFour) {
  const auto layout = make_layout({2, 2}, {"causal", "full", "causal", "full"}, {1, 1, 1, 1});
  ASSERT_EQ(layout.und_token_indexes, (I64{0, 2}));
  const ref::Pack pack = build(layout, aligned(4, 4));
  const ref::Metadata& m = *pack.meta;
  EXPECT_EQ(m.sample_offsets, (I32{0, 2, 4}));
  EXPECT_EQ(m.max_sample_len, 2);
  EXPECT_EQ(m.max_causal_len, 1);
  EXPECT_EQ(m.max_full_len, 1);
  EXPECT_EQ(pack.max_num_tokens, 4);
  EXPECT_EQ(m.causal_indices, (I32{0, 2}));
  EXPECT_EQ(m.full_indices, (I32{1, 3}));
  EXPECT_EQ(m.causal_seq_offsets, (I32{0, 1, 2}));
  EXPECT_EQ(m.full_only_seq_offsets, (I32{0, 1, 2}));
  EXPECT_EQ(m.num_causal_tokens, 2);
  EXPECT_EQ(m.num_full_tokens, 2);
  EXPECT_EQ(pack.causal_sample_ids, (I64{0, 1, 2, 2}));
  EXPECT_EQ(pack.full_only_sample_ids, (I64{0, 1, 2, 2}));
  EXPECT_EQ(row_ids(pack.causal_seq), (I64{0, 2, -1, -1}));
  EXPECT_EQ(row_ids(pack.full_only_seq), (I64{1, 3, -1, -1}));
  ASSERT_TRUE(pack.pad_segment);
  EXPECT_EQ(pack.pad_segment->causal_seq_offsets, (I32{0, 1, 2, 4}));
  EXPECT_EQ(pack.pad_segment->max_causal_len, 2);
  EXPECT_EQ(pack.pad_segment->full_only_seq_offsets, (I32{0, 1, 2, 4}));
  EXPECT_EQ(pack.pad_segment->max_full_len, 2);
  EXPECT_EQ(pack.pad_segment->sample_offsets, (I32{0, 2, 4, 8}));
  EXPECT_EQ(pack.pad_segment->max_sample_len, 4);
  EXPECT_FALSE(pack.is_sharded);
}

const ref::Layout& e2_layout() {
  static const ref::Layout layout = make_layout({112, 160}, {"causal", "full", "causal", "full"}, {12, 100, 20, 140});
  return layout;
}

void expect_e2_metadata(const ref::Pack& pack) {
  const ref::Metadata& m = *pack.meta;
  EXPECT_EQ(m.sample_offsets, (I32{0, 112, 272}));
  EXPECT_EQ(m.max_sample_len, 160);
  EXPECT_EQ(m.max_causal_len, 20);
  EXPECT_EQ(m.max_full_len, 140);
  EXPECT_EQ(pack.max_num_tokens, 272);
  I32 causal = range32(0, 12), causal2 = range32(112, 132);
  causal.insert(causal.end(), causal2.begin(), causal2.end());
  I32 full = range32(12, 112), full2 = range32(132, 272);
  full.insert(full.end(), full2.begin(), full2.end());
  EXPECT_EQ(m.causal_indices, causal);
  EXPECT_EQ(m.full_indices, full);
  EXPECT_EQ(m.causal_seq_offsets, (I32{0, 12, 32}));
  EXPECT_EQ(m.full_only_seq_offsets, (I32{0, 100, 240}));
  EXPECT_EQ(m.num_causal_tokens, 32);
  EXPECT_EQ(m.num_full_tokens, 240);
  EXPECT_EQ(row_ids(pack.causal_seq), rows_then_padding(causal, pack.causal_seq.rows()));
  EXPECT_EQ(row_ids(pack.full_only_seq), rows_then_padding(full, pack.full_only_seq.rows()));
}

TEST(WorkedExamples, E2AlignedTo128) {
  const ref::Pack pack = build(e2_layout(), aligned(128, 128));
  expect_e2_metadata(pack);
  EXPECT_EQ(pack.causal_seq.rows(), 128u);
  EXPECT_EQ(pack.full_only_seq.rows(), 256u);
  EXPECT_EQ(pack.causal_sample_ids, ids({{0, 12}, {1, 20}, {2, 96}}));
  EXPECT_EQ(pack.full_only_sample_ids, ids({{0, 100}, {1, 140}, {2, 16}}));
  ASSERT_TRUE(pack.pad_segment);
  EXPECT_EQ(pack.pad_segment->causal_seq_offsets, (I32{0, 12, 32, 128}));
  EXPECT_EQ(pack.pad_segment->max_causal_len, 96);
  EXPECT_EQ(pack.pad_segment->full_only_seq_offsets, (I32{0, 100, 240, 256}));
  EXPECT_EQ(pack.pad_segment->max_full_len, 140);
  EXPECT_EQ(pack.pad_segment->sample_offsets, (I32{0, 112, 272, 384}));
  EXPECT_EQ(pack.pad_segment->max_sample_len, 160);
}

TEST(WorkedExamples, E3UnalignedReservesOneRowPerStream) {
  const ref::Pack pack = build(e2_layout());
  expect_e2_metadata(pack);
  EXPECT_EQ(pack.causal_seq.rows(), 33u);
  EXPECT_EQ(pack.full_only_seq.rows(), 241u);
  EXPECT_EQ(pack.causal_sample_ids, ids({{0, 12}, {1, 20}, {2, 1}}));
  EXPECT_EQ(pack.full_only_sample_ids, ids({{0, 100}, {1, 140}, {2, 1}}));
  ASSERT_TRUE(pack.pad_segment);
  EXPECT_EQ(pack.pad_segment->causal_seq_offsets, (I32{0, 12, 32, 33}));
  EXPECT_EQ(pack.pad_segment->max_causal_len, 20);
  EXPECT_EQ(pack.pad_segment->full_only_seq_offsets, (I32{0, 100, 240, 241}));
  EXPECT_EQ(pack.pad_segment->max_full_len, 140);
  EXPECT_EQ(pack.pad_segment->sample_offsets, (I32{0, 112, 272, 274}));
  EXPECT_EQ(pack.pad_segment->max_sample_len, 160);
}

TEST(WorkedExamples, E3OnlyWhenPaddedDropsTheSegment) {
  ref::Options options;
  options.pad_segment_only_when_padded = true;
  const ref::Pack pack = build(e2_layout(), options);
  expect_e2_metadata(pack);
  EXPECT_EQ(pack.causal_seq.rows(), 32u);
  EXPECT_EQ(pack.full_only_seq.rows(), 240u);
  EXPECT_EQ(pack.causal_sample_ids, ids({{0, 12}, {1, 20}}));
  EXPECT_EQ(pack.full_only_sample_ids, ids({{0, 100}, {1, 140}}));
  EXPECT_FALSE(pack.pad_segment);
}

TEST(WorkedExamples, E4FullOnlyPackHasNoPadSegment) {
  const ref::Pack pack = build(make_layout({100}, {"full"}, {100}));
  const ref::Metadata& m = *pack.meta;
  EXPECT_FALSE(pack.pad_segment);
  EXPECT_EQ(m.full_only_seq_offsets, (I32{0, 100}));
  EXPECT_EQ(m.causal_seq_offsets, (I32{0}));
  EXPECT_EQ(pack.causal_seq.rows(), 0u);
  EXPECT_EQ(pack.full_only_seq.rows(), 100u);
  EXPECT_EQ(m.causal_indices, I32{});
  EXPECT_EQ(m.full_indices, range32(0, 100));
  EXPECT_EQ(m.sample_offsets, (I32{0, 100}));
  EXPECT_EQ(m.max_sample_len, 100);
  EXPECT_EQ(m.max_causal_len, 0);
  EXPECT_EQ(m.max_full_len, 100);
  EXPECT_EQ(pack.causal_sample_ids, I64{});
  EXPECT_EQ(pack.full_only_sample_ids, ids({{0, 100}}));
}

TEST(WorkedExamples, E5FullOnlyUnderContextParallel) {
  ref::Options options;
  options.cp_world_size = 2;
  const ref::Pack pack = build(make_layout({5, 2}, {"full", "full"}, {5, 2}), options);
  EXPECT_EQ(pack.full_only_seq.rows(), 8u);
  EXPECT_EQ(pack.causal_seq.rows(), 0u);
  EXPECT_EQ(pack.full_only_sample_ids, (I64{0, 0, 0, 0, 0, 1, 1, 2}));
  EXPECT_EQ(pack.meta->full_only_seq_offsets, (I32{0, 5, 7}));
  EXPECT_FALSE(pack.pad_segment);
  EXPECT_EQ(row_ids(pack.full_only_seq), (I64{0, 1, 2, 3, 4, 5, 6, -1}));
  const auto shards = ref::shard_pack_all(pack, 2);
  EXPECT_EQ(ref::get_num_real_tokens(shards[0]), (std::pair<std::int64_t, std::int64_t>{0, 4}));
  EXPECT_EQ(ref::get_num_real_tokens(shards[1]), (std::pair<std::int64_t, std::int64_t>{0, 3}));
}

struct E6Case {
  std::string name;
  std::vector<std::int64_t> splits;
  std::size_t causal_rows, full_rows;
  I32 causal_pad, full_pad, sample_pad;
  std::int32_t max_causal_pad, max_full_pad, max_sample_pad;
  std::pair<std::int64_t, std::int64_t> rank0, rank1;
};

class WorkedExampleE6 : public ::testing::TestWithParam<E6Case> {};

TEST_P(WorkedExampleE6, PadSegmentAndLocalCounts) {
  const E6Case& c = GetParam();
  const auto layout = make_layout({c.splits[0] + c.splits[1], c.splits[2] + c.splits[3]},
                                  {"causal", "full", "causal", "full"}, c.splits);
  ref::Options options = aligned(2, 2);
  options.cp_world_size = 2;
  const ref::Pack pack = build(layout, options);
  EXPECT_EQ(pack.causal_seq.rows(), c.causal_rows);
  EXPECT_EQ(pack.full_only_seq.rows(), c.full_rows);
  ASSERT_TRUE(pack.pad_segment);
  EXPECT_EQ(pack.pad_segment->causal_seq_offsets, c.causal_pad);
  EXPECT_EQ(pack.pad_segment->full_only_seq_offsets, c.full_pad);
  EXPECT_EQ(pack.pad_segment->sample_offsets, c.sample_pad);
  EXPECT_EQ(pack.pad_segment->max_causal_len, c.max_causal_pad);
  EXPECT_EQ(pack.pad_segment->max_full_len, c.max_full_pad);
  EXPECT_EQ(pack.pad_segment->max_sample_len, c.max_sample_pad);
  const auto shards = ref::shard_pack_all(pack, 2);
  EXPECT_EQ(ref::get_num_real_tokens(shards[0]), c.rank0);
  EXPECT_EQ(ref::get_num_real_tokens(shards[1]), c.rank1);
}

// Maxima: max(longest real split, pad rows), and for samples max(longest
// sample, causal pad + full pad).
INSTANTIATE_TEST_SUITE_P(
    NotesSection5, WorkedExampleE6,
    ::testing::Values(
        E6Case{
            "Splits3527", {3, 5, 2, 7}, 6, 14, {0, 3, 5, 6}, {0, 5, 12, 14}, {0, 8, 17, 20}, 3, 7, 9, {3, 7}, {2, 5}},
        E6Case{
            "EmptyCausal", {0, 5, 0, 7}, 2, 14, {0, 0, 0, 2}, {0, 5, 12, 14}, {0, 5, 12, 16}, 2, 7, 7, {0, 7}, {0, 5}},
        E6Case{"EmptyFull", {3, 0, 2, 0}, 6, 2, {0, 3, 5, 6}, {0, 0, 0, 2}, {0, 3, 5, 8}, 3, 2, 3, {3, 0}, {2, 0}}),
    [](const ::testing::TestParamInfo<E6Case>& info) { return info.param.name; });

TEST(WorkedExamples, E7OneSampleTwoPairsFailsPairing) {
  const auto layout = make_layout({4}, {"causal", "full", "causal", "full"}, {1, 1, 1, 1});
  expect_error([&] { build(layout); }, ref::Errc::pad_segment_pairing, "split_lens", "1 samples and 2 full splits");
  // Without a pad segment due, the same layout builds.
  ref::Options options;
  options.pad_segment_only_when_padded = true;
  EXPECT_FALSE(build(layout, options).pad_segment);
}

}  // namespace
