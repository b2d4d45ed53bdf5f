// Each error class from a minimal input, its message, and the protocol's
// precedence when several apply.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

namespace ref = seqpack::reference;
using ref::Errc;
using seqpack::testing::build;
using seqpack::testing::expect_error;
using seqpack::testing::make_layout;
using seqpack::testing::numbered_rows;

const ref::Layout kPair = make_layout({3}, {"causal", "full"}, {1, 2});

void build_rows(const ref::Layout& layout, std::size_t rows, const ref::Options& options = {}) {
  ref::GraphMarks marks;
  ref::build_pack(numbered_rows(rows), layout, options, marks);
}

TEST(Errors, InvalidOptionNamesTheOption) {
  ref::Options o;
  o.cp_world_size = 0;
  expect_error([&] { build(kPair, o); }, Errc::invalid_option, "options.cp_world_size", "got 0");
  o = {};
  o.full_seq_alignment = -4;
  expect_error([&] { build(kPair, o); }, Errc::invalid_option, "options.full_seq_alignment", "got -4");
  o = {};
  o.causal_seq_alignment = 0;
  expect_error([&] { build(kPair, o); }, Errc::invalid_option, "options.causal_seq_alignment", "got 0");
}

TEST(Errors, NegativeGraphMarkIsAnInvalidOption) {
  ref::GraphMarks marks;
  marks.video_full = -1;
  expect_error([&] { ref::build_pack(numbered_rows(3), kPair, {}, marks); }, Errc::invalid_option,
               "graph_bounds.video.full", "got -1");
}

TEST(Errors, EmptyBatch) {
  expect_error([] { build_rows({}, 0); }, Errc::empty_batch, "sample_lens", "no samples");
}

TEST(Errors, InvalidLayoutEachCause) {
  expect_error(
      [] {
        build_rows({{3}, {1, 2}, {"causal"}, {}}, 3);
      },
      Errc::invalid_layout, "attn_modes", "1 modes for 2 splits");
  expect_error([] { build_rows({{3, -1}, {3}, {"full"}, {}}, 2); }, Errc::invalid_layout, "sample_lens[1]", "got -1");
  expect_error(
      [] {
        build_rows({{3}, {4, -1}, {"causal", "full"}, {}}, 3);
      },
      Errc::invalid_layout, "split_lens[1]", "got -1");
  expect_error(
      [] {
        build_rows({{3}, {1, 2}, {"causal", "sliding"}, {}}, 3);
      },
      Errc::invalid_layout, "attn_modes[1]", "\"sliding\"");
  // Splits summing short of, or past, the samples.
  expect_error(
      [] {
        build_rows({{3}, {1, 1}, {"causal", "full"}, {}}, 3);
      },
      Errc::invalid_layout, "split_lens", "splits sum to 2 rows but samples to 3");
  expect_error(
      [] {
        build_rows({{3}, {1, 2, 1}, {"causal", "full", "full"}, {}}, 3);
      },
      Errc::invalid_layout, "split_lens", "splits sum to 4 rows but samples to 3");
  // A split across a sample boundary: samples [2, 2], splits [1, 2, 1].
  expect_error(
      [] {
        build_rows({{2, 2}, {1, 2, 1}, {"causal", "full", "causal"}, {}}, 4);
      },
      Errc::invalid_layout, "split_lens[1]", "covers rows [1, 3), across the boundary at row 2 where sample 1 starts");
  expect_error(
      [] {
        build_rows({{3}, {1, 2}, {"causal", "full"}, {3}}, 3);
      },
      Errc::invalid_layout, "und_token_indexes[0]", "index 3 is outside [0, 3)");
  expect_error(
      [] {
        build_rows({{3}, {1, 2}, {"causal", "full"}, {0, -1}}, 3);
      },
      Errc::invalid_layout, "und_token_indexes[1]", "index -1 is outside");
  expect_error(
      [] {
        build_rows({{3}, {2, 1}, {"causal", "full"}, {1, 0, 1}}, 3);
      },
      Errc::invalid_layout, "und_token_indexes", "index 1 appears more than once");
}

TEST(Errors, UndTokenInFullSplit) {
  expect_error(
      [] {
        build_rows({{3}, {1, 2}, {"causal", "full"}, {0, 2}}, 3);
      },
      Errc::und_token_in_full_split, "und_token_indexes",
      "und token at packed row 2 lies in full split 1 (rows [1, 3))");
}

TEST(Errors, LengthMismatch) {
  expect_error([] { build_rows(kPair, 4); }, Errc::length_mismatch, "rows",
               "the packed sequence has 4 rows but sample_lens sum to 3");
}

TEST(Errors, OverflowOfTokenCountAndPaddedSize) {
  // 2^31 tokens: the metadata's int32 offsets cannot hold them. The row count
  // check comes first, so go through prepare_metadata.
  const ref::Layout big{{2147483647, 1}, {2147483647, 1}, {"full", "full"}, {}};
  expect_error([&] { ref::prepare_metadata(big); }, Errc::overflow, "sample_lens", "2147483648 tokens");
  // A padded size past int32 from a huge alignment on a tiny batch.
  ref::Options o;
  o.full_seq_alignment = 4294967296LL;
  expect_error([&] { build(kPair, o); }, Errc::overflow, "options.full_seq_alignment", "exceeds int32");
  // lcm(cp, alignment) past int32 although each fits.
  o.full_seq_alignment = 65537;
  o.cp_world_size = 65536;
  expect_error([&] { build(kPair, o); }, Errc::overflow, "options.full_seq_alignment", "cp_world_size=65536");
  // Graph marks past int32 become lengths.
  ref::GraphMarks marks;
  marks.image_causal = 3000000000LL;
  o = {};
  o.pad_for_cuda_graphs = true;
  o.is_image_batch = true;
  expect_error([&] { ref::build_pack(numbered_rows(3), kPair, o, marks); }, Errc::overflow, "graph_bounds.image.causal",
               "3000000000");
}

// The fuzz finding of issue 17 (corpus/build_pack/8d45207981bf9fd2bf30c596babd148e1beafaba):
// an alignment past int32 on a stream that stays empty is accepted, as the
// original accepts it (0 rows pad to 0 under any alignment, and no offset
// passes int32). One row on that stream is overflow.
TEST(Errors, AlignmentPastInt32OnAnEmptyStreamBuilds) {
  ref::Options o;
  o.full_seq_alignment = 3349676970496LL;
  o.is_image_batch = true;
  const ref::Pack p = build(make_layout({0}, {}, {}), o);
  EXPECT_EQ(p.causal_seq.rows(), 0u);
  EXPECT_EQ(p.full_only_seq.rows(), 0u);
  EXPECT_EQ(p.meta->sample_offsets, (std::vector<std::int32_t>{0, 0}));
  // A causal-only sample leaves the full stream empty too.
  const ref::Pack q = build(make_layout({3}, {"causal"}, {3}), o);
  EXPECT_EQ(q.causal_seq.rows(), 3u);
  EXPECT_EQ(q.full_only_seq.rows(), 0u);
  expect_error([&] { build(make_layout({1}, {"full"}, {1}), o); }, Errc::overflow, "options.full_seq_alignment",
               "alignment=3349676970496");
}

TEST(Errors, OverflowOfTheInterleavedPadSegment) {
  // Each stream fits int32, their sum (the pad-segment sample offset) does not.
  ref::Options o;
  o.causal_seq_alignment = 1073741824;
  o.full_seq_alignment = 1073741824;
  expect_error([&] { build(kPair, o); }, Errc::overflow, "sample_offsets", "past int32");
}

TEST(Errors, PadSegmentPairing) {
  expect_error(
      [] {
        build(make_layout({4}, {"causal", "full", "causal", "full"}, {1, 1, 1, 1}));
      },
      Errc::pad_segment_pairing, "split_lens", "needs one full split per sample");
}

TEST(Errors, MetadataMismatch) {
  auto prepared = std::make_shared<const ref::Metadata>(ref::prepare_metadata(kPair));
  const auto other = make_layout({3}, {"causal", "full"}, {2, 1});
  ref::GraphMarks marks;
  expect_error([&] { ref::build_pack(numbered_rows(3), other, {}, marks, prepared); }, Errc::metadata_mismatch,
               "prepared_metadata", "another layout");
}

// --- precedence: one input with two faults reports the earlier class ---

TEST(ErrorPrecedence, OptionBeforeEmptyBatch) {
  ref::Options o;
  o.cp_world_size = -1;
  ref::GraphMarks marks;
  expect_error([&] { ref::build_pack(numbered_rows(0), {}, o, marks); }, Errc::invalid_option, "options.cp_world_size",
               "got -1");
}

TEST(ErrorPrecedence, EmptyBatchBeforeInvalidLayout) {
  expect_error([] { build_rows({{}, {1}, {}, {}}, 0); }, Errc::empty_batch, "sample_lens", "no samples");
}

TEST(ErrorPrecedence, InvalidLayoutBeforeUndInFullAndLength) {
  // und 2 lies in a full split, and und 9 is out of range: the range error wins.
  expect_error(
      [] {
        build_rows({{3}, {1, 2}, {"causal", "full"}, {2, 9}}, 7);
      },
      Errc::invalid_layout, "und_token_indexes[1]", "index 9");
}

TEST(ErrorPrecedence, UndInFullBeforeLengthMismatch) {
  expect_error(
      [] {
        build_rows({{3}, {1, 2}, {"causal", "full"}, {1}}, 7);
      },
      Errc::und_token_in_full_split, "und_token_indexes", "row 1");
}

TEST(ErrorPrecedence, LengthMismatchBeforeOverflow) {
  const ref::Layout big{{2147483647, 1}, {2147483647, 1}, {"full", "full"}, {}};
  expect_error([&] { build_rows(big, 5); }, Errc::length_mismatch, "rows", "sample_lens sum to 2147483648");
  // Lengths that sum past int64 still compare as a mismatch, not a wrap.
  const ref::Layout huge{{INT64_MAX, INT64_MAX}, {INT64_MAX, INT64_MAX}, {"full", "full"}, {}};
  expect_error([&] { build_rows(huge, 5); }, Errc::length_mismatch, "rows", "more than int64");
}

TEST(ErrorPrecedence, OverflowBeforePairing) {
  ref::Options o;
  o.full_seq_alignment = 2147483647;  // the full stream fits; the interleaved pad segment does not
  expect_error(
      [&] {
        build(make_layout({4}, {"causal", "full", "causal", "full"}, {1, 1, 1, 1}), o);
      },
      Errc::overflow, "sample_offsets", "int32");
}

TEST(ErrorPrecedence, HugeLayoutStillReportsTilingByExactSums) {
  // Sums past int64 are compared exactly: off by one row at 2^64.
  const ref::Layout layout{{INT64_MAX, INT64_MAX, 2}, {INT64_MAX, INT64_MAX, 1}, {"full", "full", "full"}, {}};
  expect_error([&] { build_rows(layout, 1); }, Errc::invalid_layout, "split_lens",
               "splits sum to 18446744073709551615 rows but samples to 18446744073709551616");
}

TEST(Errors, FailedBuildLeavesMarksUntouched) {
  ref::Options o;
  o.pad_for_cuda_graphs = true;
  ref::GraphMarks marks;
  marks.video_causal = 5;
  const ref::GraphMarks before = marks;
  // Pairing fails after the lengths are known; the original has raised its globals by then.
  EXPECT_THROW(
      ref::build_pack(numbered_rows(4), make_layout({4}, {"causal", "full", "causal", "full"}, {1, 1, 1, 1}), o, marks),
      ref::Error);
  EXPECT_EQ(marks, before);
}

}  // namespace
