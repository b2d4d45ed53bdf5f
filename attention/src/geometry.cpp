// A call's geometry (consumer_internal.hpp): the checks that refuse it before
// any kernel runs, then the segments as the kernel's grid runs them, and each
// row's state in the forward and the backward. The varlen rules are the
// emulator's (varlen.cpp, README.md's contract table), so that the two agree
// row for row (tests/attention/consumer_test.cpp checks it).
#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "consumer_internal.hpp"

namespace seqpack::attention::detail {

// Ids come from a port's answer and may be anything: runs are extended by
// difference (both sides non-negative), never by a sum that could overflow.
void push_id(Rle& rle, std::int64_t id) {
  if (!rle.empty()) {
    Run& last = rle.back();
    if (id < 0 && last.first < 0) {
      ++last.count;
      return;
    }
    if (id >= 0 && last.first >= 0 && id - last.first == last.count) {
      ++last.count;
      return;
    }
  }
  rle.push_back({id < 0 ? -1 : id, 1});
}

void push_run(Rle& rle, const Run& run) {
  if (run.count <= 0) return;
  if (!rle.empty()) {
    Run& last = rle.back();
    if ((run.first < 0 && last.first < 0) ||
        (run.first >= 0 && last.first >= 0 && run.first - last.first == last.count)) {
      last.count += run.count;
      return;
    }
  }
  rle.push_back(run);
}

Rle real_only(const Rle& rle) {
  Rle out;
  for (const Run& r : rle)
    if (r.first >= 0) push_run(out, r);
  return out;
}

Rle slice(const Rle& rle, std::int64_t begin, std::int64_t n) {
  Rle out;
  std::int64_t at = 0;
  for (const Run& r : rle) {
    if (n <= 0) break;
    const std::int64_t end = at + r.count;
    if (end > begin) {
      const std::int64_t skip = std::max<std::int64_t>(0, begin - at);
      const std::int64_t take = std::min(r.count - skip, n);
      push_run(out, {r.first < 0 ? -1 : r.first + skip, take});
      n -= take;
      begin = end;
    }
    at = end;
  }
  return out;
}

std::int64_t length(const Rle& rle) noexcept {
  std::int64_t n = 0;
  for (const Run& r : rle) n += r.count;
  return n;
}

std::string rows_text(const std::vector<std::int64_t>& rows) {
  std::string s;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j + 1 < rows.size() && rows[j + 1] == rows[j] + 1) ++j;
    if (++shown > 4) {
      s += ", ...";
      break;
    }
    if (!s.empty()) s += ", ";
    s += std::to_string(rows[i]);
    if (j > i) s += "\u2013" + std::to_string(rows[j]);
    i = j + 1;
  }
  return s;
}

const char* call_phrase(const Call& c) {
  if (c.route == Route::natten) return "the NATTEN GEN self-attention";
  if (c.id == "causal") return "the causal pass";
  if (c.id == "gen_dense") return "the dense GEN pass";
  if (c.id == "full_sa") return "the GEN self-attention";
  if (c.id == "full_ca") return "the gen->und cross-attention";
  if (c.id == "flex_gen") return "the FlexAttention GEN pass";
  return "a call";
}

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

// cosmos attention/checks.py varlen_tensor_checks (239-395), in its order; the
// dtype check (366-370) is the branch's (consumer.cpp).
bool frontend_refuses(const Call& c, Geometry& g) {
  const std::int64_t mq = c.args.max_seqlen_q, mk = c.args.max_seqlen_k;
  const auto tq = static_cast<std::int64_t>(c.q_rows.size()), tk = static_cast<std::int64_t>(c.kv_rows.size());
  const auto& cq = c.args.cu_seqlens_q.values();
  const auto& ck = c.args.cu_seqlens_k.values();
  const auto refuse = [&](std::string why, const char* cite) {
    g.refusal = std::move(why);
    g.cite = cite;
    return true;
  };
  if (mq < 0 || mk < 0)
    return refuse(c.max_q_field + " = " + num(mq) + ", " + c.max_k_field + " = " + num(mk) + ": a maximum is negative",
                  "attention/checks.py:261-264");
  if ((mq == 0) != (mk == 0))
    return refuse(c.max_q_field + " = " + num(mq) + " and " + c.max_k_field + " = " + num(mk) +
                      ": one maximum is 0 and the other is not",
                  "attention/checks.py:266-270");
  if (mq > 0 || mk > 0) {
    if (mq > tq)
      return refuse(c.max_q_field + " = " + num(mq) + " exceeds the " + num(tq) + " query rows",
                    "attention/checks.py:342-345");
    if (mk > tk)
      return refuse(c.max_k_field + " = " + num(mk) + " exceeds the " + num(tk) + " key rows",
                    "attention/checks.py:347-350");
  }
  if (cq.size() != ck.size())
    return refuse(c.cu_q_field + " has " + num(static_cast<std::int64_t>(cq.size())) + " entries and " + c.cu_k_field +
                      " " + num(static_cast<std::int64_t>(ck.size())),
                  "attention/checks.py:378-382");
  if (cq.size() < 2)
    return refuse(
        c.cu_q_field + " has " + num(static_cast<std::int64_t>(cq.size())) + " entries: a varlen call needs at least 2",
        "attention/checks.py:384-388");
  if (mq == 0 && mk == 0)
    return refuse("both maxima are 0: an empty batch, which the flash3 wrapper does not support",
                  "attention/flash3/functions.py:134-137");
  return false;
}

void index_rows(Geometry& g) {
  for (std::size_t s = 0; s < g.segments.size(); ++s) {
    const Segment& seg = g.segments[s];
    for (std::size_t i = 0; i < seg.q.size(); ++i) {
      g.q_seg[static_cast<std::size_t>(seg.q[i])] = static_cast<std::int32_t>(s);
      g.q_local[static_cast<std::size_t>(seg.q[i])] = static_cast<std::int64_t>(i);
    }
    for (std::size_t i = 0; i < seg.k.size(); ++i) {
      g.k_seg[static_cast<std::size_t>(seg.k[i])] = static_cast<std::int32_t>(s);
      g.k_local[static_cast<std::size_t>(seg.k[i])] = static_cast<std::int64_t>(i);
    }
  }
}

void plan_varlen_call(const Call& c, Kernel kernel, Geometry& g) {
  if (c.frontend_checks && frontend_refuses(c, g)) return;
  const auto nq = static_cast<std::int64_t>(c.q_rows.size()), nk = static_cast<std::int64_t>(c.kv_rows.size());
  const auto& cq = c.args.cu_seqlens_q.values();
  if (kernel == Kernel::fa2 && c.route == Route::varlen) {
    // flash_api.cpp ~633: TORCH_CHECK(batch_size > 0); a grid of 0 blocks in
    // one dimension cannot launch (VARLEN.md point 9).
    if (cq.size() == 1) {
      g.refusal = c.cu_q_field + " has a single entry: FlashAttention 2 refuses an empty batch";
      g.cite = "flash_api.cpp ~633 (batch size must be positive)";
      return;
    }
    if ((c.args.max_seqlen_q == 0) != (c.args.max_seqlen_k == 0)) {
      g.refusal = c.max_q_field + " = " + num(c.args.max_seqlen_q) + " and " + c.max_k_field + " = " +
                  num(c.args.max_seqlen_k) + ": a grid of 0 blocks in one dimension does not launch";
      g.cite = "flash_fwd_launch_template.h ~63, flash_bwd_launch_template.h ~76-82";
      return;
    }
  }
  VarlenPlan plan;
  try {
    plan = plan_varlen(nq, nk, 1, 1, c.args);
  } catch (const std::invalid_argument& e) {
    g.refusal = e.what();
    g.cite = c.route == Route::natten ? "NATTEN's varlen metadata" : "flash_api.cpp mha_varlen_fwd (CHECK_SHAPE)";
    return;
  }
  const bool fa2 = kernel == Kernel::fa2 && c.route == Route::varlen;
  g.zero_init = c.route == Route::natten;
  g.zero_all_forward = fa2 && plan.zero_all_forward;
  g.zero_all_backward = fa2 && plan.zero_all_backward;
  g.segments.reserve(plan.segments.size());
  for (const VarlenSegment& v : plan.segments) {
    Segment s;
    s.q.resize(static_cast<std::size_t>(v.q_len));
    s.k.resize(static_cast<std::size_t>(v.k_len));
    for (std::int64_t i = 0; i < v.q_len; ++i) s.q[static_cast<std::size_t>(i)] = v.q_begin + i;
    for (std::int64_t i = 0; i < v.k_len; ++i) s.k[static_cast<std::size_t>(i)] = v.k_begin + i;
    s.causal_fwd = plan.causal_forward;
    s.causal_bwd = plan.causal_backward;
    s.q_fwd = s.q_bwd = v.q_grid;
    s.k_bwd = v.k_grid;
    s.k_garbage = v.q_grid < v.q_len;
    g.segments.push_back(std::move(s));
  }
}

void plan_flex_call(const Call& c, Geometry& g) {
  const auto nq = static_cast<std::int64_t>(c.q_rows.size()), nk = static_cast<std::int64_t>(c.kv_rows.size());
  if (c.q_block > 0 && nq % c.q_block != 0) {
    g.refusal = "the full stream's " + num(nq) + " rows are not a multiple of the mask's block " + num(c.q_block) +
                " (full_seq_alignment)";
    g.cite = "flex_attention.py:1178 (_check_block_aligned)";
    return;
  }
  if (c.kv_block > 0 && (nk - nq) % c.kv_block != 0) {
    g.refusal = "the causal stream's " + num(nk - nq) + " rows are not a multiple of the mask's block " +
                num(c.kv_block) + " (causal_seq_alignment)";
    g.cite = "flex_attention.py:1179 (_check_block_aligned)";
    return;
  }
  std::map<std::int64_t, std::size_t> group;
  const auto seg_of = [&](std::int64_t id) {
    const auto [it, added] = group.emplace(id, g.segments.size());
    if (added) g.segments.emplace_back();
    return it->second;
  };
  for (std::int64_t i = 0; i < nq; ++i) g.segments[seg_of(c.q_ids[static_cast<std::size_t>(i)])].q.push_back(i);
  for (std::int64_t i = 0; i < nk; ++i) g.segments[seg_of(c.kv_ids[static_cast<std::size_t>(i)])].k.push_back(i);
  // FlexAttention writes every row: a fully masked row gets 0 (VARLEN.md point 7).
  for (Segment& s : g.segments) {
    s.q_fwd = s.q_bwd = static_cast<std::int64_t>(s.q.size());
    s.k_bwd = static_cast<std::int64_t>(s.k.size());
  }
}

}  // namespace

Geometry plan_call(const Call& call, Kernel kernel) {
  Geometry g;
  g.q_seg.assign(call.q_rows.size(), -1);
  g.q_local.assign(call.q_rows.size(), 0);
  g.k_seg.assign(call.kv_rows.size(), -1);
  g.k_local.assign(call.kv_rows.size(), 0);
  if (call.route == Route::flex)
    plan_flex_call(call, g);
  else
    plan_varlen_call(call, kernel, g);
  if (!g.refusal.empty()) {
    g.segments.clear();
    return g;
  }
  for (Segment& s : g.segments) {
    for (const std::int64_t k : s.k) push_id(s.k_ids, call.kv_rows[static_cast<std::size_t>(k)]);
    for (const std::int64_t q : s.q) push_id(s.q_ids, call.q_rows[static_cast<std::size_t>(q)]);
  }
  index_rows(g);
  return g;
}

QueryState query_state(const Geometry& g, std::int64_t row) noexcept {
  QueryState st;
  const std::int32_t s = g.q_seg[static_cast<std::size_t>(row)];
  const Segment* seg = s >= 0 ? &g.segments[static_cast<std::size_t>(s)] : nullptr;
  const std::int64_t local = g.q_local[static_cast<std::size_t>(row)];
  const auto q_len = seg ? static_cast<std::int64_t>(seg->q.size()) : 0;
  const auto k_len = seg ? static_cast<std::int64_t>(seg->k.size()) : 0;
  if (g.zero_all_forward) {
    st.out = Out::zero;
  } else if (seg && local < seg->q_fwd) {
    st.n = visible_keys(local, q_len, k_len, seg->causal_fwd);
    st.out = st.n == 0 ? Out::empty : Out::computed;
  } else if (g.zero_init) {
    st.out = Out::zero_filled;
  }
  if (!g.zero_all_backward && seg && local < seg->q_bwd) {
    st.dq_written = true;
    st.n_bwd = std::min(visible_keys(local, q_len, k_len, seg->causal_bwd), seg->k_bwd);
  } else if (g.zero_init) {
    st.dq_written = true;  // zero
  }
  return st;
}

KeyState key_state(const Geometry& g, std::int64_t row) noexcept {
  KeyState st;
  if (g.zero_all_backward) {
    st.grad = KeyGrad::zero;
    return st;
  }
  const std::int32_t s = g.k_seg[static_cast<std::size_t>(row)];
  if (g.zero_init) st.grad = KeyGrad::zero;
  if (s < 0) return st;
  const Segment& seg = g.segments[static_cast<std::size_t>(s)];
  const std::int64_t local = g.k_local[static_cast<std::size_t>(row)];
  if (local >= seg.k_bwd) return st;
  if (seg.k_garbage) {
    st.grad = KeyGrad::garbage;
    return st;
  }
  const auto q_len = static_cast<std::int64_t>(seg.q.size()), k_len = static_cast<std::int64_t>(seg.k.size());
  // Query i sees key c iff c < visible_keys(i): for the bottom-right causal
  // mask, iff i >= c - k_len + q_len.
  st.first_q = seg.causal_bwd ? std::max<std::int64_t>(0, local - k_len + q_len) : 0;
  st.last_q = seg.q_bwd;
  st.grad = st.first_q < st.last_q ? KeyGrad::computed : KeyGrad::zero;
  return st;
}

}  // namespace seqpack::attention::detail
