// The varlen emulator's contract (attention/README.md): rows it must leave
// alone keep their bytes, rows past max_seqlen_* are not written, the empty
// key range and the no-key call give zeros, causal is bottom-right aligned,
// and bad arguments are refused by name. The backward's values: gradient_test.cpp.
#include "seqpack/attention/varlen.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace {

namespace att = seqpack::attention;

att::Tensor filled(std::int64_t rows, std::int64_t heads, std::int64_t dim, std::uint64_t seed) {
  att::Tensor t(rows, heads, dim);
  att::fill_hashed(t, seed);
  return t;
}

// A NaN with a distinct payload per element, so that a copy or a rewrite shows.
double tagged_nan(std::size_t i) {
  const std::uint64_t bits = 0x7ff8000000100000ull + i;
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

void tag(att::Tensor& t) {
  for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = tagged_nan(i);
}

bool row_is_tagged(const att::Tensor& t, std::int64_t r) {
  for (std::int64_t e = 0; e < t.row_size(); ++e)
    if (!att::same_bits(t.row(r)[e], tagged_nan(static_cast<std::size_t>(r * t.row_size() + e)))) return false;
  return true;
}

bool row_is_finite(const att::Tensor& t, std::int64_t r) {
  for (std::int64_t e = 0; e < t.row_size(); ++e)
    if (!std::isfinite(t.row(r)[e])) return false;
  return true;
}

struct Call {
  att::Tensor q, k, v, out, dq, dk, dv, dout;
  std::vector<double> lse;
  Call(std::int64_t rows_q, std::int64_t rows_k, std::int64_t heads = 1, std::int64_t dim = 2)
      : q(filled(rows_q, heads, dim, 1)),
        k(filled(rows_k, heads, dim, 2)),
        v(filled(rows_k, heads, dim, 3)),
        out(rows_q, heads, dim),
        dq(rows_q, heads, dim),
        dk(rows_k, heads, dim),
        dv(rows_k, heads, dim),
        dout(filled(rows_q, heads, dim, 4)),
        lse(static_cast<std::size_t>(rows_q * heads)) {
    tag(out);
    tag(dq);
    tag(dk);
    tag(dv);
    for (std::size_t i = 0; i < lse.size(); ++i) lse[i] = tagged_nan(i);
  }
  void run(const att::VarlenArgs& args) {
    att::varlen_forward(q, k, v, args, out, lse);
    att::varlen_backward(dout, q, k, v, out, lse, args, dq, dk, dv);
  }
};

TEST(Varlen, RowsOutsideEverySegmentKeepTheirBytesForwardAndBackward) {
  // 6 query rows and 7 keys; the segments end at 4 and 5 (legal: trailing rows unwritten).
  Call c(6, 7);
  att::VarlenArgs args{{0, 2, 4}, {0, 3, 5}, 2, 3, false, std::nullopt};
  c.run(args);
  for (std::int64_t r = 0; r < 4; ++r) {
    EXPECT_TRUE(row_is_finite(c.out, r)) << r;
    EXPECT_TRUE(row_is_finite(c.dq, r)) << r;
  }
  for (std::int64_t r = 4; r < 6; ++r) {
    EXPECT_TRUE(row_is_tagged(c.out, r)) << r;
    EXPECT_TRUE(row_is_tagged(c.dq, r)) << r;
    EXPECT_TRUE(att::same_bits(c.lse[static_cast<std::size_t>(r)], tagged_nan(static_cast<std::size_t>(r))));
  }
  for (std::int64_t r = 0; r < 5; ++r) EXPECT_TRUE(row_is_finite(c.dk, r) && row_is_finite(c.dv, r)) << r;
  for (std::int64_t r = 5; r < 7; ++r) EXPECT_TRUE(row_is_tagged(c.dk, r) && row_is_tagged(c.dv, r)) << r;
}

TEST(Varlen, QueryRowsPastMaxSeqlenQAreNotWrittenAndTheirKeysAreUnspecified) {
  Call c(5, 5);
  att::VarlenArgs args{{0, 5}, {0, 5}, 3, 5, false, std::nullopt};  // segment of 5, max 3
  c.run(args);
  for (std::int64_t r = 0; r < 3; ++r) EXPECT_TRUE(row_is_finite(c.out, r) && row_is_finite(c.dq, r)) << r;
  for (std::int64_t r = 3; r < 5; ++r) EXPECT_TRUE(row_is_tagged(c.out, r) && row_is_tagged(c.dq, r)) << r;
  // The key blocks read D and LSE of rows 3-4, which nothing computed.
  for (std::int64_t r = 0; r < 5; ++r) EXPECT_TRUE(att::same_bits(c.dk.row(r)[0], att::unspecified_nan())) << r;
}

TEST(Varlen, KeyRowsPastMaxSeqlenKGetNoGradientWhileTheForwardReadsThem) {
  Call full(4, 5), short_k(4, 5);
  full.run({{0, 4}, {0, 5}, 4, 5, false, std::nullopt});
  short_k.run({{0, 4}, {0, 5}, 4, 3, false, std::nullopt});
  for (std::int64_t r = 0; r < 4; ++r) EXPECT_TRUE(std::memcmp(full.out.row(r), short_k.out.row(r), 16) == 0) << r;
  for (std::int64_t r = 0; r < 3; ++r) EXPECT_TRUE(row_is_finite(short_k.dk, r)) << r;
  for (std::int64_t r = 3; r < 5; ++r) EXPECT_TRUE(row_is_tagged(short_k.dk, r) && row_is_tagged(short_k.dv, r)) << r;
  // dq misses the keys past the grid, so it is finite but not the true gradient.
  EXPECT_TRUE(row_is_finite(short_k.dq, 0));
  EXPECT_NE(full.dq.row(0)[0], short_k.dq.row(0)[0]);
}

TEST(Varlen, EmptyKeyRangeGivesZeroOutputInfiniteLseAndZeroGradient) {
  Call c(4, 3);
  c.run({{0, 2, 4}, {0, 0, 3}, 2, 3, false, std::nullopt});  // segment 0: 2 queries, no key
  for (std::int64_t r = 0; r < 2; ++r) {
    EXPECT_EQ(c.out.row(r)[0], 0.0);
    EXPECT_EQ(c.out.row(r)[1], 0.0);
    EXPECT_EQ(c.lse[static_cast<std::size_t>(r)], std::numeric_limits<double>::infinity());
    EXPECT_EQ(c.dq.row(r)[0], 0.0);
  }
  EXPECT_TRUE(row_is_finite(c.out, 2));
}

TEST(Varlen, MaxSeqlenKZeroZeroesEveryOutputRowEvenOutsideTheSegments) {
  Call c(4, 3);
  c.run({{0, 2}, {0, 3}, 2, 0, false, std::nullopt});
  for (std::int64_t r = 0; r < 4; ++r) EXPECT_EQ(c.out.row(r)[1], 0.0) << r;
}

TEST(Varlen, KeysThatNoQueryReachesGetExplicitZeros) {
  Call c(2, 5);
  c.run({{0, 0, 2}, {0, 3, 5}, 2, 3, false, std::nullopt});  // segment 0: no query, 3 keys
  for (std::int64_t r = 0; r < 3; ++r) {
    EXPECT_TRUE(att::same_bits(c.dk.row(r)[0], 0.0)) << r;
    EXPECT_TRUE(att::same_bits(c.dv.row(r)[1], 0.0)) << r;
  }
}

TEST(Varlen, CausalMaskIsAlignedBottomRight) {
  EXPECT_EQ(att::visible_keys(0, 2, 4, true), 3);  // row 0 of 2 against 4 keys sees 0..2
  EXPECT_EQ(att::visible_keys(1, 2, 4, true), 4);
  EXPECT_EQ(att::visible_keys(0, 4, 2, true), 0);  // more queries than keys: the first rows see none
  EXPECT_EQ(att::visible_keys(2, 4, 2, true), 1);
  EXPECT_EQ(att::visible_keys(0, 4, 2, false), 2);
  // Numerically: row 0 of a causal 2x4 segment equals a non-causal call over the first 3 keys.
  Call causal(2, 4), prefix(2, 4);
  causal.run({{0, 2}, {0, 4}, 2, 4, true, std::nullopt});
  prefix.run({{0, 1}, {0, 3}, 1, 3, false, std::nullopt});
  EXPECT_TRUE(std::memcmp(causal.out.row(0), prefix.out.row(0), 16) == 0);
}

TEST(Varlen, Int32AndInt64OffsetsGiveTheSameBytes) {
  Call a(5, 5), b(5, 5);
  a.run({std::vector<std::int32_t>{0, 2, 5}, std::vector<std::int32_t>{0, 2, 5}, 3, 3, true, std::nullopt});
  b.run({std::vector<std::int64_t>{0, 2, 5}, std::vector<std::int64_t>{0, 2, 5}, 3, 3, true, std::nullopt});
  EXPECT_TRUE(std::memcmp(a.out.values.data(), b.out.values.data(), a.out.values.size() * 8) == 0);
  EXPECT_TRUE(std::memcmp(a.dk.values.data(), b.dk.values.data(), a.dk.values.size() * 8) == 0);
}

void expect_refused(const att::VarlenArgs& args, const std::string& needle, std::int64_t rows_q = 4,
                    std::int64_t rows_k = 4) {
  Call c(rows_q, rows_k);
  try {
    att::varlen_forward(c.q, c.k, c.v, args, c.out, c.lse);
    ADD_FAILURE() << "not refused; expected a message with '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Varlen, InvalidArgumentsAreRefusedNamingTheFieldAndValue) {
  expect_refused({{1, 4}, {0, 4}, 4, 4, false, std::nullopt}, "cu_seqlens_q[0] = 1");
  expect_refused({{0, 3, 2}, {0, 2, 4}, 4, 4, false, std::nullopt}, "cu_seqlens_q descends at entry 2");
  expect_refused({{0, 4}, {0, 5}, 4, 4, false, std::nullopt}, "cu_seqlens_k ends at 5, past k rows = 4");
  expect_refused({{0, 2, 4}, {0, 4}, 4, 4, false, std::nullopt}, "cu_seqlens_k has 1 segments but cu_seqlens_q has 2");
  expect_refused({{0, 4}, {0, 4}, -1, 4, false, std::nullopt}, "max_seqlen_q = -1");
  expect_refused({{}, {0, 4}, 4, 4, false, std::nullopt}, "cu_seqlens_q is empty");
  Call c(4, 4);
  att::Tensor wrong_v(3, 1, 2);
  EXPECT_THROW(att::varlen_forward(c.q, c.k, wrong_v, {{0, 4}, {0, 4}, 4, 4, false, std::nullopt}, c.out, c.lse),
               std::invalid_argument);
  EXPECT_THROW(att::Tensor(std::int64_t{1} << 40, 1, 4), std::invalid_argument);  // refused before allocating
}

TEST(Varlen, CoverageFromThePlanMatchesWhatTheKernelWrites) {
  Call c(7, 6);
  const att::VarlenArgs args{{0, 4, 6}, {0, 3, 6}, 3, 2, false, std::nullopt};
  c.run(args);
  const att::VarlenCoverage cov = att::varlen_coverage(att::plan_varlen(7, 6, 1, 2, args), 7, 6);
  for (std::int64_t r = 0; r < 7; ++r) {
    EXPECT_EQ(cov.out[static_cast<std::size_t>(r)], row_is_finite(c.out, r)) << r;
    EXPECT_EQ(cov.dq[static_cast<std::size_t>(r)], row_is_finite(c.dq, r)) << r;
  }
  for (std::int64_t r = 0; r < 6; ++r) EXPECT_EQ(cov.dkv[static_cast<std::size_t>(r)], row_is_finite(c.dk, r)) << r;
}

}  // namespace
