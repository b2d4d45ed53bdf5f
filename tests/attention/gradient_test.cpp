// The hand-written backwards against central finite differences: varlen
// (causal and not, unequal q/k lengths, several segments, rows with no key)
// and flex; and a planted wrong sign that the checker must reject.
#include <gtest/gtest.h>

#include "seqpack/attention/flex.hpp"
#include "seqpack/attention/gradient_check.hpp"
#include "seqpack/attention/varlen.hpp"

namespace {

namespace att = seqpack::attention;

att::Tensor filled(std::int64_t rows, std::int64_t heads, std::int64_t dim, std::uint64_t seed) {
  att::Tensor t(rows, heads, dim);
  att::fill_hashed(t, seed);
  return t;
}

// Loss = sum(out * w) with a fixed w; its gradient is the backward with dout = w.
struct VarlenProblem {
  att::VarlenArgs args;
  std::int64_t rows_q, rows_k, heads, dim;
  att::Tensor w;
  VarlenProblem(att::VarlenArgs a, std::int64_t rq, std::int64_t rk, std::int64_t h = 1, std::int64_t d = 2)
      : args(std::move(a)), rows_q(rq), rows_k(rk), heads(h), dim(d), w(filled(rq, h, d, 99)) {}

  std::vector<att::Tensor> inputs() const {
    return {filled(rows_q, heads, dim, 1), filled(rows_k, heads, dim, 2), filled(rows_k, heads, dim, 3)};
  }
  att::LossFn loss() const {
    return [this](const std::vector<att::Tensor>& in) {
      att::Tensor out(rows_q, heads, dim);  // rows the kernel skips stay 0: a constant
      std::vector<double> lse(static_cast<std::size_t>(rows_q * heads));
      att::varlen_forward(in[0], in[1], in[2], args, out, lse);
      double s = 0;
      for (std::size_t i = 0; i < out.values.size(); ++i) s += out.values[i] * w.values[i];
      return s;
    };
  }
  att::GradientFn gradient() const {
    return [this](const std::vector<att::Tensor>& in) {
      att::Tensor out(rows_q, heads, dim), dq(rows_q, heads, dim), dk(rows_k, heads, dim), dv(rows_k, heads, dim);
      std::vector<double> lse(static_cast<std::size_t>(rows_q * heads));
      att::varlen_forward(in[0], in[1], in[2], args, out, lse);
      att::varlen_backward(w, in[0], in[1], in[2], out, lse, args, dq, dk, dv);
      return std::vector<att::Tensor>{dq, dk, dv};
    };
  }
};

void expect_gradient_ok(const VarlenProblem& p) {
  const att::GradientCheckResult r = att::check_gradient(p.loss(), p.gradient(), p.inputs(), 1e-6, 1e-6);
  EXPECT_TRUE(r.ok) << r.worst << " (max error " << r.max_error << ")";
  EXPECT_EQ(r.checked, (p.rows_q + 2 * p.rows_k) * p.heads * p.dim);
}

TEST(VarlenGradient, NonCausalSeveralSegmentsMatchFiniteDifferences) {
  expect_gradient_ok(VarlenProblem({{0, 3, 5, 9}, {0, 2, 6, 9}, 4, 4, false, std::nullopt}, 9, 9));
}

TEST(VarlenGradient, CausalSeveralSegmentsMatchFiniteDifferences) {
  expect_gradient_ok(VarlenProblem({{0, 3, 5, 9}, {0, 3, 5, 9}, 4, 4, true, std::nullopt}, 9, 9, 2, 3));
}

TEST(VarlenGradient, CausalUnequalQueryAndKeyLengthsMatchFiniteDifferences) {
  // Segment 0: 2 queries, 5 keys (bottom-right); segment 1: 4 queries, 2 keys,
  // so its first two rows see no key at all.
  expect_gradient_ok(VarlenProblem({{0, 2, 6}, {0, 5, 7}, 4, 5, true, 0.7}, 6, 7));
}

TEST(VarlenGradient, EmptyKeyRangeAndTrailingRowsMatchFiniteDifferences) {
  expect_gradient_ok(VarlenProblem({{0, 2, 4}, {0, 0, 3}, 2, 3, false, std::nullopt}, 6, 5));
}

TEST(VarlenGradient, CheckerRejectsABackwardWithAPlantedWrongSign) {
  const VarlenProblem p({{0, 3, 5}, {0, 2, 5}, 3, 3, true, std::nullopt}, 5, 5);
  const att::GradientFn right = p.gradient();
  const att::GradientFn wrong = [&](const std::vector<att::Tensor>& in) {
    std::vector<att::Tensor> g = right(in);
    for (double& x : g[1].values) x = -x;  // dk with the sign of dS flipped
    return g;
  };
  const att::GradientCheckResult bad = att::check_gradient(p.loss(), wrong, p.inputs());
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.worst.find("input 1"), std::string::npos) << bad.worst;
  EXPECT_TRUE(att::check_gradient(p.loss(), right, p.inputs()).ok);
}

TEST(FlexGradient, SampleMaskedCausalRouteMatchesFiniteDifferences) {
  // Row 5 belongs to no key's sample: fully masked.
  const std::vector<std::int64_t> ids = {0, 0, 1, 1, 1, 7};
  const std::vector<std::int64_t> kv_ids = {0, 0, 1, 1, 1, 2};
  const att::MaskMod mask = att::sample_id_mask(ids, kv_ids, true);
  const att::Tensor w = filled(6, 1, 2, 99);
  const att::LossFn loss = [&](const std::vector<att::Tensor>& in) {
    att::Tensor out(6, 1, 2);
    std::vector<double> lse(6);
    att::flex_forward(in[0], in[1], in[2], mask, std::nullopt, out, lse);
    double s = 0;
    for (std::size_t i = 0; i < out.values.size(); ++i) s += out.values[i] * w.values[i];
    return s;
  };
  const att::GradientFn grad = [&](const std::vector<att::Tensor>& in) {
    att::Tensor out(6, 1, 2), dq(6, 1, 2), dk(6, 1, 2), dv(6, 1, 2);
    std::vector<double> lse(6);
    att::flex_forward(in[0], in[1], in[2], mask, std::nullopt, out, lse);
    att::flex_backward(w, in[0], in[1], in[2], mask, std::nullopt, out, lse, dq, dk, dv);
    return std::vector<att::Tensor>{dq, dk, dv};
  };
  const att::GradientCheckResult r =
      att::check_gradient(loss, grad, {filled(6, 1, 2, 1), filled(6, 1, 2, 2), filled(6, 1, 2, 3)});
  EXPECT_TRUE(r.ok) << r.worst;
}

}  // namespace
