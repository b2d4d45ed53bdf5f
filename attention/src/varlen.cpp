// The varlen emulator (varlen.hpp): planning and validation, the forward, the
// hand-written backward, and coverage from the plan alone. Sources of each
// behaviour are cited in README.md; the names below follow FA2's
// (actual_seqlen_q/k, the grid of max_seqlen_*).
#include "seqpack/attention/varlen.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace seqpack::attention {

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

void check_cu(const char* name, const std::vector<std::int64_t>& cu, std::int64_t rows, const char* rows_name) {
  if (cu.empty()) fail(std::string(name) + " is empty (it needs segments + 1 entries)");
  if (cu.front() != 0) fail(std::string(name) + "[0] = " + std::to_string(cu.front()) + ", must be 0");
  for (std::size_t i = 1; i < cu.size(); ++i)
    if (cu[i] < cu[i - 1])
      fail(std::string(name) + " descends at entry " + std::to_string(i) + ": " + std::to_string(cu[i - 1]) + " then " +
           std::to_string(cu[i]));
  if (cu.back() > rows)
    fail(std::string(name) + " ends at " + std::to_string(cu.back()) + ", past " + rows_name + " = " +
         std::to_string(rows));
}

void check_shape(const char* name, const Tensor& t, std::int64_t rows, std::int64_t heads, std::int64_t dim) {
  if (t.rows != rows || t.heads != heads || t.dim != dim ||
      t.values.size() != static_cast<std::size_t>(rows * heads * dim))
    fail(std::string(name) + " has shape [" + std::to_string(t.rows) + ", " + std::to_string(t.heads) + ", " +
         std::to_string(t.dim) + "], expected [" + std::to_string(rows) + ", " + std::to_string(heads) + ", " +
         std::to_string(dim) + "]");
}

double dot(const double* a, const double* b, std::int64_t n) noexcept {
  double s = 0;
  for (std::int64_t d = 0; d < n; ++d) s += a[d] * b[d];
  return s;
}

// The rows of a segment of `len` rows that a grid sized from `max_len` reaches.
std::int64_t grid_rows(std::int64_t len, std::int64_t max_len, std::int64_t block) noexcept {
  if (block == 0) return len;  // FA3: blocks counted from cu_seqlens
  const std::int64_t blocks = max_len / block + (max_len % block != 0 ? 1 : 0);
  return std::min(len, blocks > len / block + 1 ? len : blocks * block);
}

}  // namespace

std::int64_t visible_keys(std::int64_t i, std::int64_t q_len, std::int64_t k_len, bool causal) noexcept {
  if (!causal) return k_len;
  // FA2 mask.h: columns at or past row + 1 + seqlen_k - seqlen_q are masked.
  const std::int64_t limit = i + 1 + k_len - q_len;
  return std::clamp<std::int64_t>(limit, 0, k_len);
}

VarlenPlan plan_varlen(std::int64_t rows_q, std::int64_t rows_k, std::int64_t heads, std::int64_t dim,
                       const VarlenArgs& args) {
  if (heads < 1) fail("heads = " + std::to_string(heads) + ", must be at least 1");
  if (dim < 1) fail("dim = " + std::to_string(dim) + ", must be at least 1");
  const auto& cq = args.cu_seqlens_q.values();
  const auto& ck = args.cu_seqlens_k.values();
  check_cu("cu_seqlens_q", cq, rows_q, "q rows");
  check_cu("cu_seqlens_k", ck, rows_k, "k rows");
  // flash_api.cpp mha_varlen_fwd: CHECK_SHAPE(cu_seqlens_k, batch_size + 1).
  if (cq.size() != ck.size())
    fail("cu_seqlens_k has " + std::to_string(ck.size() - 1) + " segments but cu_seqlens_q has " +
         std::to_string(cq.size() - 1));
  if (args.max_seqlen_q < 0) fail("max_seqlen_q = " + std::to_string(args.max_seqlen_q) + ", must be >= 0");
  if (args.max_seqlen_k < 0) fail("max_seqlen_k = " + std::to_string(args.max_seqlen_k) + ", must be >= 0");
  if (args.grid_block < 0) fail("grid_block = " + std::to_string(args.grid_block) + ", must be >= 0");
  VarlenPlan plan;
  plan.scale = args.softmax_scale ? *args.softmax_scale : 1.0 / std::sqrt(static_cast<double>(dim));
  if (!std::isfinite(plan.scale)) fail("softmax_scale is not finite");
  // mha_varlen_fwd turns causal off when max_seqlen_q == 1; mha_varlen_bwd does not.
  plan.causal_forward = args.causal && args.max_seqlen_q != 1;
  plan.causal_backward = args.causal;
  plan.zero_all_forward = args.max_seqlen_k == 0;
  plan.zero_all_backward = args.max_seqlen_q == 0;
  plan.segments.reserve(cq.size() - 1);
  for (std::size_t s = 0; s + 1 < cq.size(); ++s) {
    VarlenSegment seg;
    seg.q_begin = cq[s];
    seg.q_len = cq[s + 1] - cq[s];
    seg.k_begin = ck[s];
    seg.k_len = ck[s + 1] - ck[s];
    seg.q_grid = grid_rows(seg.q_len, args.max_seqlen_q, args.grid_block);
    seg.k_grid = grid_rows(seg.k_len, args.max_seqlen_k, args.grid_block);
    plan.segments.push_back(seg);
  }
  return plan;
}

VarlenPlan plan_varlen(const Tensor& q, const Tensor& k, const Tensor& v, const VarlenArgs& args) {
  check_shape("k", k, k.rows, q.heads, q.dim);
  check_shape("v", v, k.rows, q.heads, q.dim);
  check_shape("q", q, q.rows, q.heads, q.dim);
  return plan_varlen(q.rows, k.rows, q.heads, q.dim, args);
}

void varlen_forward(const Tensor& q, const Tensor& k, const Tensor& v, const VarlenArgs& args, Tensor& out,
                    std::vector<double>& lse) {
  const VarlenPlan plan = plan_varlen(q, k, v, args);
  check_shape("out", out, q.rows, q.heads, q.dim);
  if (lse.size() != static_cast<std::size_t>(q.heads * q.rows))
    fail("lse has " + std::to_string(lse.size()) +
         " entries, expected heads * rows_q = " + std::to_string(q.heads * q.rows));
  const double inf = std::numeric_limits<double>::infinity();
  const double empty_lse = args.minus_inf_empty_lse ? -inf : inf;
  const std::int64_t H = q.heads, D = q.dim;
  if (plan.zero_all_forward) {  // the kernel is skipped: every row zeroed, LSE +inf
    std::fill(out.values.begin(), out.values.end(), 0.0);
    std::fill(lse.begin(), lse.end(), inf);
    return;
  }
  std::vector<double> w;
  for (const VarlenSegment& seg : plan.segments) {
    w.resize(static_cast<std::size_t>(seg.k_len));
    for (std::int64_t h = 0; h < H; ++h) {
      for (std::int64_t i = 0; i < seg.q_grid; ++i) {
        const std::int64_t r = seg.q_begin + i;
        double* o = out.at(r, h);
        double& l = lse[static_cast<std::size_t>(h * q.rows + r)];
        const std::int64_t n = visible_keys(i, seg.q_len, seg.k_len, plan.causal_forward);
        if (n == 0) {  // an empty softmax: output 0, LSE +inf (FA2) or -inf (FA3)
          std::fill(o, o + D, 0.0);
          l = empty_lse;
          continue;
        }
        double m = -inf;
        for (std::int64_t c = 0; c < n; ++c) {
          w[c] = plan.scale * dot(q.at(r, h), k.at(seg.k_begin + c, h), D);
          m = std::max(m, w[c]);
        }
        double sum = 0;
        for (std::int64_t c = 0; c < n; ++c) {
          w[c] = std::exp(w[c] - m);
          sum += w[c];
        }
        std::fill(o, o + D, 0.0);
        for (std::int64_t c = 0; c < n; ++c) {
          const double p = w[c] / sum;
          const double* vc = v.at(seg.k_begin + c, h);
          for (std::int64_t d = 0; d < D; ++d) o[d] += p * vc[d];
        }
        l = m + std::log(sum);
      }
    }
  }
}

void varlen_backward(const Tensor& dout, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                     const std::vector<double>& lse, const VarlenArgs& args, Tensor& dq, Tensor& dk, Tensor& dv) {
  const VarlenPlan plan = plan_varlen(q, k, v, args);
  check_shape("dout", dout, q.rows, q.heads, q.dim);
  check_shape("out", out, q.rows, q.heads, q.dim);
  check_shape("dq", dq, q.rows, q.heads, q.dim);
  check_shape("dk", dk, k.rows, q.heads, q.dim);
  check_shape("dv", dv, k.rows, q.heads, q.dim);
  if (lse.size() != static_cast<std::size_t>(q.heads * q.rows))
    fail("lse has " + std::to_string(lse.size()) +
         " entries, expected heads * rows_q = " + std::to_string(q.heads * q.rows));
  const std::int64_t H = q.heads, D = q.dim;
  if (plan.zero_all_backward) {  // mha_varlen_bwd skips the kernel: dk, dv zeroed, dq as it was
    std::fill(dk.values.begin(), dk.values.end(), 0.0);
    std::fill(dv.values.begin(), dv.values.end(), 0.0);
    return;
  }
  std::vector<double> acc_k, acc_v, dqi(static_cast<std::size_t>(D));
  for (const VarlenSegment& seg : plan.segments) {
    // Queries past the grid have no D (softmax_d) and no LSE: the key blocks
    // read uninitialised values for them, so dk/dv of this segment are unspecified.
    const bool keys_unspecified = seg.q_grid < seg.q_len;
    for (std::int64_t h = 0; h < H; ++h) {
      acc_k.assign(static_cast<std::size_t>(seg.k_grid * D), 0.0);
      acc_v.assign(static_cast<std::size_t>(seg.k_grid * D), 0.0);
      for (std::int64_t i = 0; i < seg.q_grid; ++i) {
        const std::int64_t r = seg.q_begin + i;
        const double* qi = q.at(r, h);
        const double* gi = dout.at(r, h);
        const double l = lse[static_cast<std::size_t>(h * q.rows + r)];
        const double Di = dot(gi, out.at(r, h), D);
        // Only the key blocks of the backward grid (max_seqlen_k) add into dq.
        const std::int64_t n = std::min(visible_keys(i, seg.q_len, seg.k_len, plan.causal_backward), seg.k_grid);
        std::fill(dqi.begin(), dqi.end(), 0.0);
        for (std::int64_t c = 0; c < n; ++c) {
          const double* kc = k.at(seg.k_begin + c, h);
          const double p = std::exp(plan.scale * dot(qi, kc, D) - l);
          const double dp = dot(gi, v.at(seg.k_begin + c, h), D);
          const double ds = p * (dp - Di);
          for (std::int64_t d = 0; d < D; ++d) {
            dqi[d] += ds * kc[d];
            acc_k[c * D + d] += ds * qi[d];
            acc_v[c * D + d] += p * gi[d];
          }
        }
        double* out_dq = dq.at(r, h);
        for (std::int64_t d = 0; d < D; ++d) out_dq[d] = plan.scale * dqi[d];
      }
      for (std::int64_t c = 0; c < seg.k_grid; ++c) {
        double* out_dk = dk.at(seg.k_begin + c, h);
        double* out_dv = dv.at(seg.k_begin + c, h);
        for (std::int64_t d = 0; d < D; ++d) {
          out_dk[d] = keys_unspecified ? unspecified_nan() : plan.scale * acc_k[c * D + d];
          out_dv[d] = keys_unspecified ? unspecified_nan() : acc_v[c * D + d];
        }
      }
    }
  }
}

VarlenCoverage varlen_coverage(const VarlenPlan& plan, std::int64_t rows_q, std::int64_t rows_k) {
  VarlenCoverage cov;
  cov.out.assign(static_cast<std::size_t>(rows_q), plan.zero_all_forward);
  cov.dq.assign(static_cast<std::size_t>(rows_q), false);
  cov.dkv.assign(static_cast<std::size_t>(rows_k), plan.zero_all_backward);
  for (const VarlenSegment& seg : plan.segments) {
    for (std::int64_t i = 0; i < seg.q_grid; ++i) {
      if (!plan.zero_all_forward) cov.out[seg.q_begin + i] = true;
      if (!plan.zero_all_backward) cov.dq[seg.q_begin + i] = true;
    }
    if (!plan.zero_all_backward && seg.q_grid == seg.q_len)
      for (std::int64_t c = 0; c < seg.k_grid; ++c) cov.dkv[seg.k_begin + c] = true;
  }
  return cov;
}

}  // namespace seqpack::attention
