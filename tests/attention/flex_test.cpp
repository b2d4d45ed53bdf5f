// The block-sparse route: fully masked rows, padding attending padding, the
// block-alignment report, and agreement with varlen on contiguous samples.
#include "seqpack/attention/flex.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "seqpack/attention/varlen.hpp"

namespace {

namespace att = seqpack::attention;

att::Tensor filled(std::int64_t rows, std::uint64_t seed) {
  att::Tensor t(rows, 1, 2);
  att::fill_hashed(t, seed);
  return t;
}

TEST(Flex, FullyMaskedRowGivesZeroOutputMinusInfLseAndZeroGradients) {
  const att::Tensor q = filled(3, 1), k = filled(2, 2), v = filled(2, 3), dout = filled(3, 4);
  const att::MaskMod mask = att::sample_id_mask({0, 5, 0}, {0, 0}, false);  // row 1: no key of sample 5
  att::Tensor out(3, 1, 2, att::poison_nan()), dq(3, 1, 2, att::poison_nan()), dk(2, 1, 2, att::poison_nan()),
      dv(2, 1, 2, att::poison_nan());
  std::vector<double> lse(3, att::poison_nan());
  att::flex_forward(q, k, v, mask, std::nullopt, out, lse);
  att::flex_backward(dout, q, k, v, mask, std::nullopt, out, lse, dq, dk, dv);
  EXPECT_EQ(out.row(1)[0], 0.0);
  EXPECT_EQ(out.row(1)[1], 0.0);
  EXPECT_EQ(lse[1], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(dq.row(1)[0], 0.0);
  for (double x : out.values) EXPECT_FALSE(std::isnan(x));
  for (double x : dk.values) EXPECT_FALSE(std::isnan(x));
}

TEST(Flex, PaddingRowsAttendPaddingAndStayFinite) {
  // Two real rows of sample 0 and two padding rows (id = num_samples = 1).
  const std::vector<std::int64_t> ids = {0, 0, 1, 1};
  const att::MaskMod mask = att::sample_id_mask(ids, ids, true);
  EXPECT_TRUE(mask(3, 2));
  EXPECT_FALSE(mask(2, 1));
  EXPECT_FALSE(mask(1, 2));
  att::Tensor out(4, 1, 2, att::poison_nan());
  std::vector<double> lse(4, att::poison_nan());
  att::flex_forward(filled(4, 1), filled(4, 2), filled(4, 3), mask, std::nullopt, out, lse);
  for (double x : out.values) EXPECT_TRUE(std::isfinite(x));
}

TEST(Flex, BlockAlignmentIsReportedWhenALengthIsNotAMultiple) {
  EXPECT_TRUE(att::check_block_alignment(256, 384, 128).aligned);
  const att::BlockAlignment a = att::check_block_alignment(241, 274, 128);
  EXPECT_FALSE(a.aligned);
  EXPECT_NE(a.message.find("241"), std::string::npos);
  EXPECT_FALSE(att::check_block_alignment(4, 4, 0).aligned);
}

TEST(Flex, AgreesWithVarlenOnContiguousSamples) {
  const att::Tensor q = filled(5, 1), k = filled(5, 2), v = filled(5, 3);
  att::Tensor flex_out(5, 1, 2), varlen_out(5, 1, 2);
  std::vector<double> flex_lse(5), varlen_lse(5);
  att::flex_forward(q, k, v, att::sample_id_mask({0, 0, 1, 1, 1}, {0, 0, 1, 1, 1}, true), std::nullopt, flex_out,
                    flex_lse);
  att::varlen_forward(q, k, v, {{0, 2, 5}, {0, 2, 5}, 3, 3, true, std::nullopt}, varlen_out, varlen_lse);
  for (std::size_t i = 0; i < flex_out.values.size(); ++i) EXPECT_DOUBLE_EQ(flex_out.values[i], varlen_out.values[i]);
  for (std::size_t i = 0; i < flex_lse.size(); ++i) EXPECT_DOUBLE_EQ(flex_lse[i], varlen_lse[i]);
}

}  // namespace
