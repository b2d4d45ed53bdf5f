// Edge layouts: empty splits and samples, full-only packs, one token, an empty
// causal stream, many samples.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

namespace ref = seqpack::reference;
using seqpack::testing::build;
using seqpack::testing::I32;
using seqpack::testing::I64;
using seqpack::testing::make_layout;
using seqpack::testing::numbered_rows;
using seqpack::testing::row_ids;

TEST(EdgeLayouts, ZeroLengthSplitsStillAddAnOffsetEntry) {
  // Sample 0 is text only (empty full split), sample 1 has an empty causal split.
  const ref::Pack pack = build(make_layout({3, 4}, {"causal", "full", "causal", "full"}, {3, 0, 0, 4}));
  EXPECT_EQ(pack.meta->causal_seq_offsets, (I32{0, 3, 3}));
  EXPECT_EQ(pack.meta->full_only_seq_offsets, (I32{0, 0, 4}));
  EXPECT_EQ(pack.meta->causal_sample_ids, (I64{0, 0, 0}));
  EXPECT_EQ(pack.meta->full_only_sample_ids, (I64{1, 1, 1, 1}));
  ASSERT_TRUE(pack.pad_segment);
  EXPECT_EQ(pack.pad_segment->causal_seq_offsets, (I32{0, 3, 3, 4}));
  EXPECT_EQ(pack.pad_segment->full_only_seq_offsets, (I32{0, 0, 4, 5}));
  EXPECT_EQ(pack.pad_segment->sample_offsets, (I32{0, 3, 7, 9}));
}

TEST(EdgeLayouts, ZeroLengthSampleGetsNoRowsButKeepsItsId) {
  const ref::Pack pack =
      build(make_layout({2, 0, 3}, {"causal", "full", "causal", "full", "causal", "full"}, {1, 1, 0, 0, 2, 1}));
  EXPECT_EQ(pack.meta->sample_offsets, (I32{0, 2, 2, 5}));
  EXPECT_EQ(pack.meta->causal_sample_ids, (I64{0, 2, 2}));
  EXPECT_EQ(pack.meta->full_only_sample_ids, (I64{0, 2}));
  EXPECT_EQ(pack.causal_sample_ids, (I64{0, 2, 2, 3}));  // padding id = 3 samples
  EXPECT_TRUE(ref::get_all_seq(pack) == numbered_rows(5));
}

TEST(EdgeLayouts, OneToken) {
  const ref::Pack full = build(make_layout({1}, {"full"}, {1}));
  EXPECT_EQ(full.full_only_seq.rows(), 1u);
  EXPECT_EQ(full.causal_seq.rows(), 0u);
  EXPECT_FALSE(full.pad_segment);
  // A lone causal token: one causal split and no full split, so no pad segment.
  const ref::Pack causal = build(make_layout({1}, {"causal"}, {1}));
  EXPECT_EQ(row_ids(causal.causal_seq), (I64{0}));
  EXPECT_EQ(causal.full_only_seq.rows(), 0u);
  EXPECT_FALSE(causal.pad_segment);
  EXPECT_EQ(causal.meta->full_only_seq_offsets, (I32{0}));
}

TEST(EdgeLayouts, EmptyBatchOfEmptySamples) {
  const ref::Pack pack = build(ref::Layout{{0}, {}, {}, {}});
  EXPECT_EQ(pack.max_num_tokens, 0);
  EXPECT_EQ(pack.meta->sample_offsets, (I32{0, 0}));
  EXPECT_EQ(pack.causal_seq.rows() + pack.full_only_seq.rows(), 0u);
  EXPECT_EQ(ref::get_all_seq(pack).rows(), 0u);
}

TEST(EdgeLayouts, EmptyCausalStreamWithPairsStillGetsAPadRow) {
  const ref::Pack pack = build(make_layout({5, 7}, {"causal", "full", "causal", "full"}, {0, 5, 0, 7}));
  EXPECT_EQ(pack.causal_seq.rows(), 1u);
  EXPECT_EQ(row_ids(pack.causal_seq), (I64{-1}));
  EXPECT_EQ(pack.causal_sample_ids, (I64{2}));
  ASSERT_TRUE(pack.pad_segment);
  EXPECT_EQ(pack.pad_segment->causal_seq_offsets, (I32{0, 0, 0, 1}));
  EXPECT_EQ(pack.pad_segment->max_causal_len, 1);
}

TEST(EdgeLayouts, ManySamples) {
  // 300 samples of varied [causal, full] lengths, some empty.
  std::vector<std::int64_t> samples, splits;
  std::vector<std::string> modes;
  for (int s = 0; s < 300; ++s) {
    const std::int64_t c = s % 5, f = (s * 7) % 11;
    samples.push_back(c + f);
    splits.insert(splits.end(), {c, f});
    modes.insert(modes.end(), {"causal", "full"});
  }
  ref::Options options;
  options.full_seq_alignment = 64;
  const auto layout = make_layout(samples, modes, splits);
  const ref::Pack pack = build(layout, options, 16);
  const ref::Metadata& m = *pack.meta;
  ASSERT_EQ(m.sample_offsets.size(), 301u);
  ASSERT_EQ(m.causal_seq_offsets.size(), 301u);
  ASSERT_EQ(m.full_only_seq_offsets.size(), 301u);
  std::int64_t c_sum = 0, f_sum = 0, n = 0;
  for (int s = 0; s < 300; ++s) {
    c_sum += s % 5;
    f_sum += (s * 7) % 11;
    n += s % 5 + (s * 7) % 11;
    EXPECT_EQ(m.causal_seq_offsets[s + 1], c_sum);
    EXPECT_EQ(m.full_only_seq_offsets[s + 1], f_sum);
    EXPECT_EQ(m.sample_offsets[s + 1], n);
  }
  EXPECT_EQ(m.max_causal_len, 4);
  EXPECT_EQ(m.max_full_len, 10);
  EXPECT_EQ(pack.full_only_seq.rows() % 64, 0u);
  EXPECT_TRUE(ref::get_all_seq(pack) == numbered_rows(static_cast<std::size_t>(n), 16));
  // Sample ids agree with sample offsets, row by row.
  for (std::size_t i = 0; i < m.causal_indices.size(); ++i) {
    const std::int64_t id = m.causal_sample_ids[i];
    EXPECT_LE(m.sample_offsets[id], m.causal_indices[i]);
    EXPECT_LT(m.causal_indices[i], m.sample_offsets[id + 1]);
  }
}

TEST(EdgeLayouts, LongStreamPastTwentyThousandRows) {
  ref::Options options;
  options.pad_for_cuda_graphs = true;
  const ref::Pack pack =
      build(make_layout({20500, 3}, {"causal", "full", "causal", "full"}, {500, 20000, 1, 2}), options);
  EXPECT_EQ(pack.full_only_seq.rows(), 20480u);  // 20003 -> bucket 2048
  EXPECT_EQ(pack.causal_seq.rows(), 512u);       // 502 -> bucket 128
  EXPECT_EQ(ref::get_all_seq(pack).rows(), 20503u);
}

}  // namespace
