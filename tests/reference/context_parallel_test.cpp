// Context parallelism: shards, local counts, gather, sharded position ids.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

namespace ref = seqpack::reference;
using ref::Errc;
using seqpack::testing::build;
using seqpack::testing::expect_error;
using seqpack::testing::I64;
using seqpack::testing::make_layout;
using seqpack::testing::row_ids;

// E6's first layout: samples [8, 9], splits [3, 5, 2, 7], cp 2, alignments 2.
ref::Pack e6_pack() {
  ref::Options options;
  options.cp_world_size = 2;
  options.causal_seq_alignment = 2;
  options.full_seq_alignment = 2;
  return build(make_layout({8, 9}, {"causal", "full", "causal", "full"}, {3, 5, 2, 7}), options);
}

TEST(ContextParallel, ShardsAreContiguousSlices) {
  const ref::Pack pack = e6_pack();
  const ref::Pack r0 = ref::shard_pack(pack, 0, 2);
  const ref::Pack r1 = ref::shard_pack(pack, 1, 2);
  EXPECT_EQ(row_ids(r0.causal_seq), (I64{0, 1, 2}));
  EXPECT_EQ(row_ids(r1.causal_seq), (I64{8, 9, -1}));
  EXPECT_EQ(row_ids(r0.full_only_seq), (I64{3, 4, 5, 6, 7, 10, 11}));
  EXPECT_EQ(row_ids(r1.full_only_seq), (I64{12, 13, 14, 15, 16, -1, -1}));
  EXPECT_EQ(r0.causal_sample_ids, (I64{0, 0, 0}));
  EXPECT_EQ(r1.causal_sample_ids, (I64{1, 1, 2}));
  EXPECT_EQ(r1.full_only_sample_ids, (I64{1, 1, 1, 1, 1, 2, 2}));
  EXPECT_TRUE(r0.is_sharded && r1.is_sharded);
  // Offsets stay global.
  EXPECT_EQ(r1.meta, pack.meta);
  EXPECT_EQ(r1.pad_segment, pack.pad_segment);
}

TEST(ContextParallel, GatherOfAllRanksIsTheIdentity) {
  const ref::Layout layouts[] = {
      make_layout({8, 9}, {"causal", "full", "causal", "full"}, {3, 5, 2, 7}),
      make_layout({5, 2}, {"full", "full"}, {5, 2}),
      make_layout({0, 7}, {"causal", "full", "causal", "full"}, {0, 0, 3, 4}),
      make_layout({40}, {"causal", "full"}, {1, 39}),
  };
  for (const auto& layout : layouts) {
    for (const std::int64_t world : {1, 2, 3, 4, 8}) {
      ref::Options options;
      options.cp_world_size = world;
      options.full_seq_alignment = 3;
      const ref::Pack pack = build(layout, options, 8);
      const ref::Pack whole = ref::gather_shards(ref::shard_pack_all(pack, world));
      EXPECT_TRUE(whole.causal_seq == pack.causal_seq) << "world " << world;
      EXPECT_TRUE(whole.full_only_seq == pack.full_only_seq);
      EXPECT_EQ(whole.causal_sample_ids, pack.causal_sample_ids);
      EXPECT_EQ(whole.full_only_sample_ids, pack.full_only_sample_ids);
      EXPECT_EQ(whole.pad_segment, pack.pad_segment);
      EXPECT_FALSE(whole.is_sharded);
      EXPECT_FALSE(whole.num_causal_tokens_local);
      EXPECT_TRUE(ref::get_all_seq(whole) == ref::get_all_seq(pack));
    }
  }
}

TEST(ContextParallel, LocalCountsAddUpAndFollowTheFormula) {
  EXPECT_EQ(ref::num_local_real_tokens(10, 0, 4), 4);
  EXPECT_EQ(ref::num_local_real_tokens(10, 2, 4), 2);
  EXPECT_EQ(ref::num_local_real_tokens(10, 3, 4), 0);
  EXPECT_EQ(ref::num_local_real_tokens(0, 0, 4), 0);
  EXPECT_EQ(ref::num_local_real_tokens(10, INT64_MAX, 4), 0);  // no int64 wrap
  expect_error([] { ref::num_local_real_tokens(10, -1, 4); }, Errc::invalid_argument, "rank", "got -1");
  expect_error([] { ref::num_local_real_tokens(-2, 0, 4); }, Errc::invalid_argument, "num_real_tokens", "got -2");
}

TEST(ContextParallel, ShardingErrors) {
  const ref::Pack pack = e6_pack();
  expect_error([&] { ref::shard_pack(pack, 2, 2); }, Errc::invalid_argument, "rank", "must lie in [0, 2), got 2");
  expect_error([&] { ref::shard_pack(pack, 0, 0); }, Errc::invalid_option, "cp_world_size", "got 0");
  expect_error([&] { ref::shard_pack(pack, 0, 4); }, Errc::not_divisible, "causal_seq",
               "6 padded rows do not split into 4 shards");
  expect_error([&] { ref::shard_pack(ref::shard_pack(pack, 0, 2), 0, 1); }, Errc::sharded_pack, "pack.is_sharded",
               "already a shard");
  auto shards = ref::shard_pack_all(pack, 2);
  shards.pop_back();
  expect_error([&] { ref::gather_shards(shards); }, Errc::invalid_argument, "shards", "a rank is missing");
  expect_error([&] { ref::gather_shards({pack}); }, Errc::sharded_pack, "shards[0].is_sharded", "not a context");
  ref::Pack bare = ref::shard_pack(pack, 0, 2);
  bare.num_full_tokens_local.reset();
  expect_error([&] { ref::get_num_real_tokens(bare); }, Errc::invalid_argument, "pack.num_causal_tokens_local",
               "make it with shard_pack");
}

TEST(ContextParallel, ShardedPositionIdsOneDimensional) {
  const ref::Pack pack = e6_pack();
  ref::PositionIds ids{false, 1, 17, {}};
  for (std::int64_t i = 0; i < 17; ++i) ids.values.push_back(100 + i);
  // und ids [100 101 102 108 109] padded to 6; gen ids [103..107 110..116] padded to 14.
  EXPECT_EQ(ref::shard_position_ids(ids, pack, 0, 2).values, (I64{100, 101, 102, 103, 104, 105, 106, 107, 110, 111}));
  const ref::PositionIds r1 = ref::shard_position_ids(ids, pack, 1, 2);
  EXPECT_EQ(r1.values, (I64{108, 109, 0, 112, 113, 114, 115, 116, 0, 0}));
  EXPECT_EQ(r1.len, 10u);
  EXPECT_FALSE(r1.two_dimensional);
}

TEST(ContextParallel, ShardedPositionIdsThreeDimensional) {
  const ref::Pack pack = e6_pack();
  ref::PositionIds ids{true, 3, 17, {}};
  for (std::int64_t a = 0; a < 3; ++a)
    for (std::int64_t i = 0; i < 17; ++i) ids.values.push_back(1000 * (a + 1) + i);
  const ref::PositionIds r1 = ref::shard_position_ids(ids, pack, 1, 2);
  EXPECT_TRUE(r1.two_dimensional);
  EXPECT_EQ(r1.axes, 3u);
  EXPECT_EQ(r1.len, 10u);
  I64 want;
  for (std::int64_t a = 1; a <= 3; ++a) {
    const std::int64_t base = 1000 * a;
    const I64 axis{base + 8, base + 9, 0, base + 12, base + 13, base + 14, base + 15, base + 16, 0, 0};
    want.insert(want.end(), axis.begin(), axis.end());
  }
  EXPECT_EQ(r1.values, want);
  expect_error([&] { ref::shard_position_ids(ids, pack, 0, 4); }, Errc::not_divisible, "causal_seq", "4 shards");
}

}  // namespace
