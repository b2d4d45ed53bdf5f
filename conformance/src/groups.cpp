// Grouping failures: signatures, case labels and vector families
// (verdict.hpp), the known-failures entries, and the Runner's record of each
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
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// Digits become '#', so that counts, sizes and seconds do not split a group.
std::string without_numbers(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
      out += '#';
      while (i + 1 < s.size() && (std::isdigit(static_cast<unsigned char>(s[i + 1])) != 0 || s[i + 1] == '.')) ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool word_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '#'; }

// `a.b[3].c[0]` -> `a.b[].c[]`; empty when `s` is not a field path.
std::string field_path(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '[') {
      std::size_t j = i + 1;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) != 0) ++j;
      if (j == i + 1 || j >= s.size() || s[j] != ']') return "";
      out += "[]";
      i = j;
    } else if (std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '.') {
      out += ch;
    } else {
      return "";
    }
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

}  // namespace

std::string cut_at_word(const std::string& s, std::size_t max) {
  if (s.size() <= max) return s;
  const std::string ellipsis = "...";
  // The last word boundary that leaves room for the ellipsis: the text is
  // cut between a word and what follows it, never inside a word. UTF-8
  // continuation bytes are not word characters, but a cut there would split
  // a character: they are skipped like letters.
  std::size_t cut = max > ellipsis.size() ? max - ellipsis.size() : 0;
  while (cut > 0 && (word_char(s[cut]) || (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)) --cut;
  while (cut > 0 && !word_char(s[cut - 1]) && (static_cast<unsigned char>(s[cut - 1]) & 0x80) == 0) --cut;
  if (cut == 0) return s;  // one word longer than `max`: whole, not cut
  return s.substr(0, cut) + ellipsis;
}

namespace {

struct Parsed {
  std::string path;  // the field path, indexes dropped; "" when the difference names no field
  std::string rest;  // what follows "path: "
  std::string text;  // the difference without a session step's prefix
};

Parsed parse_difference(const std::string& diff) {
  Parsed p;
  p.text = diff;
  if (starts_with(p.text, "session step ") && p.text.find(": ") != std::string::npos) {
    p.text = p.text.substr(p.text.find(": ") + 2);
  }
  const auto colon = p.text.find(": ");
  if (colon == std::string::npos) return p;
  p.path = field_path(p.text.substr(0, colon));
  p.rest = p.text.substr(colon + 2);
  return p;
}

}  // namespace

std::string difference_kind(const std::string& diff) {
  const Parsed p = parse_difference(diff);
  if (p.path.empty()) return "";
  const std::string& rest = p.rest;
  if (starts_with(rest, "expected ") && ends_with(rest.substr(0, rest.find(", port ")), " entries") &&
      rest.find(" entries, port ") != std::string::npos) {
    return "length";
  }
  if (rest.find("missing") != std::string::npos) return "missing";
  if (p.path == "ok" || p.path == "error") {
    // The classes (a bounded set) are the kind; the port's message is not.
    std::string kind = rest.substr(0, rest.find(" ("));
    kind.erase(std::remove(kind.begin(), kind.end(), '"'), kind.end());
    return cut_at_word(without_numbers(kind), 100);
  }
  return "value";
}

std::string failure_signature(const std::string& diff) {
  const Parsed p = parse_difference(diff);
  if (p.path.empty()) return cut_at_word(without_numbers(p.text), 100);
  // `ok` and `error` keep their classes: each pair of classes is a fault of
  // its own. Any other field is one root cause, whatever the kind (a wrong
  // value, a wrong length, a missing member), and an entry of a list is the
  // list: `pack.full_only_rows[] (value)` and `pack.full_only_rows (length)`
  // are one group, `pack.full_only_rows`.
  if (p.path == "ok" || p.path == "error") return p.path + " (" + difference_kind(diff) + ")";
  std::string path = p.path;
  while (ends_with(path, "[]")) path.resize(path.size() - 2);
  return path;
}

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

bool entry_covers(const std::string& entry, const std::vector<std::string>& keys, const std::string& diff) {
  const auto [key, field] = entry_parts(entry);
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) return false;
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
  if (!in || !std::filesystem::is_regular_file(path)) {
    throw std::runtime_error("--known-failures: " + path + " is not a readable file");
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
      why += line;
      why += "\": expected KEY or KEY @FIELD";
      throw std::runtime_error(why);
    }
    known.insert(line);
  }
  return known;
}

std::string category_of(const Pending& p) {
  if (!p.steps.empty()) return "session";
  return case_label(p.c, p.vector ? p.expect : std::string());
}

void Runner::record(Pending& p, const std::string& diff, bool hung) {
  ++ran_;
  const std::string cat = category_of(p);
  mix_[cat]++;
  const auto keys = keys_of(p);
  for (const auto& k : keys) seen_keys_.insert(k);
  if (p.vector) {
    ++vectors_;  // counted when run: a run the circuit breaker stops runs fewer
    ++families_[vector_family(p.id)].first;
  }
  if (diff.empty()) return;
  bool known = false;
  for (const auto& entry : known_) {
    if (entry_covers(entry, keys, diff)) {
      known = true;
      failed_keys_.insert(entry);
      known_hits_[entry]++;
    }
  }
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
  if (g.count == 0 || size < g.smallest_size) {
    g.smallest = p;
    g.smallest.expect.clear();  // recomputed when shrinking; the line can be megabytes
    g.smallest_diff = diff;
    g.smallest_size = size;
    g.smallest_hung = hung;
  }
  ++g.count;
  g.categories[cat]++;
  g.kinds[difference_kind(diff)]++;
  if (g.members.size() < kGroupMembersShown) g.members.push_back(p.id);
}

}  // namespace detail
}  // namespace seqpack::conformance
