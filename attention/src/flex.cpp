// The FlexAttention-style route (flex.hpp): a dense loop over (q, kv) pairs
// that keeps the pairs mask_mod allows. Summation runs over allowed keys in
// ascending order, as varlen.cpp does, so that a padded and an unpadded run
// of the same real rows agree bit for bit.
#include "seqpack/attention/flex.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace seqpack::attention {

namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

void check_same(const char* name, const Tensor& t, std::int64_t rows, const Tensor& like) {
  if (t.rows != rows || t.heads != like.heads || t.dim != like.dim ||
      t.values.size() != static_cast<std::size_t>(rows * like.heads * like.dim))
    fail(std::string(name) + " has shape [" + std::to_string(t.rows) + ", " + std::to_string(t.heads) + ", " +
         std::to_string(t.dim) + "], expected [" + std::to_string(rows) + ", " + std::to_string(like.heads) + ", " +
         std::to_string(like.dim) + "]");
}

double dot(const double* a, const double* b, std::int64_t n) noexcept {
  double s = 0;
  for (std::int64_t d = 0; d < n; ++d) s += a[d] * b[d];
  return s;
}

double scale_of(std::optional<double> scale, std::int64_t dim) {
  const double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(dim));
  if (!std::isfinite(s)) fail("softmax_scale is not finite");
  return s;
}

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const MaskMod& mask) {
  if (q.heads < 1 || q.dim < 1) fail("q needs at least one head and one dim");
  check_same("q", q, q.rows, q);
  check_same("k", k, k.rows, q);
  check_same("v", v, k.rows, q);
  if (!mask) fail("mask_mod is empty");
}

}  // namespace

MaskMod sample_id_mask(std::vector<std::int64_t> q_ids, std::vector<std::int64_t> kv_ids, bool causal) {
  return [q = std::move(q_ids), kv = std::move(kv_ids), causal](std::int64_t r, std::int64_t c) {
    if (r < 0 || c < 0 || static_cast<std::size_t>(r) >= q.size() || static_cast<std::size_t>(c) >= kv.size())
      return false;  // FlexAttention masks keys past KV_LEN and never stores rows past Q_LEN
    return q[static_cast<std::size_t>(r)] == kv[static_cast<std::size_t>(c)] && (!causal || c <= r);
  };
}

BlockAlignment check_block_alignment(std::int64_t q_len, std::int64_t kv_len, std::int64_t block_size) {
  BlockAlignment result;
  if (block_size < 1) {
    result.aligned = false;
    result.message = "block size " + std::to_string(block_size) + " is below 1";
    return result;
  }
  if (q_len % block_size != 0 || kv_len % block_size != 0) {
    result.aligned = false;
    result.message = "q length " + std::to_string(q_len) + " and kv length " + std::to_string(kv_len) +
                     " are not both multiples of the block size " + std::to_string(block_size);
  }
  return result;
}

void flex_forward(const Tensor& q, const Tensor& k, const Tensor& v, const MaskMod& mask,
                  std::optional<double> softmax_scale, Tensor& out, std::vector<double>& lse) {
  check_inputs(q, k, v, mask);
  check_same("out", out, q.rows, q);
  if (lse.size() != static_cast<std::size_t>(q.heads * q.rows)) fail("lse must hold heads * q rows entries");
  const double scale = scale_of(softmax_scale, q.dim);
  const double inf = std::numeric_limits<double>::infinity();
  const std::int64_t D = q.dim;
  std::vector<std::int64_t> keys;
  std::vector<double> w;
  for (std::int64_t r = 0; r < q.rows; ++r) {
    keys.clear();
    for (std::int64_t c = 0; c < k.rows; ++c)
      if (mask(r, c)) keys.push_back(c);
    w.resize(keys.size());
    for (std::int64_t h = 0; h < q.heads; ++h) {
      double* o = out.at(r, h);
      std::fill(o, o + D, 0.0);
      double& l = lse[static_cast<std::size_t>(h * q.rows + r)];
      if (keys.empty()) {  // "handle fully masked out rows": output 0, LSE -inf
        l = -inf;
        continue;
      }
      double m = -inf;
      for (std::size_t j = 0; j < keys.size(); ++j) {
        w[j] = scale * dot(q.at(r, h), k.at(keys[j], h), D);
        m = std::max(m, w[j]);
      }
      double sum = 0;
      for (std::size_t j = 0; j < keys.size(); ++j) {
        w[j] = std::exp(w[j] - m);
        sum += w[j];
      }
      for (std::size_t j = 0; j < keys.size(); ++j) {
        const double p = w[j] / sum;
        const double* vc = v.at(keys[j], h);
        for (std::int64_t d = 0; d < D; ++d) o[d] += p * vc[d];
      }
      l = m + std::log(sum);
    }
  }
}

void flex_backward(const Tensor& dout, const Tensor& q, const Tensor& k, const Tensor& v, const MaskMod& mask,
                   std::optional<double> softmax_scale, const Tensor& out, const std::vector<double>& lse, Tensor& dq,
                   Tensor& dk, Tensor& dv) {
  check_inputs(q, k, v, mask);
  check_same("dout", dout, q.rows, q);
  check_same("out", out, q.rows, q);
  check_same("dq", dq, q.rows, q);
  check_same("dk", dk, k.rows, q);
  check_same("dv", dv, k.rows, q);
  if (lse.size() != static_cast<std::size_t>(q.heads * q.rows)) fail("lse must hold heads * q rows entries");
  const double scale = scale_of(softmax_scale, q.dim);
  const std::int64_t D = q.dim;
  std::fill(dq.values.begin(), dq.values.end(), 0.0);
  std::fill(dk.values.begin(), dk.values.end(), 0.0);
  std::fill(dv.values.begin(), dv.values.end(), 0.0);
  std::vector<std::int64_t> keys;
  for (std::int64_t r = 0; r < q.rows; ++r) {
    keys.clear();
    for (std::int64_t c = 0; c < k.rows; ++c)
      if (mask(r, c)) keys.push_back(c);
    for (std::int64_t h = 0; h < q.heads; ++h) {
      const double* qi = q.at(r, h);
      const double* gi = dout.at(r, h);
      const double l = lse[static_cast<std::size_t>(h * q.rows + r)];
      const double Di = dot(gi, out.at(r, h), D);
      double* dqi = dq.at(r, h);
      for (const std::int64_t c : keys) {
        const double* kc = k.at(c, h);
        const double p = std::exp(scale * dot(qi, kc, D) - l);
        const double ds = p * (dot(gi, v.at(c, h), D) - Di);
        double* dkc = dk.at(c, h);
        double* dvc = dv.at(c, h);
        for (std::int64_t d = 0; d < D; ++d) {
          dqi[d] += scale * ds * kc[d];
          dkc[d] += scale * ds * qi[d];
          dvc[d] += p * gi[d];
        }
      }
    }
  }
}

}  // namespace seqpack::attention
