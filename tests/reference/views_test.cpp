// Views of a pack: round trips on every row width, the interleaved padded
// stream, setters, packs made from other packs, and position ids.
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "seqpack/reference/testing.hpp"
#include "test_support.hpp"

namespace {

namespace ref = seqpack::reference;
using ref::Errc;
using seqpack::testing::build;
using seqpack::testing::expect_error;
using seqpack::testing::I32;
using seqpack::testing::I64;
using seqpack::testing::make_layout;
using seqpack::testing::numbered_rows;
using seqpack::testing::random_rows;
using seqpack::testing::row_ids;

const ref::Layout kTwoPairs = make_layout({7, 6}, {"causal", "full", "causal", "full"}, {3, 4, 2, 4});
const ref::Layout kE1 = make_layout({2, 2}, {"causal", "full", "causal", "full"}, {1, 1, 1, 1});

// Rows of random bytes with special float patterns planted where they fit.
ref::Rows tricky_rows(std::size_t n, std::size_t width, std::uint64_t seed) {
  ref::Rows rows = random_rows(n, width, seed);
  for (std::size_t r = 0; r < n; ++r) ref::testing::plant_special_value(rows.row(r), width, r, 4);
  return rows;
}

class RowWidth : public ::testing::TestWithParam<std::size_t> {};

TEST_P(RowWidth, GetAllSeqReturnsTheInputBitForBit) {
  const std::size_t width = GetParam();
  for (const std::int64_t align : {1, 8}) {
    ref::Options options;
    options.causal_seq_alignment = align;
    options.full_seq_alignment = align;
    const ref::Rows input = tricky_rows(13, width, width * 7 + static_cast<std::size_t>(align));
    ref::GraphMarks marks;
    const ref::Pack pack = ref::build_pack(input, kTwoPairs, options, marks);
    EXPECT_EQ(pack.causal_seq.row_bytes(), width);
    EXPECT_TRUE(ref::get_all_seq(pack) == input) << "width " << width;
    // from_all_seq of get_all_seq gives the same streams, padding included.
    const ref::Pack again = ref::from_all_seq(ref::get_all_seq(pack), pack);
    EXPECT_TRUE(again.causal_seq == pack.causal_seq);
    EXPECT_TRUE(again.full_only_seq == pack.full_only_seq);
    // set_all_seq then get_all_seq.
    ref::Pack target = ref::zeros_like(pack);
    const ref::Rows other = tricky_rows(13, width, 99);
    ref::set_all_seq(target, other);
    EXPECT_TRUE(ref::get_all_seq(target) == other);
  }
}

// 1, 2, 4, 8, 16 bytes (the dtypes' widths) and odd widths.
INSTANTIATE_TEST_SUITE_P(Dtypes, RowWidth, ::testing::Values(1, 2, 3, 4, 8, 12, 16, 1024));

TEST(Views, GetAllSeqPaddedWithPadSegmentHasZeroTail) {
  ref::Options options;
  options.causal_seq_alignment = 4;
  options.full_seq_alignment = 4;
  const ref::Pack pack = build(kE1, options, 8);
  const ref::AllSeqPadded all = ref::get_all_seq_padded(pack);
  EXPECT_EQ(row_ids(all.seq), (I64{0, 1, 2, 3, -1, -1, -1, -1}));
  EXPECT_EQ(all.offsets, (I32{0, 2, 4, 8}));
  EXPECT_EQ(all.max_len, 4);
  EXPECT_TRUE(std::memcmp(all.seq.data(), numbered_rows(4, 8).data(), 4 * 8) == 0);
}

TEST(Views, GetAllSeqPaddedWithoutPadSegmentIsGetAllSeq) {
  const ref::Pack pack = build(make_layout({3, 2}, {"full", "full"}, {3, 2}));
  const ref::AllSeqPadded all = ref::get_all_seq_padded(pack);
  EXPECT_TRUE(all.seq == ref::get_all_seq(pack));
  EXPECT_EQ(all.offsets, (I32{0, 3, 5}));
  EXPECT_EQ(all.max_len, 3);
}

TEST(Views, SetAllSeqLeavesPaddingUntouched) {
  ref::Options options;
  options.full_seq_alignment = 8;
  ref::Pack pack = build(kTwoPairs, options);
  ASSERT_EQ(pack.full_only_seq.rows(), 16u);
  // Mark the padding rows so that a write to them shows.
  ref::Rows full = pack.full_only_seq;
  for (std::size_t r = 8; r < 16; ++r) std::memset(full.row(r), 0xAB, 4);
  ref::set_gen_seq(pack, full);
  ref::set_all_seq(pack, random_rows(13, 4, 5));
  for (std::size_t r = 8; r < 16; ++r) {
    EXPECT_EQ(pack.full_only_seq.row(r)[0], std::byte{0xAB}) << "padding row " << r;
  }
  EXPECT_TRUE(ref::get_all_seq(pack) == random_rows(13, 4, 5));
}

TEST(Views, SettersCheckTheirArguments) {
  ref::Pack pack = build(kTwoPairs);
  expect_error([&] { ref::set_und_seq(pack, ref::Rows(2, 4)); }, Errc::invalid_argument, "value",
               "has 2 rows, the causal stream has 6");
  expect_error([&] { ref::set_all_seq(pack, ref::Rows(12, 4)); }, Errc::invalid_argument, "value",
               "has 12 rows, the packed sequence has 13");
  expect_error([&] { ref::set_all_seq(pack, ref::Rows(13, 2)); }, Errc::invalid_argument, "value",
               "rows of 2 bytes, the pack's streams have 4");
  expect_error([&] { ref::from_all_seq(ref::Rows(3, 4), pack); }, Errc::invalid_argument, "packed",
               "has 3 rows, the packed sequence has 13");
}

// The setters replace the streams with what they are given (a setter that
// checks the size and writes nothing fails here).
TEST(Views, UndAndGenSettersReplaceTheStreams) {
  ref::Pack pack = build(kTwoPairs);
  const ref::Rows und = random_rows(pack.causal_seq.rows(), 4, 11), gen = random_rows(pack.full_only_seq.rows(), 4, 12);
  ref::set_und_seq(pack, und);
  ref::set_gen_seq(pack, gen);
  EXPECT_EQ(ref::get_und_seq(pack), und);
  EXPECT_EQ(ref::get_gen_seq(pack), gen);
  EXPECT_NE(ref::get_und_seq(pack), build(kTwoPairs).causal_seq);
}

TEST(Views, UndAndGenGettersReturnTheStreams) {
  const ref::Pack pack = build(kTwoPairs);
  EXPECT_EQ(row_ids(ref::get_und_seq(pack)), (I64{0, 1, 2, 7, 8, -1}));
  EXPECT_EQ(row_ids(ref::get_gen_seq(pack)), (I64{3, 4, 5, 6, 9, 10, 11, 12, -1}));
  EXPECT_EQ(ref::get_causal_seq(pack).offsets, (I32{0, 3, 5}));
  EXPECT_EQ(ref::get_full_only_seq(pack).offsets, (I32{0, 4, 8}));
}

TEST(Views, PaddedGettersPreferThePadSegment) {
  const ref::Pack pack = build(kTwoPairs);
  ASSERT_TRUE(ref::has_pad_segment(pack));
  EXPECT_EQ(ref::get_causal_seq_padded(pack).offsets, (I32{0, 3, 5, 6}));
  EXPECT_EQ(ref::get_causal_seq_padded(pack).max_len, 3);
  EXPECT_EQ(ref::get_full_only_seq_padded(pack).offsets, (I32{0, 4, 8, 9}));
  EXPECT_EQ(ref::get_full_only_seq_padded(pack).max_len, 4);

  ref::Options options;
  options.pad_segment_only_when_padded = true;
  const ref::Pack plain = build(kTwoPairs, options);
  ASSERT_FALSE(ref::has_pad_segment(plain));
  EXPECT_EQ(ref::get_causal_seq_padded(plain).offsets, (I32{0, 3, 5}));
  EXPECT_EQ(ref::get_causal_seq_padded(plain).max_len, 3);
  EXPECT_EQ(ref::get_full_only_seq_padded(plain).offsets, (I32{0, 4, 8}));
  EXPECT_EQ(ref::get_full_only_seq_padded(plain).max_len, 4);
}

TEST(Views, ShardedPackRefusesWholePackViews) {
  ref::Options options;
  options.cp_world_size = 2;
  ref::Pack pack = build(kTwoPairs, options);
  ref::Pack shard = ref::shard_pack(pack, 0, 2);
  expect_error([&] { ref::get_all_seq(shard); }, Errc::sharded_pack, "pack.is_sharded", "get_all_seq");
  expect_error([&] { ref::get_all_seq_padded(shard); }, Errc::sharded_pack, "pack.is_sharded", "get_all_seq_padded");
  expect_error([&] { ref::set_all_seq(shard, numbered_rows(13)); }, Errc::sharded_pack, "pack.is_sharded",
               "set_all_seq");
  expect_error([&] { ref::get_causal_seq_padded(shard); }, Errc::sharded_pack, "pack.is_sharded", "pad segment");
  expect_error([&] { ref::get_full_only_seq_padded(shard); }, Errc::sharded_pack, "pack.is_sharded", "pad segment");
  // A shard without a pad segment may use the plain offsets.
  ref::Pack full_only = build(make_layout({3, 5}, {"full", "full"}, {3, 5}), options);
  EXPECT_EQ(ref::get_full_only_seq_padded(ref::shard_pack(full_only, 1, 2)).offsets, (I32{0, 3, 8}));
}

// Each `*_refusal` function is the check its call runs before it builds
// anything (the oracle's cp_local view answers from it without throwing), so
// on every pack it names the error the call throws, field and message
// included, or nothing when the call succeeds.
TEST(Views, RefusalsAreWhatTheCallsThrow) {
  ref::Options cp2;
  cp2.cp_world_size = 2;
  ref::Options plain_options;
  plain_options.pad_segment_only_when_padded = true;
  const ref::Pack whole = build(kTwoPairs, cp2);
  std::vector<std::pair<std::string, ref::Pack>> packs = {
      {"whole, pad segment", whole},
      {"whole, no pad segment", build(kTwoPairs, plain_options)},
      {"shard, pad segment", ref::shard_pack(whole, 1, 2)},
      {"shard, no pad segment", ref::shard_pack(build(make_layout({3, 5}, {"full", "full"}, {3, 5}), cp2), 1, 2)},
  };
  ref::Pack no_meta = whole;
  no_meta.meta.reset();
  packs.emplace_back("no metadata", no_meta);
  ref::Pack narrow_full = whole;
  narrow_full.full_only_seq = ref::Rows(whole.full_only_seq.rows(), 2);
  packs.emplace_back("full stream of another width", narrow_full);
  ref::Pack short_causal = whole;
  short_causal.causal_seq = ref::Rows(2, 4);
  packs.emplace_back("causal stream shorter than its real rows", short_causal);

  const auto outcome = [](auto&& call) -> std::string {
    try {
      call();
      return "ok";
    } catch (const ref::Error& e) {
      return e.what() + std::string(" @") + e.field();
    }
  };
  const auto refused = [](const ref::Refusal& r) {
    return r ? r->what() + std::string(" @") + r->field() : std::string("ok");
  };
  std::set<std::string> seen;
  for (const auto& [name, pack] : packs) {
    SCOPED_TRACE(name);
    const std::size_t tokens = pack.meta ? static_cast<std::size_t>(pack.meta->num_tokens()) : 13;
    ref::PositionIds right;
    right.len = tokens;
    right.values.resize(tokens);
    ref::PositionIds wrong_len = right;
    wrong_len.len = tokens + 1;
    wrong_len.values.resize(tokens + 1);
    ref::PositionIds wrong_axes = right;
    wrong_axes.axes = 2;
    const std::vector<std::pair<std::string, std::string>> pairs = {
        {outcome([&] { ref::get_all_seq(pack); }), refused(ref::get_all_seq_refusal(pack))},
        {outcome([&] { ref::get_all_seq_padded(pack); }), refused(ref::get_all_seq_padded_refusal(pack))},
        {outcome([&] { ref::get_causal_seq_padded(pack); }), refused(ref::get_causal_seq_padded_refusal(pack))},
        {outcome([&] { ref::get_full_only_seq_padded(pack); }), refused(ref::get_full_only_seq_padded_refusal(pack))},
        {outcome([&] { ref::get_und_position_ids(right, pack); }),
         refused(ref::get_und_position_ids_refusal(right, pack))},
        {outcome([&] { ref::get_gen_position_ids(right, pack); }),
         refused(ref::get_gen_position_ids_refusal(right, pack))},
        {outcome([&] { ref::get_und_position_ids(wrong_len, pack); }),
         refused(ref::get_und_position_ids_refusal(wrong_len, pack))},
        {outcome([&] { ref::get_gen_position_ids(wrong_axes, pack); }),
         refused(ref::get_gen_position_ids_refusal(wrong_axes, pack))},
    };
    for (const auto& [thrown, answered] : pairs) {
      EXPECT_EQ(answered, thrown);
      seen.insert(thrown.substr(0, thrown.find(':')));
    }
  }
  // The packs reach success and both refusing classes.
  EXPECT_EQ(seen, (std::set<std::string>{"ok", "sharded_pack", "invalid_argument"}));
}

TEST(Views, ZerosLikeKeepsLengthsAndMetadata) {
  const ref::Pack pack = build(kTwoPairs);
  const ref::Pack zeros = ref::zeros_like(pack, 6);
  EXPECT_EQ(zeros.causal_seq.rows(), pack.causal_seq.rows());
  EXPECT_EQ(zeros.full_only_seq.rows(), pack.full_only_seq.rows());
  EXPECT_EQ(zeros.causal_seq.row_bytes(), 6u);
  EXPECT_EQ(zeros.full_only_seq.row_bytes(), 6u);
  EXPECT_TRUE(zeros.causal_seq == ref::Rows(6, 6));
  EXPECT_TRUE(zeros.full_only_seq == ref::Rows(9, 6));
  EXPECT_EQ(zeros.meta, pack.meta);
  EXPECT_EQ(zeros.causal_sample_ids, pack.causal_sample_ids);
  EXPECT_EQ(zeros.pad_segment, pack.pad_segment);
  EXPECT_EQ(ref::zeros_like(pack).causal_seq.row_bytes(), 4u);
}

TEST(Views, FromModeSplitsTakesStreamsAndShardFlag) {
  const ref::Pack pack = build(kTwoPairs);
  const ref::Pack made = ref::from_und_gen_splits(random_rows(6, 2, 1), random_rows(9, 2, 2), pack);
  EXPECT_TRUE(made.causal_seq == random_rows(6, 2, 1));
  EXPECT_TRUE(made.full_only_seq == random_rows(9, 2, 2));
  EXPECT_FALSE(made.is_sharded);
  EXPECT_TRUE(ref::from_mode_splits(ref::Rows(), ref::Rows(), pack, true).is_sharded);
}

TEST(Views, FromAllSeqOnAShardSplitsAtTheLocalCausalLength) {
  ref::Options options;
  options.cp_world_size = 3;
  const ref::Pack pack = build(kTwoPairs, options);
  const ref::Pack shard = ref::shard_pack(pack, 1, 3);
  ref::Rows joined(shard.causal_seq.rows() + shard.full_only_seq.rows(), 4);
  std::memcpy(joined.data(), shard.causal_seq.data(), shard.causal_seq.size_bytes());
  std::memcpy(joined.row(shard.causal_seq.rows()), shard.full_only_seq.data(), shard.full_only_seq.size_bytes());
  const ref::Pack back = ref::from_all_seq(joined, shard);
  EXPECT_TRUE(back.is_sharded);
  EXPECT_TRUE(back.causal_seq == shard.causal_seq);
  EXPECT_TRUE(back.full_only_seq == shard.full_only_seq);
}

TEST(Views, NumRealTokensOfWholePack) {
  const ref::Pack pack = build(kTwoPairs);
  EXPECT_EQ(ref::get_num_real_tokens(pack), (std::pair<std::int64_t, std::int64_t>{5, 8}));
}

TEST(PositionIds, OneAndThreeDimensional) {
  const ref::Pack pack = build(kTwoPairs);
  ref::PositionIds flat{false, 1, 13, {}};
  for (std::int64_t i = 0; i < 13; ++i) flat.values.push_back(100 + i);
  EXPECT_EQ(ref::get_und_position_ids(flat, pack).values, (I64{100, 101, 102, 107, 108}));
  EXPECT_EQ(ref::get_gen_position_ids(flat, pack).values, (I64{103, 104, 105, 106, 109, 110, 111, 112}));

  ref::PositionIds mrope{true, 3, 13, {}};
  for (std::int64_t a = 0; a < 3; ++a)
    for (std::int64_t i = 0; i < 13; ++i) mrope.values.push_back(1000 * a + i);
  const ref::PositionIds und = ref::get_und_position_ids(mrope, pack);
  EXPECT_TRUE(und.two_dimensional);
  EXPECT_EQ(und.axes, 3u);
  EXPECT_EQ(und.len, 5u);
  EXPECT_EQ(und.values, (I64{0, 1, 2, 7, 8, 1000, 1001, 1002, 1007, 1008, 2000, 2001, 2002, 2007, 2008}));
  EXPECT_EQ(ref::get_gen_position_ids(mrope, pack).len, 8u);

  expect_error(
      [&] {
        ref::get_und_position_ids(ref::PositionIds{false, 1, 12, I64(12)}, pack);
      },
      Errc::invalid_argument, "position_ids.len", "has 12 positions for 13 packed tokens");
  expect_error(
      [&] {
        ref::get_und_position_ids(ref::PositionIds{true, 3, 13, I64(13)}, pack);
      },
      Errc::invalid_argument, "position_ids.values", "holds 13 values for shape [3, 13]");
}

}  // namespace
