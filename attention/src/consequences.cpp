// evaluate() (consequences.hpp): each pass run on the pack as it is (buffers
// poisoned with NaN first) and on the truth's unpadded streams with the plain
// offsets, then compared row by row through packed-row identities. Verdict
// wording, format_report and compare() are in report.cpp.
#include "seqpack/attention/consequences.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "judge.hpp"
#include "seqpack/attention/flex.hpp"
#include "seqpack/attention/varlen.hpp"

namespace seqpack::attention {

namespace {

// Hash tags of the generated inputs; padding rows add kPadding and the pass.
constexpr std::uint64_t kQ = 1, kK = 2, kV = 3, kDout = 4, kX = 5, kPadding = std::uint64_t{1} << 40;

// Each packed row's sample by the truth's plain sample_offsets; -1 for padding.
struct Labels {
  std::vector<std::int64_t> offsets;
  std::int64_t of(std::int64_t packed_row) const {
    if (packed_row < 0 || offsets.empty() || packed_row >= offsets.back()) return -1;
    const auto it = std::upper_bound(offsets.begin(), offsets.end(), packed_row);
    return static_cast<std::int64_t>(it - offsets.begin()) - 1;
  }
};

Tensor stream_tensor(const RowIds& rows, const EvaluateOptions& o, std::uint64_t tag, std::uint64_t pass_tag,
                     bool zero_padding) {
  Tensor t(static_cast<std::int64_t>(rows.size()), o.heads, o.dim);
  const std::int64_t n = t.row_size();
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const std::int64_t p = rows[j];
    for (std::int64_t e = 0; e < n; ++e)
      t.row(static_cast<std::int64_t>(j))[e] =
          p >= 0         ? hashed_value(o.seed, tag, static_cast<std::uint64_t>(p), static_cast<std::uint64_t>(e))
          : zero_padding ? 0.0
                         : hashed_value(o.seed, tag | kPadding | (pass_tag << 8), j, static_cast<std::uint64_t>(e));
  }
  return t;
}

struct Run {
  Tensor out, dq, dk, dv, dout;
  std::vector<double> lse;
  std::string refusal;
};

Run run_pass(const Pass& pass, const EvaluateOptions& o) {
  Run run;
  const auto tag = static_cast<std::uint64_t>(pass.kind) + 1;
  const Tensor q = stream_tensor(pass.q_rows, o, kQ, tag, false);
  const Tensor k = stream_tensor(pass.kv_rows, o, kK, tag, false);
  const Tensor v = stream_tensor(pass.kv_rows, o, kV, tag, false);
  // The loss reads real rows only, so no gradient reaches a padding output row.
  run.dout = stream_tensor(pass.q_rows, o, kDout, tag, true);
  const double nan = poison_nan();
  run.out = Tensor(q.rows, o.heads, o.dim, nan);
  run.dq = Tensor(q.rows, o.heads, o.dim, nan);
  run.dk = Tensor(k.rows, o.heads, o.dim, nan);
  run.dv = Tensor(k.rows, o.heads, o.dim, nan);
  run.lse.assign(static_cast<std::size_t>(q.rows * o.heads), nan);
  try {
    if (pass.block_sparse) {
      const MaskMod mask = sample_id_mask(pass.q_sample_ids, pass.kv_sample_ids, pass.causal);
      flex_forward(q, k, v, mask, std::nullopt, run.out, run.lse);
      flex_backward(run.dout, q, k, v, mask, std::nullopt, run.out, run.lse, run.dq, run.dk, run.dv);
    } else {
      varlen_forward(q, k, v, pass.args, run.out, run.lse);
      varlen_backward(run.dout, q, k, v, run.out, run.lse, pass.args, run.dq, run.dk, run.dv);
    }
  } catch (const std::invalid_argument& e) {
    run.refusal = e.what();
  }
  return run;
}

bool row_has_nan(const Tensor& t, std::int64_t r) {
  const double* x = t.row(r);
  return std::any_of(x, x + t.row_size(), [](double d) { return std::isnan(d); });
}

bool rows_same_bits(const Tensor& a, std::int64_t ra, const Tensor& b, std::int64_t rb) {
  for (std::int64_t e = 0; e < a.row_size(); ++e)
    if (!same_bits(a.row(ra)[e], b.row(rb)[e])) return false;
  return true;
}

std::int64_t pass_pairs(const Pass& pass) {
  if (pass.block_sparse) return static_cast<std::int64_t>(pass.q_rows.size() * pass.kv_rows.size());
  try {
    const VarlenPlan plan = plan_varlen(static_cast<std::int64_t>(pass.q_rows.size()),
                                        static_cast<std::int64_t>(pass.kv_rows.size()), 1, 1, pass.args);
    std::int64_t pairs = 0;
    for (const VarlenSegment& s : plan.segments) pairs += s.q_len * s.k_len;
    return pairs;
  } catch (const std::invalid_argument&) {
    return 0;
  }
}

void add_rows(std::vector<BufferRows>& into, const char* buffer, const std::vector<bool>& marked) {
  std::vector<RowRange> ranges = to_ranges(marked);
  if (!ranges.empty()) into.push_back({buffer, std::move(ranges)});
}

// sum over rows j of a_j (outer) b_j, in row order.
std::vector<double> outer_sum(const Tensor& a, const Tensor& b) {
  const std::int64_t n = a.row_size();
  std::vector<double> w(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) w[static_cast<std::size_t>(i * n + j)] += a.row(r)[i] * b.row(r)[j];
  return w;
}

struct WeightSums {
  std::vector<std::vector<double>> w;  // W_q, W_k, W_v, W_o
};

WeightSums weight_sums(const Pass& pass, const Run& run, const EvaluateOptions& o) {
  const Tensor xq = stream_tensor(pass.q_rows, o, kX, 0, true);
  const Tensor xk = stream_tensor(pass.kv_rows, o, kX, 0, true);
  return {{outer_sum(xq, run.dq), outer_sum(xk, run.dk), outer_sum(xk, run.dv), outer_sum(run.out, run.dout)}};
}

std::map<std::int64_t, std::int64_t> position_of(const RowIds& rows) {
  std::map<std::int64_t, std::int64_t> at;
  for (std::size_t j = 0; j < rows.size(); ++j)
    if (rows[j] >= 0) at.emplace(rows[j], static_cast<std::int64_t>(j));
  return at;
}

void compare_rows(const Tensor& got, const RowIds& got_rows, const Tensor& want, const RowIds& want_rows,
                  const char* buffer, std::vector<BufferRows>& changed) {
  const auto want_at = position_of(want_rows);
  std::vector<bool> marked(got_rows.size(), false);
  for (std::size_t j = 0; j < got_rows.size(); ++j) {
    const std::int64_t p = got_rows[j];
    if (p < 0 || row_has_nan(got, static_cast<std::int64_t>(j))) continue;  // padding, or reported as unwritten
    const auto it = want_at.find(p);
    marked[j] = it == want_at.end() || !rows_same_bits(got, static_cast<std::int64_t>(j), want, it->second);
  }
  add_rows(changed, buffer, marked);
}

void note_cross(PassReport& r, std::int64_t q_row, std::int64_t q_sample, std::int64_t k_row, std::int64_t k_sample) {
  ++r.cross_rows;
  if (!r.cross) r.cross = CrossSample{q_row, q_sample, k_row, k_sample};
}

// (g) for a varlen pass, in O(rows): each real query row's visible key range
// must hold keys of its own sample only.
void varlen_cross(const Pass& pass, const VarlenPlan& plan, const Labels& labels, PassReport& r) {
  std::vector<std::int64_t> kl(pass.kv_rows.size());
  for (std::size_t c = 0; c < kl.size(); ++c) kl[c] = labels.of(pass.kv_rows[c]);
  std::vector<std::int64_t> next_change(kl.size() + 1, static_cast<std::int64_t>(kl.size()));
  for (std::size_t c = kl.size(); c-- > 1;)
    next_change[c - 1] = kl[c] != kl[c - 1] ? static_cast<std::int64_t>(c) : next_change[c];
  if (plan.zero_all_forward) return;
  for (const VarlenSegment& seg : plan.segments)
    for (std::int64_t i = 0; i < seg.q_grid; ++i) {
      const std::int64_t row = seg.q_begin + i;
      const std::int64_t s = labels.of(pass.q_rows[static_cast<std::size_t>(row)]);
      if (s < 0) continue;
      const std::int64_t n = visible_keys(i, seg.q_len, seg.k_len, plan.causal_forward);
      if (n == 0) {
        ++r.empty_key_rows;
        continue;
      }
      const std::int64_t a = seg.k_begin;
      if (kl[static_cast<std::size_t>(a)] != s)
        note_cross(r, row, s, a, kl[static_cast<std::size_t>(a)]);
      else if (next_change[static_cast<std::size_t>(a)] < a + n)
        note_cross(r, row, s, next_change[static_cast<std::size_t>(a)],
                   kl[static_cast<std::size_t>(next_change[static_cast<std::size_t>(a)])]);
    }
}

void flex_cross(const Pass& pass, const Labels& labels, PassReport& r) {
  const MaskMod mask = sample_id_mask(pass.q_sample_ids, pass.kv_sample_ids, pass.causal);
  for (std::size_t row = 0; row < pass.q_rows.size(); ++row) {
    const std::int64_t s = labels.of(pass.q_rows[row]);
    if (s < 0) continue;
    bool any = false, crossed = false;
    for (std::size_t c = 0; c < pass.kv_rows.size(); ++c) {
      if (!mask(static_cast<std::int64_t>(row), static_cast<std::int64_t>(c))) continue;
      any = true;
      const std::int64_t ks = labels.of(pass.kv_rows[c]);
      if (ks != s && !crossed) {
        note_cross(r, static_cast<std::int64_t>(row), s, static_cast<std::int64_t>(c), ks);
        crossed = true;
      }
    }
    if (!any) ++r.empty_key_rows;
  }
}

void check_maxima(const Pass& pass, PassReport& r) {
  const auto check = [&](const std::vector<std::int64_t>& cu, std::int64_t max, const std::string& cu_field,
                         const std::string& max_field) {
    for (std::size_t s = 0; s + 1 < cu.size(); ++s)
      if (cu[s + 1] - cu[s] > max) {
        r.max_violations.push_back(max_field + " = " + std::to_string(max) + " < " + std::to_string(cu[s + 1] - cu[s]) +
                                   ", segment " + std::to_string(s) + " of " + cu_field);
        return;  // one per field is enough to name it
      }
  };
  check(pass.args.cu_seqlens_q.values(), pass.args.max_seqlen_q, pass.cu_q_field, pass.max_q_field);
  check(pass.args.cu_seqlens_k.values(), pass.args.max_seqlen_k, pass.cu_k_field, pass.max_k_field);
}

void block_notes(const Pass& pass, const PackMeta& meta, PassReport& r) {
  const auto q_len = static_cast<std::int64_t>(pass.q_rows.size());
  const auto kv_len = static_cast<std::int64_t>(pass.kv_rows.size());
  BlockAlignment a = check_block_alignment(q_len, kv_len, pass.block_size);
  if (a.aligned && pass.kind == PassKind::flex_gen && meta.causal_len() % pass.block_size != 0)
    a = {false, "the und/gen boundary at row " + std::to_string(meta.causal_len()) + " is not on a block boundary of " +
                    std::to_string(pass.block_size)};
  if (!a.aligned)
    r.notes.push_back(
        "block alignment: " + a.message +
        " (FlexAttention pads the block mask itself; the alignment the docstring promises does not hold)");
}

PassReport evaluate_pass(const Pass& pass, const Pass* base, const PackMeta& meta, const Labels& labels,
                         const EvaluateOptions& o, bool numeric) {
  PassReport r;
  r.kind = pass.kind;
  r.numeric = numeric;
  if (pass.block_sparse) {
    block_notes(pass, meta, r);
  } else {
    r.q_segments = pass.args.cu_seqlens_q.segments();
    r.k_segments = pass.args.cu_seqlens_k.segments();
    r.paired = r.q_segments == r.k_segments;
    check_maxima(pass, r);
  }
  if (!numeric && pass.block_sparse) {
    r.notes.push_back("not run: past the work bound (a block-sparse route writes every row)");
    judge_pass(r);
    return r;
  }
  if (!numeric) {  // coverage and cross-sample checks from the offsets alone
    try {
      const auto rq = static_cast<std::int64_t>(pass.q_rows.size());
      const auto rk = static_cast<std::int64_t>(pass.kv_rows.size());
      const VarlenPlan plan = plan_varlen(rq, rk, o.heads, o.dim, pass.args);
      const VarlenCoverage cov = varlen_coverage(plan, rq, rk);
      const auto flip = [](std::vector<bool> v) {
        v.flip();
        return v;
      };
      add_rows(r.unwritten, "output", flip(cov.out));
      add_rows(r.unwritten, "dq", flip(cov.dq));
      add_rows(r.unwritten, "dk", flip(cov.dkv));
      add_rows(r.unwritten, "dv", flip(cov.dkv));
      r.weight_gradients.push_back({"W", r.unwritten.empty(), true});
      varlen_cross(pass, plan, labels, r);
      r.notes.push_back("numeric checks skipped (work bound): coverage from the offsets only");
    } catch (const std::invalid_argument& e) {
      r.refusal = e.what();
    }
    judge_pass(r);
    return r;
  }
  const Run run = run_pass(pass, o);
  if (!run.refusal.empty()) {
    r.refusal = run.refusal;
    judge_pass(r);
    return r;
  }
  const auto nan_rows = [](const Tensor& t) {
    std::vector<bool> m(static_cast<std::size_t>(t.rows));
    for (std::int64_t j = 0; j < t.rows; ++j) m[static_cast<std::size_t>(j)] = row_has_nan(t, j);
    return m;
  };
  add_rows(r.unwritten, "output", nan_rows(run.out));
  add_rows(r.unwritten, "dq", nan_rows(run.dq));
  add_rows(r.unwritten, "dk", nan_rows(run.dk));
  add_rows(r.unwritten, "dv", nan_rows(run.dv));
  if (pass.block_sparse)
    flex_cross(pass, labels, r);
  else
    varlen_cross(pass,
                 plan_varlen(static_cast<std::int64_t>(pass.q_rows.size()),
                             static_cast<std::int64_t>(pass.kv_rows.size()), o.heads, o.dim, pass.args),
                 labels, r);
  const WeightSums mine = weight_sums(pass, run, o);
  static const char* const names[] = {"W_q", "W_k", "W_v", "W_o"};
  std::optional<Run> base_run;
  if (base) {
    base_run = run_pass(*base, o);
    if (!base_run->refusal.empty()) {
      r.notes.push_back("the unpadded run is refused (" + base_run->refusal + "): nothing to compare with");
      base_run.reset();
    }
  } else {
    r.notes.push_back("no unpadded counterpart of this pass: nothing to compare with");
  }
  std::optional<WeightSums> theirs;
  if (base_run) {
    compare_rows(run.out, pass.q_rows, base_run->out, base->q_rows, "output", r.changed);
    compare_rows(run.dq, pass.q_rows, base_run->dq, base->q_rows, "dq", r.changed);
    compare_rows(run.dk, pass.kv_rows, base_run->dk, base->kv_rows, "dk", r.changed);
    compare_rows(run.dv, pass.kv_rows, base_run->dv, base->kv_rows, "dv", r.changed);
    theirs = weight_sums(*base, *base_run, o);
  }
  for (std::size_t w = 0; w < 4; ++w) {
    WeightGradient g;
    g.name = names[w];
    g.finite = std::all_of(mine.w[w].begin(), mine.w[w].end(), [](double d) { return std::isfinite(d); });
    g.equals_unpadded = !theirs || mine.w[w] == theirs->w[w];
    r.weight_gradients.push_back(g);
  }
  judge_pass(r);
  return r;
}

}  // namespace

Report evaluate(const PackMeta& meta, const EvaluateOptions& options, const PackMeta* truth) {
  const PackMeta& t = truth ? *truth : meta;
  Report report;
  report.has_pad_segment = meta.pad_segment.has_value();
  if (options.heads < 1 || options.dim < 1 || options.heads * options.dim > 64)
    throw std::invalid_argument("EvaluateOptions: heads and dim must be >= 1 with heads * dim <= 64");
  if (meta.is_sharded) {
    report.notes.push_back("sharded pack: not evaluated (its offsets describe the unsharded streams)");
    judge_report(report);
    return report;
  }
  std::vector<Pass> passes, base;
  try {
    passes = derive_passes(meta, Variant::as_packed);
  } catch (const std::invalid_argument& e) {
    report.refusal = e.what();
    judge_report(report);
    return report;
  }
  try {
    base = derive_passes(t, Variant::unpadded);
  } catch (const std::invalid_argument& e) {
    report.notes.push_back(std::string("the truth's unpadded passes cannot be built: ") + e.what());
  }
  Labels labels{t.sample_offsets};
  for (const Pass& p : passes)
    if (options.block_sparse || !p.block_sparse) report.attention_pairs += pass_pairs(p);
  for (const Pass& p : base)
    if (options.block_sparse || !p.block_sparse) report.attention_pairs += pass_pairs(p);
  report.numeric = report.attention_pairs <= options.max_pairs;
  if (!report.numeric)
    report.notes.push_back("numeric checks skipped: " + std::to_string(report.attention_pairs) +
                           " attention pairs > max_pairs " + std::to_string(options.max_pairs));
  for (const Pass& p : passes) {
    if (p.block_sparse && !options.block_sparse) continue;
    const auto match = std::find_if(base.begin(), base.end(), [&](const Pass& b) { return b.kind == p.kind; });
    report.passes.push_back(
        evaluate_pass(p, match == base.end() ? nullptr : &*match, meta, labels, options, report.numeric));
  }
  if (!report.has_pad_segment)
    report.plain_offsets_match = std::all_of(report.passes.begin(), report.passes.end(), [](const PassReport& r) {
      return r.unwritten.empty() && r.changed.empty() && r.refusal.empty();
    });
  judge_report(report);
  return report;
}

}  // namespace seqpack::attention
