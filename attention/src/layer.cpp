// The layer model (consumer_internal.hpp, layer_findings): what rows that a
// kernel left unwritten hold, followed through the decoder layer the consumer
// runs around attention, as cosmos-framework's unified_mot.py does at 5eee9ed:
//   h -> RMSNorm -> q/k/v projections (bias when attention_bias) -> q/k norm
//     -> RoPE (cos/sin from from_all_seq: 0 on padding rows, or cos 1 and
//        sin 0 under CP, where padding rows get position 0) -> attention
//     -> o_proj -> residual r = h + o; MLP over RMSNorm(r) with its input
//        zeroed on rows the token mask calls padding (torch.where, so not
//        even NaN passes: unified_mot.py:1072, qwen3_vl_moe.py:593-601),
//        MLP(0) = 0 -> next layer's h = r + mlp.
//   The loss reads real rows only, so the gradient reaching padding rows from
//   above is exactly zero unless garbage puts something there.
// Each row's value is a class: zero (exactly 0), clean (right and finite),
// bad (finite garbage) or nan. The model runs twice: once with the unwritten
// memory holding finite garbage, once NaN. An exact zero times finite garbage
// is zero, times NaN is NaN; a softmax over poisoned scores is poisoned. A
// parameter gradient whose sum takes a bad term is hit silently; one hit only
// in the NaN run is loud. Layers repeat until the classes settle (they only
// grow), so "a middle layer" sees the worst of both directions.
#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <tuple>

#include "consumer_internal.hpp"

namespace seqpack::attention::detail {

namespace {

enum Cls : std::uint8_t { Z = 0, C = 1, B = 2, N = 3 };
using Col = std::vector<Cls>;

Cls max(Cls a, Cls b) { return a > b ? a : b; }
// A product: an exact zero cancels finite garbage but not NaN.
Cls mul(Cls a, Cls b) {
  if (a == Z) return b == N ? N : Z;
  if (b == Z) return a == N ? N : Z;
  return max(a, b);
}
// What of x spreads through a softmax or a norm: only garbage.
Cls poison(Cls x) { return x >= B ? x : Z; }
// RMSNorm's backward: dy = 0 gives 0 unless the input is NaN.
Cls norm_bwd(Cls dy, Cls x) { return dy == Z ? mul(Z, x) : max(dy, poison(x)); }

struct Config {
  bool bias = false;
  Cls unwritten = B;  // what an unwritten row holds in this run
};

// Everything one layer computes, per stream (0 causal, 1 full).
struct Forward {
  std::array<Col, 2> h, q, k, v, out, r;
  std::vector<Col> call_out;  // per call, per query row: its own output (before a merge)
  std::vector<Col> merged;    // per call: the output its backward reads (merged for merge calls)
};

struct Backward {
  std::array<Col, 2> g, dq, dk, dv, dy;
};

Cls lin(Cls x, bool bias) { return bias ? max(x, C) : x; }

struct Model {
  const Branch& b;
  const std::vector<Geometry>& geos;
  Kernel kernel;
  Config cfg;
  std::array<const RowIds*, 2> rows;
  std::array<std::int64_t, 2> rope_rows;
  std::vector<std::vector<QueryState>> qstate;  // per call, per query row (fixed by the geometry)
  std::vector<std::vector<KeyState>> kstate;    // per call, per key row

  void plan_states() {
    qstate.resize(b.calls.size());
    kstate.resize(b.calls.size());
    for (std::size_t ci = 0; ci < b.calls.size(); ++ci) {
      for (std::size_t i = 0; i < b.calls[ci].q_rows.size(); ++i)
        qstate[ci].push_back(query_state(geos[ci], static_cast<std::int64_t>(i)));
      for (std::size_t j = 0; j < b.calls[ci].kv_rows.size(); ++j)
        kstate[ci].push_back(key_state(geos[ci], static_cast<std::int64_t>(j)));
    }
  }

  bool padding(int s, std::size_t i) const { return (*rows[static_cast<std::size_t>(s)])[i] < 0; }
  bool rope_zero(int s, std::size_t i) const {
    return !b.rope_pads_identity && static_cast<std::int64_t>(i) >= rope_rows[static_cast<std::size_t>(s)];
  }
  const std::vector<bool>& mask(int s) const { return s == 0 ? b.causal_tokens.real : b.full_tokens.real; }

  Cls src_cls(const std::array<Col, 2>& c, const Source& src) const {
    if (src.stream < 0) return Z;  // a row the consumer made: zeros
    const Col& col = c[static_cast<std::size_t>(src.stream)];
    return src.row < static_cast<std::int64_t>(col.size()) ? col[static_cast<std::size_t>(src.row)] : Z;
  }

  // One call's forward: each query row's output class.
  Col call_forward(std::size_t ci, const Forward& f) const {
    const Call& c = b.calls[ci];
    const Geometry& g = geos[ci];
    const int qs = c.q_stream == StreamId::causal ? 0 : 1;
    Col out(c.q_rows.size(), Z);
    // Per segment, the classes of the first t keys: prefix maxima.
    std::vector<Col> pk(g.segments.size()), pv(g.segments.size());
    for (std::size_t s = 0; s < g.segments.size(); ++s) {
      const Segment& seg = g.segments[s];
      pk[s].assign(seg.k.size() + 1, Z);
      pv[s].assign(seg.k.size() + 1, Z);
      for (std::size_t t = 0; t < seg.k.size(); ++t) {
        const Source& src = c.kv_src[static_cast<std::size_t>(seg.k[t])];
        pk[s][t + 1] = max(pk[s][t], src_cls(f.k, src));
        pv[s][t + 1] = max(pv[s][t], src_cls(f.v, src));
      }
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      const QueryState& st = qstate[ci][i];
      if (st.out == Out::unwritten) {
        out[i] = cfg.unwritten;
      } else if (st.out == Out::computed) {
        const auto s = static_cast<std::size_t>(g.q_seg[i]);
        const auto n = static_cast<std::size_t>(st.n);
        out[i] = max(pv[s][n], poison(max(f.q[static_cast<std::size_t>(qs)][i], pk[s][n])));
      }
    }
    return out;
  }

  // The LSE merge of two calls over the same queries (NATTEN's
  // merge_attentions: o = o0 - sigmoid(l1 - l0) * (o0 - o1)).
  Col merge(std::size_t a, std::size_t c, const Col& oa, const Col& oc) const {
    Col out(oa.size(), Z);
    const auto lse = [&](const QueryState& st) {  // 0 finite, -1 -inf, +1 +inf
      if (st.out == Out::computed || st.out == Out::zero_filled) return 0;
      if (st.out == Out::zero) return 1;
      return kernel == Kernel::fa3 ? -1 : 1;
    };
    for (std::size_t i = 0; i < out.size(); ++i) {
      const QueryState& sa = qstate[a][i];
      const QueryState& sc = qstate[c][i];
      if (sa.out == Out::unwritten || sc.out == Out::unwritten) {
        out[i] = max(oa[i], oc[i]);
        continue;
      }
      const int la = lse(sa), lc = lse(sc);
      if (la != 0 && lc != 0)
        out[i] = N;  // sigmoid(inf - inf): NaN whatever the memory holds
      else if (la == 1)
        out[i] = mul(Z, oc[i]);  // o1 - o1
      else if (lc == 1)
        out[i] = mul(Z, oa[i]);
      else
        out[i] = max(oa[i], oc[i]);
    }
    return out;
  }

  Forward forward(const std::array<Col, 2>& h) const {
    Forward f;
    f.h = h;
    for (int s = 0; s < 2; ++s) {
      const auto us = static_cast<std::size_t>(s);
      const std::size_t n = h[us].size();
      f.q[us].assign(n, Z);
      f.k[us].assign(n, Z);
      f.v[us].assign(n, Z);
      for (std::size_t i = 0; i < n; ++i) {
        const Cls x = lin(h[us][i], cfg.bias);  // RMSNorm keeps a class; a bias makes 0 clean
        f.q[us][i] = rope_zero(s, i) ? mul(Z, x) : x;
        f.k[us][i] = f.q[us][i];
        f.v[us][i] = x;
      }
    }
    f.call_out.resize(b.calls.size());
    for (std::size_t ci = 0; ci < b.calls.size(); ++ci) f.call_out[ci] = call_forward(ci, f);
    f.merged = f.call_out;
    std::size_t first_merge = b.calls.size();
    for (std::size_t ci = 0; ci < b.calls.size(); ++ci) {
      if (!b.calls[ci].merge) continue;
      if (first_merge == b.calls.size()) {
        first_merge = ci;
      } else {
        const Col m = merge(first_merge, ci, f.call_out[first_merge], f.call_out[ci]);
        f.merged[first_merge] = f.merged[ci] = m;
      }
    }
    for (int s = 0; s < 2; ++s) f.out[static_cast<std::size_t>(s)].assign(h[static_cast<std::size_t>(s)].size(), Z);
    for (std::size_t ci = 0; ci < b.calls.size(); ++ci) {
      const auto qs = static_cast<std::size_t>(b.calls[ci].q_stream == StreamId::causal ? 0 : 1);
      Col& o = f.out[qs];
      for (std::size_t i = 0; i < o.size() && i < f.merged[ci].size(); ++i) o[i] = max(o[i], f.merged[ci][i]);
    }
    for (int s = 0; s < 2; ++s) {
      const auto us = static_cast<std::size_t>(s);
      f.r[us].resize(h[us].size());
      for (std::size_t i = 0; i < h[us].size(); ++i) f.r[us][i] = max(h[us][i], lin(f.out[us][i], cfg.bias));
    }
    return f;
  }

  // One call's backward: dq of its query rows, dk/dv of its key rows (sent to
  // their source rows; a made row's gradient is dropped).
  void call_backward(std::size_t ci, const Forward& f, const std::array<Col, 2>& dout, Backward& bw) const {
    const Call& c = b.calls[ci];
    const Geometry& g = geos[ci];
    const auto qs = static_cast<std::size_t>(c.q_stream == StreamId::causal ? 0 : 1);
    const Col& o = f.merged[ci];
    const auto term = [&](std::size_t i) { return mul(dout[qs][i], max(f.q[qs][i], o[i])); };
    for (std::size_t s = 0; s < g.segments.size(); ++s) {
      const Segment& seg = g.segments[s];
      // dq: the query's own term and the keys it sees.
      Cls kmax = Z;
      std::vector<Cls> pk(seg.k.size() + 1, Z);
      for (std::size_t t = 0; t < seg.k.size(); ++t) {
        const Source& src = c.kv_src[static_cast<std::size_t>(seg.k[t])];
        pk[t + 1] = max(pk[t], max(src_cls(f.k, src), src_cls(f.v, src)));
      }
      (void)kmax;
      for (const std::int64_t qi : seg.q) {
        const QueryState& st = qstate[ci][static_cast<std::size_t>(qi)];
        if (!st.dq_written) continue;
        const auto i = static_cast<std::size_t>(qi);
        bw.dq[qs][i] =
            max(bw.dq[qs][i], mul(dout[qs][i], max(max(f.q[qs][i], o[i]), pk[static_cast<std::size_t>(st.n_bwd)])));
      }
      // dk/dv: the queries that see a key are a suffix of the segment.
      std::vector<Cls> sterm(seg.q.size() + 1, Z), sdo(seg.q.size() + 1, Z);
      for (std::size_t t = seg.q.size(); t-- > 0;) {
        const auto i = static_cast<std::size_t>(seg.q[t]);
        sterm[t] = max(sterm[t + 1], term(i));
        sdo[t] = max(sdo[t + 1], dout[qs][i]);
      }
      for (const std::int64_t kj : seg.k) {
        const Source& src = c.kv_src[static_cast<std::size_t>(kj)];
        if (src.stream < 0) continue;
        const KeyState& ks = kstate[ci][static_cast<std::size_t>(kj)];
        Cls d = Z;
        if (ks.grad == KeyGrad::unwritten || ks.grad == KeyGrad::garbage) {
          d = cfg.unwritten;
        } else if (ks.grad == KeyGrad::computed) {
          const auto a = static_cast<std::size_t>(ks.first_q), e = static_cast<std::size_t>(ks.last_q);
          // Terms of queries [a, e): suffix maxima hold [a, end); e is the grid's end, past it none write.
          Cls t = Z, dmax = Z;
          if (e == seg.q.size()) {
            t = sterm[a];
            dmax = sdo[a];
          } else {
            for (std::size_t u = a; u < e; ++u) {
              t = max(t, term(static_cast<std::size_t>(seg.q[u])));
              dmax = max(dmax, dout[qs][static_cast<std::size_t>(seg.q[u])]);
            }
          }
          d = max(t, mul(dmax, max(src_cls(f.k, src), src_cls(f.v, src))));
        }
        const auto ss = static_cast<std::size_t>(src.stream);
        const auto row = static_cast<std::size_t>(src.row);
        bw.dk[ss][row] = max(bw.dk[ss][row], d);
        bw.dv[ss][row] = max(bw.dv[ss][row], d);
      }
    }
    // Keys outside every segment: the buffer's rows the kernel never writes.
    for (std::size_t kj = 0; kj < c.kv_rows.size(); ++kj) {
      const Source& src = c.kv_src[kj];
      if (src.stream < 0 || g.k_seg[kj] >= 0 || g.zero_all_backward || g.zero_init) continue;
      const auto ss = static_cast<std::size_t>(src.stream);
      const auto row = static_cast<std::size_t>(src.row);
      bw.dk[ss][row] = max(bw.dk[ss][row], cfg.unwritten);
      bw.dv[ss][row] = max(bw.dv[ss][row], cfg.unwritten);
    }
    // Queries outside every segment: dq never written.
    for (std::size_t i = 0; i < c.q_rows.size(); ++i)
      if (!qstate[ci][i].dq_written) bw.dq[qs][i] = max(bw.dq[qs][i], cfg.unwritten);
  }

  Backward backward(const Forward& f, const std::array<Col, 2>& g_above) const {
    Backward bw;
    for (int s = 0; s < 2; ++s) {
      const auto us = static_cast<std::size_t>(s);
      const std::size_t n = f.h[us].size();
      bw.g[us] = g_above[us];
      bw.dy[us] = g_above[us];  // residual: dr = g; the masked MLP adds nothing to padding rows
      bw.dq[us].assign(n, Z);
      bw.dk[us].assign(n, Z);
      bw.dv[us].assign(n, Z);
    }
    for (std::size_t ci = 0; ci < b.calls.size(); ++ci) call_backward(ci, f, bw.dy, bw);
    for (int s = 0; s < 2; ++s) {
      const auto us = static_cast<std::size_t>(s);
      for (std::size_t i = 0; i < f.h[us].size(); ++i) {
        const Cls x = lin(f.h[us][i], cfg.bias);
        const Cls dq = norm_bwd(rope_zero(s, i) ? mul(Z, bw.dq[us][i]) : bw.dq[us][i], x);
        const Cls dk = norm_bwd(rope_zero(s, i) ? mul(Z, bw.dk[us][i]) : bw.dk[us][i], x);
        const Cls dn = max(max(dq, dk), bw.dv[us][i]);
        bw.g[us][i] = max(bw.g[us][i], norm_bwd(dn, f.h[us][i]));
      }
    }
    return bw;
  }
};

// A parameter gradient's terms over rows, and where they go bad.
struct Term {
  std::string param, what;
  int order = 0;
  std::vector<std::int64_t> rows;  // stream rows whose term is bad (or nan)
  Cls worst = Z;
  int stream = 0;
};

// A parameter gradient of one tower: its name without the tower's suffix and
// the term of its sum over rows.
struct TermName {
  const char* param;
  const char* what;
  int order;  // how findings list them: the projections' weights first
};
constexpr TermName kOprojW{"o_proj.weight", "attention output x its gradient", 3};
constexpr TermName kOprojB{"o_proj.bias", "the output's gradient", 7};
constexpr TermName kQprojW{"q_proj.weight", "normed input x dq", 0};
constexpr TermName kKprojW{"k_proj.weight", "normed input x dk", 1};
constexpr TermName kVprojW{"v_proj.weight", "normed input x dv", 2};
constexpr TermName kQprojB{"q_proj.bias", "dq", 4};
constexpr TermName kKprojB{"k_proj.bias", "dk", 5};
constexpr TermName kVprojB{"v_proj.bias", "dv", 6};
constexpr TermName kQnorm{"q_norm.weight", "dq x q", 9};
constexpr TermName kKnorm{"k_norm.weight", "dk x k", 10};
constexpr TermName kInNorm{"input_layernorm.weight", "its input x its gradient", 11};
constexpr TermName kPostNorm{"post_attention_layernorm.weight", "its input x its gradient", 12};
constexpr TermName kMlp{"mlp weights", "the MLP's input x its gradient", 8};
constexpr TermName kFinalNorm{"norm.weight", "the last hidden state x 0", 13};

// "q_proj_moe_gen.weight" for the gen tower: the suffix goes after the module.
std::string pname(int s, const char* param) {
  std::string p(param);
  if (s != 1) return p;
  const auto at = p.find_first_of(". ");
  return p.substr(0, at) + "_moe_gen" + p.substr(at);
}

// The terms of one pair of states, by tower and parameter; named at the end.
struct Slots {
  std::map<const TermName*, Term> at[2];
};

void add_term(Slots& slots, int s, const TermName& name, std::size_t row, Cls c) {
  if (c < B) return;
  Term& t = slots.at[s][&name];
  t.what = name.what;
  t.order = name.order;
  t.stream = s;
  t.worst = max(t.worst, c);
  t.rows.push_back(static_cast<std::int64_t>(row));
}

std::map<std::string, Term> named(Slots& slots) {
  std::map<std::string, Term> out;
  for (int s = 0; s < 2; ++s)
    for (auto& [name, t] : slots.at[s]) {
      t.param = pname(s, name->param);
      out.emplace(t.param, std::move(t));
    }
  return out;
}

// Every parameter gradient's terms at one (forward, backward) pair of states.
std::map<std::string, Term> terms_of(const Model& m, const Forward& f, const Backward& bw) {
  Slots terms;
  for (int s = 0; s < 2; ++s) {
    const auto us = static_cast<std::size_t>(s);
    const auto& msk = m.mask(s);
    for (std::size_t i = 0; i < f.h[us].size(); ++i) {
      const bool real_row = i < msk.size() && msk[i];
      const Cls x = lin(f.h[us][i], m.cfg.bias);
      const Cls dq_r = m.rope_zero(s, i) ? mul(Z, bw.dq[us][i]) : bw.dq[us][i];
      const Cls dk_r = m.rope_zero(s, i) ? mul(Z, bw.dk[us][i]) : bw.dk[us][i];
      const Cls dqn = norm_bwd(dq_r, x), dkn = norm_bwd(dk_r, x);
      add_term(terms, s, kOprojW, i, mul(f.out[us][i], bw.dy[us][i]));
      if (m.cfg.bias) add_term(terms, s, kOprojB, i, bw.dy[us][i]);
      add_term(terms, s, kQprojW, i, mul(f.h[us][i], dqn));
      add_term(terms, s, kKprojW, i, mul(f.h[us][i], dkn));
      add_term(terms, s, kVprojW, i, mul(f.h[us][i], bw.dv[us][i]));
      if (m.cfg.bias) {
        add_term(terms, s, kQprojB, i, dqn);
        add_term(terms, s, kKprojB, i, dkn);
        add_term(terms, s, kVprojB, i, bw.dv[us][i]);
      }
      add_term(terms, s, kQnorm, i, mul(dq_r, x));
      add_term(terms, s, kKnorm, i, mul(dk_r, x));
      const Cls dn = max(max(dqn, dkn), bw.dv[us][i]);
      add_term(terms, s, kInNorm, i, mul(dn, f.h[us][i]));
      // The MLP's input is zeroed on masked rows (a select): its gradient there is 0.
      const Cls dln = real_row ? bw.dy[us][i] : Z;
      add_term(terms, s, kPostNorm, i, mul(dln, f.r[us][i]));
      if (real_row) add_term(terms, s, kMlp, i, mul(dln, f.r[us][i]));
    }
  }
  return named(terms);
}

// Real rows the garbage reaches, forward (their output or hidden state) and
// backward (their gradients).
struct Reach {
  std::vector<std::int64_t> fwd[2], bwd[2];
  Cls fwd_worst = Z, bwd_worst = Z;
};

Reach reach_of(const Model& m, const Forward& f, const Backward& bw) {
  Reach r;
  for (int s = 0; s < 2; ++s) {
    const auto us = static_cast<std::size_t>(s);
    for (std::size_t i = 0; i < f.h[us].size(); ++i) {
      if (m.padding(s, i)) continue;
      const Cls fw = max(f.out[us][i], f.r[us][i]);
      const Cls bk = max(max(bw.dq[us][i], bw.dk[us][i]), max(bw.dv[us][i], bw.g[us][i]));
      if (fw >= B) {
        r.fwd[us].push_back(static_cast<std::int64_t>(i));
        r.fwd_worst = max(r.fwd_worst, fw);
      }
      if (bk >= B) {
        r.bwd[us].push_back(static_cast<std::int64_t>(i));
        r.bwd_worst = max(r.bwd_worst, bk);
      }
    }
  }
  return r;
}

struct RunResult {
  std::map<std::string, Term> terms;        // at the worst layer
  std::map<std::string, Term> first_layer;  // in the first layer already
  Reach reach;
};

RunResult run(const Branch& b, const std::vector<Geometry>& geos, Kernel kernel, Config cfg) {
  Model m{b, geos, kernel, cfg, {&b.causal_rows, &b.full_rows}, {b.rope_causal_rows, b.rope_full_rows}, {}, {}};
  m.plan_states();
  std::array<Col, 2> h1;
  for (int s = 0; s < 2; ++s) {
    const RowIds& rows = *m.rows[static_cast<std::size_t>(s)];
    h1[static_cast<std::size_t>(s)].resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) h1[static_cast<std::size_t>(s)][i] = rows[i] >= 0 ? C : Z;
  }
  const Forward f1 = m.forward(h1);
  Forward fi = f1;
  for (int it = 0; it < 16; ++it) {  // the classes only grow: a few layers settle them
    const Forward next = m.forward(fi.r);
    if (next.h == fi.h) break;
    fi = next;
  }
  std::array<Col, 2> top;
  for (int s = 0; s < 2; ++s) {
    const RowIds& rows = *m.rows[static_cast<std::size_t>(s)];
    top[static_cast<std::size_t>(s)].resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) top[static_cast<std::size_t>(s)][i] = rows[i] >= 0 ? C : Z;
  }
  Backward bi = m.backward(fi, top);
  for (int it = 0; it < 16; ++it) {
    const Backward next = m.backward(fi, bi.g);
    if (next.g == bi.g) break;
    bi = next;
  }
  RunResult out;
  out.terms = terms_of(m, fi, bi);
  out.first_layer = terms_of(m, f1, m.backward(f1, bi.g));
  out.reach = reach_of(m, fi, bi);
  // The final norm: the loss's gradient is 0 on padding rows.
  Slots final_norm;
  for (int s = 0; s < 2; ++s) {
    const auto us = static_cast<std::size_t>(s);
    for (std::size_t i = 0; i < fi.r[us].size(); ++i)
      if (m.padding(s, i)) add_term(final_norm, s, kFinalNorm, i, mul(Z, fi.r[us][i]));
  }
  for (auto& [name, t] : named(final_norm)) out.terms.emplace(name, std::move(t));
  return out;
}

const char* stream_name(int s) { return s == 0 ? "causal" : "full"; }

}  // namespace

namespace {

// The padding rows the branch's calls leave unwritten, as one clause: "the
// dense GEN pass leaves full rows 1–255 (padding) unwritten (output, dq)".
std::string unwritten_sources(const Branch& b, const std::vector<Geometry>& geos) {
  std::string text;
  for (std::size_t ci = 0; ci < b.calls.size(); ++ci) {
    const Call& c = b.calls[ci];
    std::array<std::vector<std::int64_t>, 2> rows;  // per stream
    std::vector<std::string> buffers;
    const auto add_buffer = [&](const char* name) {
      if (std::find(buffers.begin(), buffers.end(), name) == buffers.end()) buffers.emplace_back(name);
    };
    const auto qs = static_cast<std::size_t>(c.q_stream == StreamId::causal ? 0 : 1);
    for (std::size_t i = 0; i < c.q_rows.size(); ++i) {
      if (c.q_rows[i] >= 0) continue;
      const QueryState st = query_state(geos[ci], static_cast<std::int64_t>(i));
      if (st.out == Out::unwritten) add_buffer("output");
      if (!st.dq_written) add_buffer("dq");
      if (st.out == Out::unwritten || !st.dq_written) rows[qs].push_back(static_cast<std::int64_t>(i));
    }
    for (std::size_t j = 0; j < c.kv_rows.size(); ++j) {
      const Source& src = c.kv_src[j];
      if (c.kv_rows[j] >= 0 || src.stream < 0) continue;
      const KeyGrad g = key_state(geos[ci], static_cast<std::int64_t>(j)).grad;
      if (g != KeyGrad::unwritten && g != KeyGrad::garbage) continue;
      add_buffer("dk/dv");
      rows[static_cast<std::size_t>(src.stream)].push_back(src.row);
    }
    for (int s = 0; s < 2; ++s) {
      auto& r = rows[static_cast<std::size_t>(s)];
      if (r.empty()) continue;
      std::sort(r.begin(), r.end());
      r.erase(std::unique(r.begin(), r.end()), r.end());
      std::string list;
      for (const std::string& buf : buffers) list += (list.empty() ? "" : ", ") + buf;
      text += std::string(text.empty() ? "" : "; ") + call_phrase(c) + " leaves " + stream_name(s) +
              (r.size() == 1 ? " row " : " rows ") + rows_text(r) + " (padding) unwritten (" + list + ")";
    }
  }
  return text.empty() ? std::string("rows are left unwritten") : text;
}

std::string params_text(std::vector<const Term*> terms) {
  std::stable_sort(terms.begin(), terms.end(), [](const Term* a, const Term* b) {
    return std::tie(a->order, a->stream) < std::tie(b->order, b->stream);
  });
  std::string s;
  std::size_t shown = 0;
  for (const Term* t : terms) {
    if (++shown > 3) {
      s += " and " + std::to_string(terms.size() - 3) + " more";
      break;
    }
    s += (s.empty() ? "" : ", ") + t->param + " (" + t->what + ")";
  }
  return s;
}

}  // namespace

void layer_findings(const Branch& b, const std::vector<Geometry>& geos, const ConsumerOptions& o,
                    std::vector<Finding>& out) {
  // The configurations: the spec's text assumes no zero factor (a bias); the
  // real consumer runs without (Qwen3-VL) or with attention_bias.
  const std::vector<bool> biases =
      o.consumer == ConsumerId::spec ? std::vector<bool>{true} : std::vector<bool>{false, true};
  std::string sources;  // built once, when something is hit
  Severity reported = Severity::metadata_only;
  for (const bool bias : biases) {
    const RunResult fin = run(b, geos, o.kernel, {bias, B});
    const RunResult nan = run(b, geos, o.kernel, {bias, N});
    // Gradients: hit by finite garbage (silent), by NaN on every step (the
    // run stops), or by NaN only when the memory holds it (loud).
    std::vector<const Term*> silent, always, only_nan;
    std::vector<std::string> hit;
    bool silent_first = false;
    for (const auto& [key, t] : nan.terms) {
      const auto it = fin.terms.find(key);
      if (it != fin.terms.end() && it->second.worst == B) {
        silent.push_back(&it->second);
        silent_first = silent_first || fin.first_layer.count(key) > 0;
      } else if (it != fin.terms.end()) {
        always.push_back(&it->second);
      } else {
        only_nan.push_back(&t);
      }
    }
    const bool reach_fwd = fin.reach.fwd_worst >= B, reach_bwd = fin.reach.bwd_worst >= B;
    const bool reach_nan = nan.reach.fwd_worst >= B || nan.reach.bwd_worst >= B;
    Severity sev = Severity::metadata_only;
    std::string what;
    const auto names = [&](const std::vector<const Term*>& terms) {
      for (const Term* t : terms) hit.push_back(t->param);
    };
    if (!silent.empty() || reach_bwd) {
      names(silent);
      sev = Severity::silent_wrong_gradient;
      what = "finite garbage reaches " +
             (silent.empty() ? std::string("real rows' gradients") : "the gradients of " + params_text(silent)) +
             (silent.empty() || silent_first ? "" : " in layers after the first");
    } else if (reach_fwd) {
      sev = Severity::wrong_output;
      what = "finite garbage reaches real rows in the forward";
    } else if (!always.empty()) {
      names(always);
      sev = Severity::crash_or_refusal;
      what = "NaN reaches the gradients of " + params_text(always) + " on every step";
    } else if (!only_nan.empty() || reach_nan) {
      names(only_nan);
      sev = Severity::nan_only;
      what = "only NaN reaches the gradients of " + params_text(only_nan) +
             ", when the memory holds it: finite garbage meets exact zeros on its way";
    }
    // A configuration reports only what is worse than the one before it.
    if (sev <= reported) continue;
    reported = sev;
    if (sources.empty()) sources = unwritten_sources(b, geos);
    const std::string cond = bias && o.consumer != ConsumerId::spec ? " (with attention_bias)" : "";
    Finding f;
    f.severity = sev;
    f.branch = b.name;
    f.call = "layer";
    f.kind = "garbage";
    f.key = b.name + "/layer/garbage/" + to_string(sev) + cond;
    f.text = sources + "; " + what + cond;
    f.gradients = std::move(hit);
    out.push_back(std::move(f));
  }
}

}  // namespace seqpack::attention::detail
