// judge_consumer and compare_consumer (consumer_judge.hpp): each branch's
// refusals, the identity of every real row's dependencies (what it sees and
// who sees it), the token masks and sample ids the layer reads, and the layer
// model's findings (layer.cpp). Geometry and the truth's structure:
// geometry.cpp, identity.cpp.
#include "seqpack/attention/consumer_judge.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "consumer_internal.hpp"

namespace seqpack::attention {

namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): the judge's own parts

const char* stream_word(StreamId s) { return s == StreamId::causal ? "causal" : "full"; }

Finding make(Severity sev, const std::string& branch, const std::string& call, const std::string& kind,
             const std::string& key_detail, std::string text) {
  Finding f;
  f.severity = sev;
  f.branch = branch;
  f.call = call;
  f.kind = kind;
  f.key = branch + "/" + call + "/" + kind + "/" + key_detail;
  f.text = std::move(text);
  return f;
}

// What one real query row gets in the forward, against what it should.
enum class Issue : std::uint8_t { none, unwritten, zeroed, changed, merge_zeroed, merge_nan };

struct CrossNote {
  bool any = false;
  std::int64_t q_row = 0, q_sample = 0, k_id = -1, k_sample = -1;
  std::int64_t empty_row = -1;  // the first real row that sees no key at all
};

class IdentityJudge {
 public:
  IdentityJudge(const Branch& b, const std::vector<Geometry>& g, const Truth& t, const ConsumerOptions& o,
                const JudgeLimits& limits)
      : b_(b), g_(g), t_(t), o_(o), limits_(limits) {}

  // False when the step budget ran out (the caller reports not-judged).
  bool run(std::vector<Finding>& out) {
    streams(out);
    fwd_.assign(b_.calls.size(), {});
    dq_ok_.assign(b_.calls.size(), {});
    std::vector<std::size_t> merges;
    for (std::size_t ci = 0; ci < b_.calls.size(); ++ci)
      if (b_.calls[ci].merge) merges.push_back(ci);
    for (std::size_t ci = 0; ci < b_.calls.size(); ++ci) {
      if (b_.calls[ci].merge) continue;
      if (!queries(ci, out)) return false;
    }
    if (merges.size() == 2 && !merged(merges[0], merges[1], out)) return false;
    for (std::size_t ci = 0; ci < b_.calls.size(); ++ci)
      if (!keys(ci, out)) return false;
    return true;
  }

 private:
  bool spend(std::int64_t n) {
    steps_ += n;
    return steps_ <= limits_.max_steps;
  }

  // The streams the layer runs on hold the spec's rows, in the spec's order.
  void streams(std::vector<Finding>& out) {
    const auto check = [&](const RowIds& rows, bool causal, const char* name) {
      std::vector<std::int64_t> bad;
      std::int64_t want = 0;
      const std::int64_t n = t_.rows();
      // The truth's stream, in order: the rows of that mode ascending within
      // their splits, which is packed order.
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i] < 0) continue;
        while (want < n && t_.causal(want) != causal) ++want;
        if (rows[i] != want) bad.push_back(static_cast<std::int64_t>(i));
        if (want < n) ++want;
      }
      while (want < n && t_.causal(want) != causal) ++want;
      if (bad.empty() && want < n)
        out.push_back(make(Severity::wrong_output, b_.name, "streams", "missing", name,
                           std::string("the ") + name + " stream lacks packed row " + std::to_string(want) +
                               ": the consumer never computes it"));
      else if (!bad.empty())
        out.push_back(
            make(Severity::wrong_output, b_.name, "streams", "order", name + std::string(":") + rows_text(bad),
                 std::string("the ") + name + " stream holds other rows than the spec's at rows " + rows_text(bad)));
    };
    check(b_.causal_rows, true, "causal");
    check(b_.full_rows, false, "full");
  }

  // The forward keys a query row sees, compared with its intent; false when
  // the budget runs out.
  bool compare_keys(const Call& c, const Geometry& g, std::size_t i, std::int64_t n, Issue& issue, CrossNote& cross) {
    const std::int64_t p = c.q_rows[i];
    const Segment& seg = g.segments[static_cast<std::size_t>(g.q_seg[i])];
    const Rle actual = slice(seg.k_ids, 0, n);
    bool defined = false;
    const Rle want = t_.keys(c.intent, p, defined);
    if (!spend(static_cast<std::int64_t>(actual.size() + want.size()))) return false;
    if (!defined || actual != want) issue = Issue::changed;
    if (issue == Issue::changed && actual.empty() && cross.empty_row < 0)
      cross.empty_row = static_cast<std::int64_t>(i);
    if (issue == Issue::changed && !cross.any) {
      const std::int64_t s = t_.sample(p);
      for (const Run& r : actual) {
        const std::int64_t a = r.first < 0 ? -1 : t_.sample(r.first);
        const std::int64_t z = r.first < 0 ? -1 : t_.sample(r.first + (r.count - 1));
        if (a != s || z != s) {
          cross = {true, static_cast<std::int64_t>(i), s, r.first, a != s ? a : z};
          break;
        }
      }
    }
    return true;
  }

  void report_queries(const Call& c, const std::string& call_id, const std::string& phrase,
                      const std::map<Issue, std::vector<std::int64_t>>& rows, const std::vector<std::int64_t>& dq_bad,
                      const std::vector<std::int64_t>& dq_short, const CrossNote& cross, std::vector<Finding>& out) {
    const std::string stream = stream_word(c.q_stream);
    for (const auto& [issue, list] : rows) {
      if (list.empty() || issue == Issue::none) continue;
      const std::string r = rows_text(list);
      switch (issue) {
        case Issue::unwritten:
          out.push_back(make(Severity::wrong_output, b_.name, call_id, "unwritten", "out:" + r,
                             phrase + " leaves the output of real " + stream + " rows " + r + " unwritten"));
          break;
        case Issue::zeroed:
          out.push_back(make(Severity::wrong_output, b_.name, call_id, "zeroed", "out:" + r,
                             phrase + " zeroes the output of real " + stream + " rows " + r + " (" + c.max_k_field +
                                 " is 0: the kernel is skipped)"));
          break;
        case Issue::changed: {
          std::string why = "they see other keys than their sample's";
          if (cross.empty_row >= 0)
            why =
                "real " + stream + " row " + std::to_string(cross.empty_row) + " sees no key at all (its output is 0)";
          else if (cross.any)
            why = "real " + stream + " row " + std::to_string(cross.q_row) + " (sample " +
                  std::to_string(cross.q_sample) + ") sees " +
                  (cross.k_id < 0 ? std::string("padding")
                                  : "packed row " + std::to_string(cross.k_id) + " of " +
                                        (cross.k_sample < 0 ? std::string("no sample")
                                                            : "sample " + std::to_string(cross.k_sample)));
          out.push_back(make(Severity::wrong_output, b_.name, call_id, "changed", "out:" + r,
                             phrase + " changes real " + stream + " rows " + r + ": " + why));
          break;
        }
        case Issue::merge_zeroed:
          out.push_back(make(Severity::wrong_output, b_.name, call_id, "merge-zeroed", "out:" + r,
                             "the LSE merge zeroes real full rows " + r +
                                 ": one side's key range is empty and its LSE is +inf on " + kernel_name(o_.kernel) +
                                 ", so the merge returns that side's 0 and the backward gives them no gradient"));
          break;
        case Issue::merge_nan:
          out.push_back(make(Severity::crash_or_refusal, b_.name, call_id, "merge-nan", "out:" + r,
                             "the LSE merge gives NaN on real full rows " + r + ": both key ranges are empty"));
          break;
        case Issue::none:
          break;
      }
    }
    if (!dq_bad.empty())
      out.push_back(make(Severity::silent_wrong_gradient, b_.name, call_id, "unwritten", "dq:" + rows_text(dq_bad),
                         phrase + " leaves dq of real " + stream + " rows " + rows_text(dq_bad) + " unwritten"));
    if (!dq_short.empty())
      out.push_back(make(Severity::silent_wrong_gradient, b_.name, call_id, "changed", "dq:" + rows_text(dq_short),
                         phrase + "'s backward leaves keys out of dq of real " + stream + " rows " +
                             rows_text(dq_short) + " (" + c.max_k_field + " is short of a segment)"));
  }

  bool queries(std::size_t ci, std::vector<Finding>& out) {
    const Call& c = b_.calls[ci];
    const Geometry& g = g_[ci];
    std::map<Issue, std::vector<std::int64_t>> rows;
    std::vector<std::int64_t> dq_bad, dq_short;
    CrossNote cross;
    fwd_[ci].assign(c.q_rows.size(), true);
    dq_ok_[ci].assign(c.q_rows.size(), true);
    for (std::size_t i = 0; i < c.q_rows.size(); ++i) {
      if (c.q_rows[i] < 0) continue;
      const QueryState st = query_state(g, static_cast<std::int64_t>(i));
      Issue issue = Issue::none;
      if (st.out == Out::unwritten)
        issue = Issue::unwritten;
      else if (st.out == Out::zero || st.out == Out::zero_filled)
        issue = Issue::zeroed;
      else if (!compare_keys(c, g, i, st.n, issue, cross))
        return false;
      rows[issue].push_back(static_cast<std::int64_t>(i));
      fwd_[ci][i] = issue == Issue::none;
      if (!st.dq_written) {
        dq_ok_[ci][i] = false;
        if (issue == Issue::none) dq_bad.push_back(static_cast<std::int64_t>(i));
      } else if (st.n_bwd != st.n) {
        dq_ok_[ci][i] = false;
        if (issue == Issue::none) dq_short.push_back(static_cast<std::int64_t>(i));
      }
    }
    report_queries(c, c.id, call_phrase(c), rows, dq_bad, dq_short, cross, out);
    return true;
  }

  // The three-way merge of the GEN self-attention (a) and the gen->und
  // cross-attention (c) by LSE (NATTEN merge_attentions: o = o0 - sigmoid(l1 -
  // l0) * (o0 - o1), attn_merge.py:83-88 at 8c8729f): an empty range's LSE is
  // +inf on fa2 (the merge then returns that side's 0) and -inf on fa3 (the
  // merge ignores it).
  bool merged(std::size_t a, std::size_t c, std::vector<Finding>& out) {
    const Call& ca = b_.calls[a];
    const Call& cc = b_.calls[c];
    std::map<Issue, std::vector<std::int64_t>> rows;
    std::vector<std::int64_t> dq_bad, dq_short;
    CrossNote cross;
    fwd_[a].assign(ca.q_rows.size(), true);
    fwd_[c].assign(cc.q_rows.size(), true);
    dq_ok_[a].assign(ca.q_rows.size(), true);
    dq_ok_[c].assign(cc.q_rows.size(), true);
    const auto side = [&](const QueryState& st) {  // 0 has keys, -1 LSE -inf, +1 LSE +inf
      if (st.out == Out::computed || st.out == Out::zero_filled) return 0;
      if (st.out == Out::zero) return 1;
      return o_.kernel == Kernel::fa3 ? -1 : 1;
    };
    for (std::size_t i = 0; i < ca.q_rows.size() && i < cc.q_rows.size(); ++i) {
      if (ca.q_rows[i] < 0) continue;
      const QueryState sa = query_state(g_[a], static_cast<std::int64_t>(i));
      const QueryState sc = query_state(g_[c], static_cast<std::int64_t>(i));
      Issue issue = Issue::none;
      if (sa.out == Out::unwritten || sc.out == Out::unwritten) {
        issue = Issue::unwritten;
      } else {
        const int la = side(sa), lc = side(sc);
        if (la != 0 && lc != 0) {
          issue = Issue::merge_nan;
        } else if (la == 1 || lc == 1) {
          issue = Issue::merge_zeroed;
        } else {
          // The merge sees each side's keys; an empty side drops out (-inf).
          if (sa.out == Out::zero_filled || sc.out == Out::zero_filled) issue = Issue::changed;
          if (sa.out == Out::computed && !compare_keys(ca, g_[a], i, sa.n, issue, cross)) return false;
          bool defined = false;
          if (la != 0 && !(t_.keys(ca.intent, ca.q_rows[i], defined).empty() && defined)) issue = Issue::changed;
          if (sc.out == Out::computed && !compare_keys(cc, g_[c], i, sc.n, issue, cross)) return false;
          if (lc != 0 && !(t_.keys(cc.intent, cc.q_rows[i], defined).empty() && defined)) issue = Issue::changed;
        }
      }
      rows[issue].push_back(static_cast<std::int64_t>(i));
      const bool ok = issue == Issue::none;
      fwd_[a][i] = fwd_[c][i] = ok;
      const bool written = sa.dq_written && sc.dq_written;
      const bool full = sa.n_bwd == sa.n && sc.n_bwd == sc.n;
      dq_ok_[a][i] = dq_ok_[c][i] = written && full;
      if (ok && !written) dq_bad.push_back(static_cast<std::int64_t>(i));
      if (ok && written && !full) dq_short.push_back(static_cast<std::int64_t>(i));
    }
    report_queries(ca, ca.id + "+" + cc.id, "the merged GEN attention", rows, dq_bad, dq_short, cross, out);
    return true;
  }

  // dk/dv of real key rows: written, and summed over exactly the queries the
  // consumer means. A key whose queries' forward is already wrong is left to
  // that forward finding.
  bool keys(std::size_t ci, std::vector<Finding>& out) {
    const Call& c = b_.calls[ci];
    const Geometry& g = g_[ci];
    std::vector<std::int64_t> unwritten, changed;
    std::vector<std::vector<std::int64_t>> fwd_bad(g.segments.size()), dep_bad(g.segments.size());
    for (std::size_t s = 0; s < g.segments.size(); ++s) {
      const Segment& seg = g.segments[s];
      fwd_bad[s].assign(seg.q.size() + 1, 0);
      dep_bad[s].assign(seg.q.size() + 1, 0);
      for (std::size_t t = 0; t < seg.q.size(); ++t) {
        const auto i = static_cast<std::size_t>(seg.q[t]);
        const bool real = c.q_rows[i] >= 0;
        fwd_bad[s][t + 1] = fwd_bad[s][t] + (real && !fwd_[ci][i] ? 1 : 0);
        dep_bad[s][t + 1] = dep_bad[s][t] + (real && !dq_ok_[ci][i] ? 1 : 0);
      }
    }
    // Per packed row: whether the query holding it in this call is already
    // wrong in the forward (prefix sums, so a run of intended queries is O(1)).
    std::vector<std::int64_t> wrong_before(static_cast<std::size_t>(t_.rows()) + 1, 0);
    for (std::size_t i = 0; i < c.q_rows.size(); ++i) {
      const std::int64_t p = c.q_rows[i];
      if (p >= 0 && p < t_.rows() && !fwd_[ci][i]) wrong_before[static_cast<std::size_t>(p) + 1] = 1;
    }
    for (std::size_t p = 1; p < wrong_before.size(); ++p) wrong_before[p] += wrong_before[p - 1];
    const auto intended_wrong = [&](const Rle& queries) {
      for (const Run& r : queries)
        if (r.first >= 0 && wrong_before[static_cast<std::size_t>(r.first + r.count)] -
                                    wrong_before[static_cast<std::size_t>(r.first)] >
                                0)
          return true;
      return false;
    };
    for (std::size_t j = 0; j < c.kv_rows.size(); ++j) {
      const std::int64_t p = c.kv_rows[j];
      if (p < 0 || c.kv_src[j].stream < 0) continue;
      const KeyState ks = key_state(g, static_cast<std::int64_t>(j));
      const Rle want = t_.queries(c.intent, p);
      if (ks.grad == KeyGrad::unwritten || ks.grad == KeyGrad::garbage) {
        // Autograd adds the whole buffer back into the stream, read or not.
        unwritten.push_back(static_cast<std::int64_t>(j));
        continue;
      }
      if (!spend(static_cast<std::int64_t>(want.size()))) return false;
      if (ks.grad == KeyGrad::zero) {
        if (!want.empty() && !intended_wrong(want)) changed.push_back(static_cast<std::int64_t>(j));
        continue;
      }
      const auto s = static_cast<std::size_t>(g.k_seg[j]);
      const Segment& seg = g.segments[s];
      const auto a = static_cast<std::size_t>(ks.first_q), e = static_cast<std::size_t>(ks.last_q);
      if (fwd_bad[s][e] - fwd_bad[s][a] > 0 || intended_wrong(want)) continue;  // the forward finding covers it
      const Rle actual = real_only(slice(seg.q_ids, ks.first_q, ks.last_q - ks.first_q));
      if (!spend(static_cast<std::int64_t>(actual.size() + want.size()))) return false;
      if (actual != want || dep_bad[s][e] - dep_bad[s][a] > 0) changed.push_back(static_cast<std::int64_t>(j));
    }
    const auto where = [&](const std::vector<std::int64_t>& rows) {
      // Name key rows by the stream rows they come from.
      std::vector<std::int64_t> causal, full;
      for (const std::int64_t j : rows) {
        const Source& src = c.kv_src[static_cast<std::size_t>(j)];
        (src.stream == 0 ? causal : full).push_back(src.row);
      }
      std::sort(causal.begin(), causal.end());
      std::sort(full.begin(), full.end());
      std::string s;
      if (!causal.empty()) s += "causal rows " + rows_text(causal);
      if (!full.empty()) s += (s.empty() ? "" : " and ") + std::string("full rows ") + rows_text(full);
      return s;
    };
    if (!unwritten.empty())
      out.push_back(make(Severity::silent_wrong_gradient, b_.name, c.id, "unwritten", "dkv:" + where(unwritten),
                         std::string(call_phrase(c)) + " leaves dk/dv of real " + where(unwritten) + " unwritten"));
    if (!changed.empty())
      out.push_back(make(Severity::silent_wrong_gradient, b_.name, c.id, "changed", "dkv:" + where(changed),
                         std::string(call_phrase(c)) + " changes dk/dv of real " + where(changed) +
                             ": other queries than their sample's reach them"));
    return true;
  }

  const Branch& b_;
  const std::vector<Geometry>& g_;
  const Truth& t_;
  const ConsumerOptions& o_;
  const JudgeLimits& limits_;
  std::int64_t steps_ = 0;
  std::vector<std::vector<bool>> fwd_, dq_ok_;  // per call, per query row
};

// What the layer reads besides attention: the token mask that keeps padding
// out of the MLP (unified_mot.py:1283-1310, from get_num_real_tokens) and,
// with an MoE tower and per-sample load balancing, the sample ids
// (unified_mot.py:1078-1084, qwen3_vl_moe.py:708-726,
// load_balancing_stats.py:41-83).
void token_findings(const Branch& b, const Truth& t, const ConsumerInput& in, const ConsumerOptions& o,
                    std::vector<Finding>& out) {
  const auto one = [&](const RowIds& rows, const StreamTokens& tok, const char* name) {
    std::vector<std::int64_t> masked_real, unmasked_pad, wrong_id, bad_id;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const bool real_mask = i < tok.real.size() && tok.real[i];
      if (rows[i] >= 0 && !real_mask) masked_real.push_back(static_cast<std::int64_t>(i));
      if (rows[i] < 0 && real_mask) unmasked_pad.push_back(static_cast<std::int64_t>(i));
      if (!real_mask) continue;  // a masked row's id is mapped to the discarded bucket
      const std::int64_t id = i < tok.sample_ids.size() ? tok.sample_ids[i] : -2;
      if (id < 0 || id > b.num_samples)
        bad_id.push_back(static_cast<std::int64_t>(i));
      else if (rows[i] >= 0 ? id != t.sample(rows[i]) : id != b.num_samples)
        wrong_id.push_back(static_cast<std::int64_t>(i));
    }
    if (!masked_real.empty())
      out.push_back(make(Severity::wrong_output, b.name, "mlp", "mask",
                         std::string(name) + ":" + rows_text(masked_real),
                         std::string("the token mask (") + tok.mask_field + ") takes real " + name + " rows " +
                             rows_text(masked_real) + " for padding: their MLP input is zeroed"));
    if (o.consumer != ConsumerId::cosmos_5eee9ed) return;
    if (!unmasked_pad.empty())
      out.push_back(make(Severity::silent_wrong_gradient, b.name, "moe", "mask",
                         std::string(name) + ":" + rows_text(unmasked_pad),
                         std::string("the token mask (") + tok.mask_field + ") takes padding " + name + " rows " +
                             rows_text(unmasked_pad) +
                             " for real: an MoE tower routes them and counts them in its load-balancing statistics"));
    if (!bad_id.empty())
      out.push_back(make(Severity::crash_or_refusal, b.name, "moe", "sample-ids",
                         std::string(name) + ":" + rows_text(bad_id),
                         tok.ids_field + " of " + name + " rows " + rows_text(bad_id) + " is outside [0, " +
                             std::to_string(b.num_samples) +
                             "]: the per-sample load-balancing scatter indexes out of bounds (with an MoE tower)"));
    if (!wrong_id.empty())
      out.push_back(make(Severity::silent_wrong_gradient, b.name, "moe", "sample-ids",
                         std::string(name) + ":" + rows_text(wrong_id),
                         tok.ids_field + " of " + name + " rows " + rows_text(wrong_id) +
                             " names another sample: the per-sample load-balancing loss counts them there (with an "
                             "MoE tower and per-sample balancing)"));
  };
  one(b.causal_rows, b.causal_tokens, "causal");
  one(b.full_rows, b.full_tokens, "full");
  if (o.consumer == ConsumerId::cosmos_5eee9ed)
    for (const char* field : {"causal_sample_ids", "full_only_sample_ids"}) {
      const auto it = in.dtypes.find(field);
      if (it != in.dtypes.end() && it->second != "int64")
        out.push_back(make(Severity::crash_or_refusal, b.name, "moe", "dtype", field,
                           std::string(field) + " is " + it->second +
                               ": the per-sample load-balancing scatter_add takes int64 indices only (with an MoE "
                               "tower and per-sample balancing)"));
    }
}

std::string size_problem(const ConsumerInput& in, const JudgeLimits& limits, const char* who) {
  const auto over = [&](std::size_t n) { return static_cast<std::int64_t>(n) > limits.max_rows; };
  const PackMeta& m = in.meta;
  std::int64_t packed = m.sample_offsets.empty() ? 0 : m.sample_offsets.back();
  std::size_t shards = 0;
  for (const ShardView& s : in.cp_shards) shards += s.causal_rows.size() + s.full_only_rows.size();
  if (over(m.causal_rows.size()) || over(m.full_only_rows.size()) ||
      over(m.causal_indices.size() + m.full_indices.size()) || packed > limits.max_rows || packed < 0 || over(shards) ||
      (in.all_seq_padded && over(in.all_seq_padded->rows.size())) || (in.all_seq_rows && over(in.all_seq_rows->size())))
    return std::string(who) + " has more than " + std::to_string(limits.max_rows) + " rows in a stream or buffer";
  return {};
}

}  // namespace

ConsumerReport judge_consumer(const ConsumerInput& pack, const ConsumerInput& truth, const ConsumerOptions& options,
                              const JudgeLimits& limits) {
  ConsumerReport report;
  report.options = options;
  const auto not_judged = [&](const std::string& why) {
    report.findings.push_back(make(Severity::not_judged, "", "", "not-judged", why, "not judged: " + why));
  };
  std::string problem = size_problem(truth, limits, "the reference's pack");
  if (problem.empty()) problem = size_problem(pack, limits, "the pack");
  Truth t(truth.meta);
  if (problem.empty() && !t.error().empty()) problem = "the reference's pack cannot be read: " + t.error();
  if (!problem.empty()) {
    not_judged(problem);
  } else {
    for (const Branch& b : derive_branches(pack, truth, options)) {
      if (!b.refusal.empty()) {
        report.findings.push_back(make(Severity::crash_or_refusal, b.name, "", "refused", b.refusal.substr(0, 60),
                                       "refused before any kernel: " + b.refusal));
        continue;
      }
      std::vector<Geometry> geos;
      bool refused = false;
      for (const Call& c : b.calls) {
        geos.push_back(plan_call(c, options.kernel));
        if (!geos.back().refusal.empty()) {
          report.findings.push_back(make(
              Severity::crash_or_refusal, b.name, c.id, "refused", geos.back().cite,
              std::string(call_phrase(c)) + " is refused: " + geos.back().refusal + " (" + geos.back().cite + ")"));
          refused = true;  // the training step stops at the first refused call
          break;
        }
      }
      if (refused) continue;
      const std::size_t before = report.findings.size();
      IdentityJudge identity(b, geos, t, options, limits);
      if (!identity.run(report.findings)) {
        report.findings.resize(before);
        report.findings.push_back(make(Severity::not_judged, b.name, "", "not-judged", "steps",
                                       "not judged: past " + std::to_string(limits.max_steps) +
                                           " comparison steps (the rows are not runs of packed rows)"));
        continue;
      }
      token_findings(b, t, pack, options, report.findings);
      layer_findings(b, geos, options, report.findings);
    }
  }
  const Finding* worst = nullptr;
  for (const Finding& f : report.findings)
    if (!worst || f.severity > worst->severity) worst = &f;
  report.severity = worst ? worst->severity : Severity::metadata_only;
  const std::string head = "consequence [" + describe(options);
  report.line = worst ? head + (worst->branch.empty() ? "" : ", " + worst->branch) + "]: " + worst->text
                      : head + "]: none (every branch computes what the spec means)";
  return report;
}

Verdict compare_consumer(const ConsumerInput& port, const ConsumerInput& reference, const ConsumerOptions& options,
                         const JudgeLimits& limits) {
  const ConsumerReport mine = judge_consumer(port, reference, options, limits);
  const ConsumerReport theirs = judge_consumer(reference, reference, options, limits);
  const std::string head = "consequence [" + describe(options);
  std::map<std::string, const Finding*> known;
  const Finding* unknown_reference = nullptr;  // a branch of the reference that was not judged
  for (const Finding& f : theirs.findings) {
    known.emplace(f.key, &f);
    if (f.severity == Severity::not_judged && !unknown_reference) unknown_reference = &f;
  }
  // A port's finding counts when the reference lacks it; a port's not-judged
  // always counts (it is no finding anybody shares).
  const Finding* worst = nullptr;
  for (const Finding& f : mine.findings)
    if ((f.severity == Severity::not_judged || !known.count(f.key)) && (!worst || f.severity > worst->severity))
      worst = &f;
  if (worst && worst->severity > Severity::not_judged)
    return {worst->severity, head + (worst->branch.empty() ? "" : ", " + worst->branch) + "]: " + worst->text};
  // Without the reference's own findings there is nothing to compare with.
  if (unknown_reference)
    return {Severity::not_judged, head + "]: not judged (the reference's pack: " + unknown_reference->text + ")"};
  if (worst) return {worst->severity, head + (worst->branch.empty() ? "" : ", " + worst->branch) + "]: " + worst->text};
  if (theirs.findings.empty()) return {Severity::metadata_only, head + "]: none (metadata only)"};
  return {Severity::metadata_only, head + "]: none beyond the reference's own (" +
                                       std::string(to_string(theirs.severity)) + ": " +
                                       theirs.line.substr(theirs.line.find("]: ") + 3) + ")"};
}

std::string format_consumer_report(const ConsumerReport& report) {
  std::ostringstream s;
  s << report.line << "\n";
  s << "severity: " << to_string(report.severity) << "\n";
  for (const Finding& f : report.findings)
    s << to_string(f.severity) << " " << (f.branch.empty() ? "-" : f.branch) << ": " << f.text << "\n";
  return s.str();
}

}  // namespace seqpack::attention
