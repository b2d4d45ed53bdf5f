// Verdict wording (consequences.hpp): severity names, row ranges, each pass's
// one-clause consequence, the report's summary line and format_report(). The
// runs themselves are in consequences.cpp.
#include <algorithm>
#include <sstream>
#include <string>

#include "judge.hpp"
#include "seqpack/attention/consequences.hpp"

namespace seqpack::attention {

const char* to_string(Severity severity) noexcept {
  switch (severity) {
    case Severity::metadata_only:
      return "metadata-only";
    case Severity::not_judged:
      return "not-judged";
    case Severity::crash_or_refusal:
      return "crash-or-refusal";
    case Severity::nan_only:
      return "nan-only";
    case Severity::wrong_output:
      return "wrong-output";
    case Severity::silent_wrong_gradient:
      return "silent-wrong-gradient";
  }
  return "?";
}

bool parse_severity(const std::string& name, Severity& out) noexcept {
  for (const Severity s : {Severity::metadata_only, Severity::not_judged, Severity::crash_or_refusal,
                           Severity::nan_only, Severity::wrong_output, Severity::silent_wrong_gradient})
    if (name == to_string(s)) {
      out = s;
      return true;
    }
  return false;
}

std::vector<RowRange> to_ranges(const std::vector<bool>& marked) {
  std::vector<RowRange> out;
  for (std::size_t i = 0; i < marked.size(); ++i) {
    if (!marked[i]) continue;
    const auto r = static_cast<std::int64_t>(i);
    if (!out.empty() && out.back().last + 1 == r)
      out.back().last = r;
    else
      out.push_back({r, r});
  }
  return out;
}

std::string format_ranges(const std::vector<RowRange>& ranges) {
  std::string s;
  for (const RowRange& r : ranges) {
    if (!s.empty()) s += ", ";
    s += std::to_string(r.first);
    if (r.last != r.first) s += "\u2013" + std::to_string(r.last);
  }
  return s;
}

namespace {

const char* const kNoConsequence = "consequence: none at the attention level (metadata only)";

bool is_output(const BufferRows& b) { return b.buffer == "output"; }

std::string rows_clause(const BufferRows& b) {
  const bool one = b.rows.size() == 1 && b.rows[0].first == b.rows[0].last;
  return b.buffer + (one ? " row " : " rows ") + format_ranges(b.rows);
}

std::string cross_clause(const CrossSample& c) {
  if (c.k_sample < 0) return "a real row of sample " + std::to_string(c.q_sample) + " attends padding";
  const std::int64_t a = std::min(c.q_sample, c.k_sample), b = std::max(c.q_sample, c.k_sample);
  return "a real row attends across samples " + std::to_string(a) + " and " + std::to_string(b);
}

}  // namespace

void judge_pass(PassReport& r) {
  const std::string name = pass_name(r.kind);
  if (!r.refusal.empty()) {
    r.severity = Severity::crash_or_refusal;
    r.consequence = name + " is refused: " + r.refusal;
    return;
  }
  const bool grad_nan = std::any_of(r.weight_gradients.begin(), r.weight_gradients.end(),
                                    [](const WeightGradient& g) { return !g.finite; });
  const bool grad_differs = std::any_of(r.weight_gradients.begin(), r.weight_gradients.end(),
                                        [](const WeightGradient& g) { return g.finite && !g.equals_unpadded; });
  const bool grads_unwritten =
      std::any_of(r.unwritten.begin(), r.unwritten.end(), [](const auto& b) { return !is_output(b); });
  const bool grads_changed =
      std::any_of(r.changed.begin(), r.changed.end(), [](const auto& b) { return !is_output(b); });
  if (grad_nan || grad_differs || grads_unwritten || grads_changed)
    r.severity = Severity::silent_wrong_gradient;
  else if (!r.unwritten.empty() || !r.changed.empty() || r.cross)
    r.severity = Severity::wrong_output;
  else
    r.severity = Severity::metadata_only;
  std::string clause;
  if (!r.unwritten.empty())
    clause = name + " leaves " + rows_clause(r.unwritten.front()) + " unwritten";
  else if (r.cross)  // the cause, ahead of the rows it changes
    clause = cross_clause(*r.cross) + " in " + name;
  else if (!r.changed.empty())
    clause = name + " changes real " + rows_clause(r.changed.front());
  else if (grad_differs)
    clause = name + " changes the projection weight gradient";
  const bool clause_is_gradient = r.unwritten.empty() && r.changed.empty() && !r.cross && grad_differs;
  if (grad_nan)
    clause += "; the projection weight gradient is NaN";
  else if (grad_differs && !clause_is_gradient)
    clause += "; the projection weight gradient differs from the unpadded one";
  r.consequence = clause;
}

void judge_report(Report& report) {
  if (!report.refusal.empty()) {
    report.severity = Severity::crash_or_refusal;
    report.summary = "consequence: the pack cannot be read by its consumers: " + report.refusal;
    return;
  }
  report.severity = Severity::metadata_only;
  const PassReport* worst = nullptr;
  for (const PassReport& p : report.passes)
    if (p.severity > report.severity || (worst == nullptr && p.severity > Severity::metadata_only)) {
      report.severity = p.severity;
      worst = &p;
    }
  report.summary = worst ? "consequence: " + worst->consequence : kNoConsequence;
}

std::string format_report(const Report& report) {
  std::ostringstream s;
  s << report.summary << "\n";
  s << "severity: " << to_string(report.severity) << "; pad segment: " << (report.has_pad_segment ? "yes" : "no")
    << "; numeric: " << (report.numeric ? "yes" : "no") << " (" << report.attention_pairs << " pairs)\n";
  if (!report.has_pad_segment)
    s << "no pad segment: the plain offsets " << (report.plain_offsets_match ? "cover and agree" : "do not suffice")
      << "\n";
  for (const std::string& n : report.notes) s << "note: " << n << "\n";
  for (const PassReport& p : report.passes) {
    s << pass_id(p.kind) << ": " << to_string(p.severity);
    if (!p.consequence.empty()) s << " (" << p.consequence << ")";
    s << "\n";
    if (!p.refusal.empty()) s << "  refused: " << p.refusal << "\n";
    for (const BufferRows& b : p.unwritten) s << "  unwritten " << rows_clause(b) << "\n";
    for (const BufferRows& b : p.changed) s << "  changed real " << rows_clause(b) << "\n";
    for (const WeightGradient& g : p.weight_gradients)
      if (!g.finite || !g.equals_unpadded)
        s << "  weight gradient " << g.name << (g.finite ? " differs from the unpadded one" : " is not finite") << "\n";
    for (const std::string& m : p.max_violations) s << "  max too small: " << m << "\n";
    if (!p.paired) s << "  unpaired: " << p.q_segments << " query segments, " << p.k_segments << " key segments\n";
    if (p.cross)
      s << "  " << p.cross_rows << " real row(s) attend across samples; first: row " << p.cross->q_row << " (sample "
        << p.cross->q_sample << ") sees key row " << p.cross->k_row << " ("
        << (p.cross->k_sample < 0 ? std::string("padding") : "sample " + std::to_string(p.cross->k_sample)) << ")\n";
    if (p.empty_key_rows > 0) s << "  " << p.empty_key_rows << " real row(s) have no key (output 0)\n";
    for (const std::string& n : p.notes) s << "  note: " << n << "\n";
  }
  return s.str();
}

}  // namespace seqpack::attention
