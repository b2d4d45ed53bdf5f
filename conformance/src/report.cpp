// `seqpack conform`'s reporting: each failure group printed once with its
// shrunk member, the progress line, the summary, and the JSON and JUnit
// reports. The Runner class is declared in runner_internal.hpp; the case loop
// is in runner.cpp, grouping in groups.cpp, shrinking in shrink.cpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runner_internal.hpp"
#include "seqpack/conformance/verdict.hpp"
#include "seqpack/protocol/case_json.hpp"

namespace seqpack::conformance {

// The runner speaks the protocol's vocabulary (seqpack/protocol/).
using namespace seqpack::protocol;  // NOLINT(google-build-using-namespace)

std::string junit_xml(const std::string& suite, const std::vector<JUnitCase>& cases, double seconds) {
  // XML 1.0 character data: a port's name, ids and messages can hold any byte.
  const auto esc = [](const std::string& s) { return xml_text(s); };
  const auto secs = [](double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    return std::string(buf);
  };
  std::size_t failures = 0;
  for (const auto& c : cases) failures += c.failure.empty() ? 0 : 1;
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"" + esc(suite) + "\" tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
       std::to_string(failures) + "\" time=\"" + secs(seconds) + "\">\n";
  x += "  <testsuite name=\"" + esc(suite) + "\" tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
       std::to_string(failures) + "\" errors=\"0\" skipped=\"0\" time=\"" + secs(seconds) + "\">\n";
  for (const auto& c : cases) {
    x += "    <testcase classname=\"" + esc(c.classname) + "\" name=\"" + esc(c.name) + "\" time=\"" + secs(c.seconds) +
         "\"";
    if (c.failure.empty()) {
      x += "/>\n";
      continue;
    }
    x += ">\n      <failure message=\"" + esc(c.failure) + "\" type=\"" + esc(c.type) + "\">" + esc(c.detail) +
         "</failure>\n    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

namespace detail {

using nlohmann::json;

std::string Runner::seconds_text(double s) {
  std::ostringstream t;
  t.setf(std::ios::fixed);
  t.precision(s < 10 ? 2 : 1);
  t << s;
  return t.str();
}

std::string Runner::severity_counts() const {
  std::map<attention::Severity, std::int64_t> counts;
  for (const auto& [sig, g] : groups_) ++counts[g.consequence.severity];
  std::string text;
  // Worst first, as a reader triages.
  for (auto it = counts.rbegin(); it != counts.rend(); ++it) {
    text += (text.empty() ? "" : ", ") + std::string(to_string(it->first)) + " " + std::to_string(it->second);
  }
  return text;
}

std::vector<std::string> shown_members(const Group& g) {
  std::vector<std::string> ids = g.members;
  if (!g.smallest.id.empty() && std::find(ids.begin(), ids.end(), g.smallest.id) == ids.end()) {
    ids.push_back(g.smallest.id);
  }
  return ids;
}

void Runner::report_group(const Group& g, std::size_t n, const Failure& f) {
  out_ << "group " << n << " of " << groups_.size() << ": " << g.signature << ": " << g.count
       << (g.count == 1 ? " case" : " cases") << " (";
  bool first = true;
  for (const auto& [cat, k] : g.categories) {
    out_ << (first ? "" : ", ") << cat << " " << k;
    first = false;
  }
  out_ << "), e.g.";
  const std::vector<std::string> shown = shown_members(g);
  for (std::size_t k = 0; k < shown.size(); ++k) {
    // The smallest member, when it is not among the first ones, after "...".
    out_ << (k == g.members.size() ? " ... " : " ") << shown[k];
  }
  out_ << (g.count > static_cast<std::int64_t>(shown.size()) && shown.size() == g.members.size() ? " ...\n" : "\n");
  if (g.kinds.size() > 1) {
    // One root cause seen as several kinds of difference (a length here, a value there).
    out_ << "  differences:";
    first = true;
    for (const auto& [kind, k] : g.kinds) {
      out_ << (first ? " " : ", ") << (kind.empty() ? "other" : kind) << " " << k;
      first = false;
    }
    out_ << "\n";
  }
  const std::string& origin = g.shrink_origin.empty() ? g.smallest.id : g.shrink_origin;
  out_ << "  smallest member " << g.smallest.id;
  // Shrinking starts from the smallest member of the worst consequence.
  if (origin != g.smallest.id) out_ << "; the worst consequence is member " << origin << "'s";
  out_ << " [" << f.category << "], "
       << (g.shrink_origin_hung || (g.shrink_origin.empty() && g.smallest_hung) ? "not shrunk (the port hung on it)"
           : !breaker_.empty()                                                  ? "not shrunk (the run stopped)"
           : f.id != origin                                                     ? "shrunk to " + f.id
                            : std::string("shrunk: no smaller case fails alike"))
       << "\n  first difference: " << f.diff << "\n"
       << g.explanation;
  if (o_.consequences)
    out_ << "  " << g.consequence.line << " [" << to_string(g.consequence.severity) << "; worst of " << g.judged
         << (g.judged == 1 ? " member" : " members") << " judged]\n";
  out_ << g.minimal_line;
}

std::string Runner::show_minimal(const Failure& f) {
  const std::string what = f.steps.empty() ? "case" : "session";
  const std::string text = with_runs(f.minimal_json());
  const auto save = [&](const std::string& dir) {
    std::string path = dir + "/" + f.id + ".json";
    std::ofstream file(path);
    file << text << "\n";
    file.close();
    if (file) return path;
    err_ << "conform: cannot write " << path << "\n";
    write_failed_ = true;
    return std::string();
  };
  std::string saved = o_.save_failures.empty() ? "" : save(o_.save_failures);
  if (text.size() <= kPrintedCaseBytes) {
    return "  minimal " + what + ": " + text + "\n" + (saved.empty() ? "" : "  saved: " + saved + "\n");
  }
  if (saved.empty() && !write_failed_) {
    if (auto_save_dir_.empty()) {
      std::error_code ec;
      std::string pattern = (std::filesystem::temp_directory_path(ec) / "seqpack-conform-XXXXXX").string();
      if (!ec && mkdtemp(pattern.data()) != nullptr) auto_save_dir_ = pattern;
    }
    if (!auto_save_dir_.empty()) saved = save(auto_save_dir_);
  }
  return "  minimal " + what + ": " + std::to_string(text.size()) + " bytes in the runs encoding, more than " +
         std::to_string(kPrintedCaseBytes) + " to print; " +
         (saved.empty() ? std::string("not saved (no writable directory)") : "saved: " + saved) + "\n";
}

void Runner::progress() {
  const double s = seconds();
  if (o_.progress) {
    err_ << "\rcases " << ran_ << "  " << static_cast<std::int64_t>(s > 0 ? ran_ / s : 0) << "/s  failures "
         << unexpected_ + known_failures_ << " in " << groups_.size() << " groups   " << std::flush;
    return;
  }
  if (o_.progress_every_s <= 0 || s - last_progress_s_ < o_.progress_every_s) return;
  last_progress_s_ = s;
  err_ << "progress: " << seconds_text(s) << " s, " << ran_ << " cases, "
       << static_cast<std::int64_t>(s > 0 ? ran_ / s : 0) << " cases/s, " << unexpected_ << " unexpected failures in "
       << groups_.size() << " groups, " << known_failures_ << " known\n"
       << std::flush;
}

int Runner::summary() {
  const double s = seconds();
  std::vector<std::string> now_passing, not_seen;
  for (const auto& k : known_) {
    if (!seen_keys_.count(entry_parts(k).first))
      not_seen.push_back(k);
    else if (!failed_keys_.count(k) && !stop_)  // a run stopped early proves no entry passes
      now_passing.push_back(k);
  }
  out_ << "port: " << printable(port_.name(), 300) << " (views: ";
  for (std::size_t i = 0; i < port_.views().size(); ++i) out_ << (i ? ", " : "") << port_.views()[i];
  out_ << "; encoding: " << (port_.encoding() == Encoding::runs ? "runs" : "plain") << ")\n";
  out_ << "case mix:";
  for (const auto& [cat, n] : mix_) out_ << " " << cat << "=" << n;
  out_ << "\n";
  for (const auto& k : now_passing) {
    out_ << "NOW PASSES (remove from the known failures): " << printable(k, 300) << "\n";
  }
  for (const auto& k : not_seen) out_ << "note: known failure not exercised in this run: " << printable(k, 300) << "\n";
  if (!groups_.empty()) {
    out_ << "failure groups: " << groups_.size() << " (first verdict after " << seconds_text(first_verdict_s_) << " s)"
         << (stop_ && breaker_.empty() && hang_stop_.empty()
                 ? ", run stopped at --max-failures " + std::to_string(o_.max_failures)
                 : "");
    if (past_stop_ > 0) out_ << "; " << past_stop_ << " failures of other signatures in the last batch, not grouped";
    if (o_.consequences) out_ << "; by severity (" << attention::describe(o_.consumer) << "): " << severity_counts();
    out_ << "\n";
    std::size_t n = 0;
    for (const std::string& sig : group_order_) {
      const Group& g = groups_.at(sig);
      out_ << "  " << ++n << ". " << sig << ": " << g.count << (g.count == 1 ? " case" : " cases") << ", smallest "
           << g.smallest.id;
      if (g.shrunk && g.shrunk->id != g.smallest.id) out_ << ", shrunk to " << g.shrunk->id;
      if (o_.consequences) out_ << ", " << to_string(g.consequence.severity);
      out_ << "\n";
    }
  }
  if (!breaker_.empty()) out_ << "verdict: " << breaker_ << "; the run stopped\n";
  if (!hang_stop_.empty()) out_ << "verdict: " << hang_stop_ << "; the run stopped, the rest unchecked\n";
  const bool required_checked = report_features();
  out_ << "conform: " << ran_ << " cases (" << vectors_ << " vectors) in " << s << " s, "
       << static_cast<std::int64_t>(s > 0 ? ran_ / s : 0) << " cases/s; " << unexpected_ << " unexpected failures in "
       << groups_.size() << " groups, " << known_failures_ << " known failures, " << now_passing.size()
       << " now passing, " << crashes_ << " crashes or hangs";
  // Those of batches another port was answering when the run stopped: they
  // happened (the port is as hostile as that), but one port would not have
  // been asked, so they are named apart and the verdict stays the same at
  // any --jobs.
  if (cancelled_crashes_ > 0) out_ << " (and " << cancelled_crashes_ << " in batches cancelled at the stop)";
  if (o_.shard_count > 1) out_ << "; shard " << o_.shard_index << "/" << o_.shard_count;
  out_ << "\n";
  if (!o_.report.empty()) {
    json r = {{"port", port_.name()},
              {"command", o_.port},
              {"profiles", profile_names()},
              {"seed", o_.seed},
              {"shard", {o_.shard_index, o_.shard_count}},
              {"cases", ran_},
              {"vectors", vectors_},
              {"seconds", s},
              {"first_verdict_seconds", first_verdict_s_ < 0 ? json() : json(first_verdict_s_)},
              {"cases_per_second", s > 0 ? ran_ / s : 0},
              {"unexpected_failures", unexpected_},
              {"known_failures", known_failures_},
              {"known_failure_hits", known_hits_},
              {"known_seen", json::array()},
              {"known_failed", failed_keys_},
              {"stopped_early", stop_},
              {"circuit_breaker", breaker_.empty() ? json() : json(breaker_)},
              {"max_hangs_stop", hang_stop_.empty() ? json() : json(hang_stop_)},
              {"now_passing", now_passing},
              {"crashes_or_hangs", crashes_},
              {"case_mix", mix_},
              {"features", json::object()},
              {"not_checked_options", undeclared_options_},
              {"skipped", skipped_},
              {"run_without", projected_},
              {"required_features_checked", required_checked},
              {"groups", json::array()}};
    for (const auto& [feature, counts] : features_) {
      r["features"][feature] = {{"checked", counts.first}, {"failing", counts.second}};
    }
    if (o_.consequences) {
      r["consumer"] = attention::describe(o_.consumer);
      json by_severity = json::object();
      for (const auto& [sig, g] : groups_) {
        const char* name = to_string(g.consequence.severity);
        by_severity[name] = by_severity.value(name, 0) + 1;
      }
      r["groups_by_severity"] = by_severity;
    }
    for (const auto& k : known_) {
      if (seen_keys_.count(entry_parts(k).first)) r["known_seen"].push_back(k);
    }
    for (const std::string& sig : group_order_) {
      const Group& g = groups_.at(sig);
      const Failure& f = *g.shrunk;
      r["groups"].push_back({{"signature", sig},
                             {"count", g.count},
                             {"members", shown_members(g)},
                             {"categories", g.categories},
                             {"kinds", g.kinds},
                             {"smallest", g.smallest.id},
                             {"id", f.id},
                             {"category", f.category},
                             {"diff", f.diff},
                             {"explanation", g.explanation},
                             {"severity", o_.consequences ? json(to_string(g.consequence.severity)) : json()},
                             {"consequence", o_.consequences ? json(g.consequence.line) : json()},
                             {"consequence_members_judged", o_.consequences ? json(g.judged) : json()},
                             {"consequence_of", o_.consequences ? json(g.worst_member) : json()},
                             {f.steps.empty() ? "case" : "session", json::parse(f.minimal_json())}});
    }
    std::ofstream file(o_.report);
    file << r.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    file.close();
    if (!file) {
      err_ << "conform: --report: cannot write " << o_.report << "\n";
      return 2;
    }
  }
  if (!o_.junit.empty()) write_junit(s);
  if (write_failed_) return 2;
  return unexpected_ == 0 && now_passing.empty() && breaker_.empty() && hang_stop_.empty() && required_checked ? 0 : 1;
}

void Runner::write_junit(double s) {
  std::vector<JUnitCase> cases;
  for (const auto& [family, stats] : families_) {
    JUnitCase c{"vectors", family + " (" + std::to_string(stats.first) + " vectors)", "", "", 0};
    std::string ids;
    const std::size_t failing = stats.second.size();
    for (std::size_t k = 0; k < failing && k < 10; ++k) ids += (k ? " " : "") + stats.second[k];
    if (failing > 0) {
      c.failure = std::to_string(failing) + " of " + std::to_string(stats.first) + " vectors fail";
      c.detail = "failing vectors (first ten): " + ids;
    }
    cases.push_back(c);
  }
  std::size_t n = 0;
  for (const std::string& sig : group_order_) {
    const Group& g = groups_.at(sig);
    const Failure& f = *g.shrunk;
    JUnitCase c{"failure-groups", "group " + std::to_string(++n) + ": " + sig, "", "", 0};
    c.failure = std::to_string(g.count) + " cases: " + f.diff;
    std::string members;
    for (const auto& id : shown_members(g)) members += " " + id;
    c.detail = "members:" + members + "\nsmallest member: " + g.smallest.id +
               (f.id != g.smallest.id ? ", shrunk to " + f.id : std::string()) + "\nfirst difference: " + f.diff +
               "\n" + g.explanation;
    if (o_.consequences) {
      c.type = to_string(g.consequence.severity);
      c.failure = "[" + c.type + "] " + c.failure;
      c.detail += g.consequence.line + "\n";
    }
    c.detail += g.minimal_line.substr(2);
    cases.push_back(c);
  }
  if (!breaker_.empty()) {
    // The circuit breaker's verdict: the run stopped, the rest unchecked.
    JUnitCase c{"port", "circuit breaker", breaker_.substr(0, breaker_.find(" (")), breaker_ + "\n", 0};
    cases.push_back(c);
  }
  if (!hang_stop_.empty()) {
    JUnitCase c{"port", "max hangs", hang_stop_.substr(0, hang_stop_.find(" (")), hang_stop_ + "\n", 0};
    cases.push_back(c);
  }
  JUnitCase random{"random", std::to_string(ran_ - vectors_) + " random cases", "", "", s};
  cases.push_back(random);
  std::ofstream out(o_.junit);
  out << junit_xml("seqpack conform: " + port_.name(), cases, s);
  if (!out) {
    err_ << "conform: --junit: cannot write " << o_.junit << "\n";
    write_failed_ = true;
  }
}

std::vector<std::string> Runner::profile_names() const {
  std::vector<std::string> names;
  if (!o_.exhaustive.empty()) return {"exhaustive:" + o_.exhaustive};
  for (const sp::Profile p : o_.profiles) names.emplace_back(p == sp::Profile::packer ? "packer" : "strict");
  return names;
}

}  // namespace detail
}  // namespace seqpack::conformance
