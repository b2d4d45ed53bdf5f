// Padded stream lengths: NOTES.md section 3 values, bucket edges, and errors.
#include <gtest/gtest.h>

#include "seqpack/common/index_math.hpp"
#include "test_support.hpp"

namespace {

using seqpack::reference::Errc;
using seqpack::reference::padded_size;
using seqpack::testing::expect_error;

TEST(PaddedSize, NoConstraintLeavesLengthUnchanged) {
  for (const std::int64_t n : {0, 1, 7, 129, 2049, 100000}) EXPECT_EQ(padded_size(n), n);
  EXPECT_EQ(padded_size(5, 1, false, 1), 5);
}

TEST(PaddedSize, GraphBucketsFromNotes) {
  // NOTES.md section 3, with CUDA graphs only.
  EXPECT_EQ(padded_size(2047, 1, true, 1), 2048);
  EXPECT_EQ(padded_size(2048, 1, true, 1), 2048);
  EXPECT_EQ(padded_size(2049, 1, true, 1), 2304);
  EXPECT_EQ(padded_size(4097, 1, true, 1), 4608);
  EXPECT_EQ(padded_size(8193, 1, true, 1), 9216);
  EXPECT_EQ(padded_size(16385, 1, true, 1), 18432);
}

TEST(PaddedSize, GraphsCpAndAlignmentFromNotes) {
  // cp 3, alignment 128, with graphs: lcm(128, bucket, 3).
  EXPECT_EQ(padded_size(5, 3, true, 128), 384);
  EXPECT_EQ(padded_size(2048, 3, true, 128), 2304);
  EXPECT_EQ(padded_size(4096, 3, true, 128), 4608);
  EXPECT_EQ(padded_size(16384, 3, true, 128), 18432);
  // Without graphs: lcm(128, 3) = 384.
  EXPECT_EQ(padded_size(4096, 3, false, 128), 4224);
  EXPECT_EQ(padded_size(16384, 3, false, 128), 16512);
}

TEST(PaddedSize, BucketBoundariesAreInclusive) {
  // Each boundary belongs to the smaller bucket; one past it to the next.
  EXPECT_EQ(seqpack::common::cuda_graph_bucket(2048), 128);
  EXPECT_EQ(seqpack::common::cuda_graph_bucket(2049), 256);
  EXPECT_EQ(seqpack::common::cuda_graph_bucket(4096), 256);
  EXPECT_EQ(seqpack::common::cuda_graph_bucket(4097), 512);
  EXPECT_EQ(seqpack::common::cuda_graph_bucket(8192), 512);
  EXPECT_EQ(seqpack::common::cuda_graph_bucket(8193), 1024);
  EXPECT_EQ(seqpack::common::cuda_graph_bucket(16384), 1024);
  EXPECT_EQ(seqpack::common::cuda_graph_bucket(16385), 2048);
  EXPECT_EQ(padded_size(4096, 1, true, 1), 4096);
  EXPECT_EQ(padded_size(8192, 1, true, 1), 8192);
  EXPECT_EQ(padded_size(16384, 1, true, 1), 16384);
  EXPECT_EQ(padded_size(1, 1, true, 1), 128);
}

TEST(PaddedSize, ZeroStaysZero) {
  EXPECT_EQ(padded_size(0, 16, true, 129), 0);
  // Even when the combined alignment is past int32.
  EXPECT_EQ(padded_size(0, 2147483647, true, 2147483646), 0);
}

TEST(PaddedSize, OddAlignmentsAndCpSharingFactors) {
  EXPECT_EQ(padded_size(5, 1, false, 7), 7);
  EXPECT_EQ(padded_size(130, 1, false, 129), 258);
  EXPECT_EQ(padded_size(5, 4, false, 6), 12);      // lcm(6, 4) = 12, not 24
  EXPECT_EQ(padded_size(1, 1, true, 129), 16512);  // lcm(129, 128) = 129 * 128
  EXPECT_EQ(padded_size(1, 3, true, 129), 16512);  // 129 = 3 * 43 already holds cp's factor
}

TEST(PaddedSize, RejectsValuesBelowOne) {
  // The original reads 0 and negatives as "no constraint"; the reference refuses.
  expect_error([] { padded_size(5, 0, false, 1); }, Errc::invalid_option, "cp_world_size", "got 0");
  expect_error([] { padded_size(5, 1, false, -3); }, Errc::invalid_option, "alignment", "got -3");
  expect_error([] { padded_size(-1, 1, false, 1); }, Errc::invalid_argument, "n", "got -1");
}

TEST(PaddedSize, OverflowIsAnErrorNotAWrap) {
  EXPECT_EQ(padded_size(2147483647, 1, false, 1), 2147483647);
  expect_error([] { padded_size(2147483647, 2, false, 1); }, Errc::overflow, "n", "2147483648");
  expect_error([] { padded_size(2147483648LL, 1, false, 1); }, Errc::overflow, "n", "2147483648");
  expect_error([] { padded_size(1, 1, false, 4294967296LL); }, Errc::overflow, "alignment", "4294967296");
  expect_error([] { padded_size(3, 65536, false, 65537); }, Errc::overflow, "alignment", "65537");
}

}  // namespace
