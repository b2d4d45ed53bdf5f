// Grouping failures: case labels and vector families (verdict.hpp; the
// signatures are in signature.cpp), the known-failures entries, and the Runner's record of each
// verdict. The Runner class is declared in runner_internal.hpp; the case loop
// is in runner.cpp, shrinking in shrink.cpp, reporting (and JUnit XML) in
// report.cpp.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "runner_internal.hpp"
#include "seqpack/conformance/verdict.hpp"
#include "seqpack/protocol/limits.hpp"

namespace seqpack::conformance {

// The runner speaks the protocol's vocabulary (seqpack/protocol/).
using namespace seqpack::protocol;  // NOLINT(google-build-using-namespace)

std::string case_label(const Case& c, const std::string& expect) {
  if (!c.expect_error.empty()) return c.fault.empty() ? c.expect_error : c.expect_error + "/" + c.fault;
  if (!expect.empty()) {
    try {
      const nlohmann::json r = nlohmann::json::parse(expect);
      if (r.is_object() && r.value("type", "") == "result" && r.value("ok", true) == false && r.contains("error") &&
          r["error"].is_string())
        return r["error"].get<std::string>();
    } catch (const nlohmann::json::exception&) {
      // an unreadable expectation labels nothing
    }
  }
  return "valid";
}

std::string vector_family(const std::string& id) {
  // Worked examples: a capital letter and a number (E1, E3b).
  if (id.size() >= 2 && std::isupper(static_cast<unsigned char>(id[0])) != 0 &&
      std::isdigit(static_cast<unsigned char>(id[1])) != 0)
    return "worked-example-" + id.substr(0, 1);
  const auto dash = id.find('-');
  return dash == std::string::npos ? id : id.substr(0, dash);
}

namespace detail {
namespace {

// A failing case's size, to pick each group's smallest member: its tokens
// and samples (a session's, summed).
std::int64_t case_size(const Pending& p) {
  std::int64_t size = 0;
  const auto add = [&](const sp::Case& c) {
    for (const std::int64_t v : c.layout.split_lens) size += std::clamp<std::int64_t>(v, 0, std::int64_t{1} << 40);
    size += static_cast<std::int64_t>(c.layout.sample_lens.size());
  };
  if (p.steps.empty()) add(p.c);
  for (const auto& c : p.steps) add(c);
  return size;
}

std::vector<std::string> keys_of(const Pending& p) {
  std::vector<std::string> keys{category_of(p)};
  if (p.vector) keys.push_back("vector:" + p.id);
  return keys;
}

bool entry_covers(const std::string& entry, const std::vector<std::string>& keys, const std::string& diff,
                  bool answered) {
  const auto [key, field] = entry_parts(entry);
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) return false;
  // A case the port gave no answer to (a crash, a hang, a line past the
  // limit) is covered by `KEY @port` alone; `@port` covers no answer.
  if (!answered || field == "port") return !answered && field == "port";
  if (field.empty()) return true;
  // A session's difference names its step first: "session step N: FIELD...".
  std::string at = diff;
  if (at.rfind("session step ", 0) == 0 && at.find(": ") != std::string::npos) at.erase(0, at.find(": ") + 2);
  return at.rfind(field, 0) == 0 &&
         (at.size() == field.size() || std::string(".[:").find(at[field.size()]) != std::string::npos);
}

}  // namespace

std::pair<std::string, std::string> entry_parts(const std::string& entry) {
  const auto at = entry.find(" @");
  if (at == std::string::npos) return {entry, ""};
  std::string key = entry.substr(0, at);
  key.erase(key.find_last_not_of(" \t") + 1);
  return {key, entry.substr(at + 2)};
}

std::set<std::string> read_known(const std::string& path) {
  std::set<std::string> known;
  if (path.empty()) return known;
  std::ifstream in(path);
  std::error_code ec;
  if (!in || !std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error("--known-failures: " + printable(path, 300) + " is not a readable file");
  }
  // Bounded before anything is read (PROTOCOL.md, "Known failures"): a list
  // is a few hundred lines, and every entry may be printed in the summary.
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxKnownFailuresBytes) {
    throw std::runtime_error(
        "--known-failures: " + printable(path, 300) + ": " + (ec ? ec.message() : std::to_string(size) + " bytes") +
        ", more than a known-failures file may hold (" + std::to_string(kMaxKnownFailuresBytes) + " bytes)");
  }
  std::string line;
  std::size_t too_long = 0;
  while (read_line_bounded(in, line, kMaxLineBytes, &too_long)) {
    if (too_long)
      throw std::runtime_error("--known-failures: " + path + ": a line exceeds the limit of " +
                               std::to_string(kMaxLineBytes) + " bytes");
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    const auto [key, field] = entry_parts(line);
    if (key.empty() || (line.find(" @") != std::string::npos && field.empty())) {
      std::string why = "--known-failures: " + path;
      why += ": entry \"";
      why += printable(line, 300);
      why += "\": expected KEY or KEY @FIELD";
      throw std::runtime_error(why);
    }
    known.insert(line);
    if (known.size() > kMaxKnownFailures) {
      throw std::runtime_error("--known-failures: " + printable(path, 300) + ": more than " +
                               std::to_string(kMaxKnownFailures) + " entries");
    }
  }
  return known;
}

std::string category_of(const Pending& p) {
  if (!p.steps.empty()) return "session";
  return case_label(p.c, p.vector ? p.expect : std::string());
}

void Runner::record(Pending& p, const std::string& diff, bool hung, bool answered) {
  ++ran_;
  const std::string cat = category_of(p);
  mix_[cat]++;
  const auto keys = keys_of(p);
  for (const auto& k : keys) seen_keys_.insert(k);
  if (p.vector) {
    ++vectors_;  // counted when run: a run the circuit breaker stops runs fewer
    ++families_[vector_family(p.id)].first;
  }
  if (diff.empty()) {
    count_features(p, false);
    return;
  }
  bool known = false;
  for (const auto& entry : known_) {
    if (entry_covers(entry, keys, diff, answered)) {
      known = true;
      failed_keys_.insert(entry);
      known_hits_[entry]++;
    }
  }
  count_features(p, !known);
  if (known) {
    ++known_failures_;
    return;
  }
  ++unexpected_;
  if (p.vector) families_[vector_family(p.id)].second.push_back(p.id);
  const std::string sig = failure_signature(diff);
  auto it = groups_.find(sig);
  if (it == groups_.end() && stop_) {
    // A new fault in the batch that was in flight when --max-failures
    // stopped the run: counted, not grouped.
    ++past_stop_;
    return;
  }
  if (it == groups_.end()) {
    if (first_verdict_s_ < 0) first_verdict_s_ = seconds();
    it = groups_.emplace(sig, Group{}).first;
    it->second.signature = sig;
    it->second.first_s = seconds();
    group_order_.push_back(sig);
    if (o_.progress) err_ << "\n";
    // One block per new fault as soon as it is seen (its first member,
    // unshrunk); the shrunk smallest member follows at the end.
    out_ << "FAIL " << p.id << " [" << cat << "] group " << groups_.size() << ": " << sig << " (after "
         << seconds_text(it->second.first_s) << " s)\n  first difference: " << diff << "\n"
         << std::flush;  // seen as it is found, also by a log or a script reading a pipe
    if (o_.max_failures > 0 && static_cast<std::int64_t>(groups_.size()) >= o_.max_failures) stop_ = true;
  }
  Group& g = it->second;
  const std::int64_t size = case_size(p);
  // The smallest member the port answered, before any it hung on: a case
  // the port hung on is not shrunk (each try would wait the timeout), and
  // the port's failure groups hangs with crashes and unclassified errors.
  if (g.count == 0 || (g.smallest_hung && !hung) || (g.smallest_hung == hung && size < g.smallest_size)) {
    g.smallest = p;
    g.smallest.expect.clear();  // recomputed when shrinking; the line can be megabytes
    g.smallest_diff = diff;
    g.smallest_size = size;
    g.smallest_hung = hung;
  }
  ++g.count;
  // The consequence sample: members 1, 2, 4, 8, ... (a power of two).
  if (o_.consequences && g.sample.size() < kConsequenceSample && (g.count & (g.count - 1)) == 0) {
    Pending kept = p;
    kept.expect.clear();
    g.sample.push_back({std::move(kept), diff, hung, size});
  }
  g.categories[cat]++;
  g.kinds[difference_kind(diff)]++;
  if (g.members.size() < kGroupMembersShown) g.members.push_back(p.id);
}

}  // namespace detail
}  // namespace seqpack::conformance
