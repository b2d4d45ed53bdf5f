// The verdict commands (verdict.hpp).
#include "verdict.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "seqpack/conformance/port.hpp"
#include "seqpack/conformance/verdict.hpp"
#include "seqpack/protocol/case_json.hpp"
#include "seqpack/protocol/consequence.hpp"
#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "seqpack/protocol/render.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::cli {
namespace {

namespace sc = seqpack::conformance;
namespace sp = seqpack::protocol;
namespace ref = seqpack::reference;
using nlohmann::json;

/// Bytes a case file may hold.
constexpr std::uintmax_t kMaxCaseFileBytes = std::uintmax_t{64} << 20;

// A case file: a case line, or a session (PROTOCOL.md, "Sessions").
struct CaseFile {
  std::string id;
  sp::Case c;
  std::vector<sp::Case> steps;  // a session's cases
};

CaseFile read_case_file(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error("cannot read " + path + ": " + ec.message());
  if (size > kMaxCaseFileBytes) {
    throw std::runtime_error(path + ": " + std::to_string(size) + " bytes, more than a case file may hold (" +
                             std::to_string(kMaxCaseFileBytes) + ")");
  }
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  // Within the protocol's JSON limits (depth, values, UTF-8, repeated keys).
  const json j = sp::parse_json(text.str(), path);
  if (!j.is_object()) throw std::runtime_error(path + ": expected a JSON object");
  CaseFile f;
  // A saved case may write its layout's lists as runs; all of them together
  // expand to at most the values a plain case file could hold.
  std::size_t runs_budget = sp::kMaxJsonValues;
  const auto id_of = [&](const json& o) {
    if (!o.contains("id")) return std::filesystem::path(path).stem().string();
    if (!o["id"].is_string()) throw std::runtime_error(path + ": id: expected a string, got " + o["id"].dump());
    return o["id"].get<std::string>();
  };
  try {
    if (j.value("type", "") == "session") {
      f.id = id_of(j);
      if (!j.contains("cases") || !j["cases"].is_array() || j["cases"].empty())
        throw std::runtime_error("cases: expected a non-empty array of cases");
      for (const auto& step : j["cases"]) f.steps.push_back(sp::case_from_json_value(step, &runs_budget));
      f.c = f.steps.front();
    } else {
      f.id = id_of(j);
      f.c = sp::case_from_json_value(j, &runs_budget);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return f;
}

std::vector<std::string> case_files(const std::string& path) {
  if (!std::filesystem::is_directory(path)) return {path};
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(path)) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

void render_case(std::ostream& out, const sp::Case& c, const std::string& id) {
  out << "case " << id << " [" << sc::case_label(c) << "]\n";
  sp::render_case_body(out, c);
}

int run_oracle_case(const std::string& path, std::ostream& out, std::ostream& err) {
  CaseFile f;
  try {
    f = read_case_file(path);
  } catch (const std::exception& e) {
    err << "oracle: " << e.what() << "\n";
    return 2;
  }
  out << path << "\n";
  if (f.steps.empty()) {
    render_case(out, f.c, f.id);
    out << "result: " << sp::result_line(f.c, f.id, sp::views_for(f.c, sp::oracle_views())) << "\n";
    return 0;
  }
  for (std::size_t k = 0; k < f.steps.size(); ++k) render_case(out, f.steps[k], f.id + "/" + std::to_string(k));
  out << "result: " << sp::session_line(f.steps, f.id, sp::views_for(f.steps, sp::oracle_views())) << "\n";
  return 0;
}

int run_replay(const std::vector<std::string>& paths, const std::string& port_command, double timeout_s,
               bool offer_runs, const attention::ConsumerOptions& consumer, std::ostream& out, std::ostream& err) {
  std::vector<CaseFile> cases;
  try {
    for (const auto& p : paths) {
      for (const auto& file : case_files(p)) cases.push_back(read_case_file(file));
    }
  } catch (const std::exception& e) {
    err << "replay: " << e.what() << "\n";
    return 2;
  }
  if (cases.empty()) {
    err << "replay: no case files (*.json) in the paths given\n";
    return 2;
  }
  sc::Port port(port_command, timeout_s, offer_runs);
  std::string why;
  if (!port.start(&why)) {
    err << "replay: cannot start the port '" << port_command << "': " << why << "\n";
    return 2;
  }
  int failed = 0;
  for (const CaseFile& f : cases) {
    if (!port.running() && !port.start(&why)) {
      err << "replay: the port does not restart: " << why << "\n";
      return 2;
    }
    const bool session = !f.steps.empty();
    const std::vector<std::string> views =
        session ? sp::views_for(f.steps, port.views()) : sp::views_for(f.c, port.views());
    const std::string request =
        session ? sp::session_request_line(f.steps, f.id, views) : sp::request_line(f.c, f.id, views);
    const std::string expect = session ? sp::session_line(f.steps, f.id, views, port.encoding())
                                       : sp::result_line(f.c, f.id, views, port.encoding());
    const auto answers = port.exchange({request}, &why);
    const std::string diff = answers.empty() ? why : sp::first_difference(expect, answers[0], views);
    if (diff.empty()) {
      out << "PASS " << f.id << "\n";
    } else {
      ++failed;
      out << "FAIL " << f.id << ": " << sc::failure_signature(diff) << "\n  first difference: " << diff << "\n";
      if (!session) out << sc::explain_difference(f.c, diff, "  ");
      const attention::Verdict v =
          sp::consequence_of(f.c, f.steps, expect, answers.empty() ? std::string() : answers[0], consumer);
      out << "  " << v.line << " [" << attention::to_string(v.severity) << "]\n";
    }
    out << "the reference's pack:\n";
    if (!session) render_case(out, f.c, f.id);
    for (std::size_t k = 0; k < f.steps.size(); ++k) render_case(out, f.steps[k], f.id + "/" + std::to_string(k));
  }
  out << "replay: " << cases.size() << " cases, " << failed << " failing, port " << port.name() << "\n";
  return failed == 0 ? 0 : 1;
}

namespace {

/// Bytes a report file may hold (a report of 100,000 groups is about 60 MB).
constexpr std::uintmax_t kMaxReportBytes = std::uintmax_t{256} << 20;

// A file name as reports and messages show it: printable, not UTF-8 bytes as \xNN.
std::string shown_path(const std::string& path) { return sp::printable(path, 300); }

// A report's member `k`: a non-negative int64 integer (the protocol's
// integers: no fraction, no exponent; PROTOCOL.md "Numbers").
std::int64_t count_member(const json& r, const char* k) {
  const auto it = r.find(k);
  if (it == r.end()) throw std::runtime_error(std::string(k) + ": missing");
  const bool int64 = it->is_number_integer() && !(it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX);
  if (!int64 || it->get<std::int64_t>() < 0) {
    throw std::runtime_error(std::string(k) + ": expected a count (an integer >= 0), got " +
                             sp::printable(it->dump(), 80));
  }
  return it->get<std::int64_t>();
}

// a + b, refused past int64.
std::int64_t add_counts(std::int64_t a, std::int64_t b, const std::string& what) {
  if (b > INT64_MAX - a) throw std::runtime_error(what + ": the sum over the reports passes int64");
  return a + b;
}

const json& member_of(const json& r, const char* k, bool (json::*is)() const noexcept, const char* type) {
  const auto it = r.find(k);
  if (it == r.end() || !((*it).*is)()) {
    throw std::runtime_error(std::string(k) + ": expected " + type +
                             (it == r.end() ? ", missing" : ", got " + sp::printable(it->dump(), 80)));
  }
  return *it;
}

// One report checked against the schema `seqpack conform --report` writes
// and against its own arithmetic (PROTOCOL.md, "Merging reports"); the
// message names the member and the value.
void validate_report(const json& r) {
  if (!r.is_object()) throw std::runtime_error("expected a JSON object (a report of seqpack conform --report)");
  const std::int64_t cases = count_member(r, "cases"), vectors = count_member(r, "vectors"),
                     unexpected = count_member(r, "unexpected_failures"), known = count_member(r, "known_failures");
  (void)count_member(r, "crashes_or_hangs");
  if (vectors > cases) {
    throw std::runtime_error("vectors: " + std::to_string(vectors) + " of " + std::to_string(cases) + " cases");
  }
  if (unexpected > cases - known) {
    throw std::runtime_error("unexpected_failures " + std::to_string(unexpected) + " and known_failures " +
                             std::to_string(known) + " pass the " + std::to_string(cases) + " cases");
  }
  const json& seconds = member_of(r, "seconds", &json::is_number, "seconds >= 0");
  if (!(seconds.get<double>() >= 0) || seconds.get<double>() > 1e12) {
    throw std::runtime_error("seconds: expected seconds >= 0, got " + seconds.dump());
  }
  std::int64_t mix = 0;
  for (const auto& [cat, n] : member_of(r, "case_mix", &json::is_object, "an object of counts").items()) {
    mix = add_counts(mix, count_member(json{{cat, n}}, cat.c_str()), "case_mix");
  }
  if (mix != cases) {
    throw std::runtime_error("case_mix: its counts add up to " + std::to_string(mix) + ", not the " +
                             std::to_string(cases) + " cases");
  }
  const json& shard = member_of(r, "shard", &json::is_array, "[index, count]");
  if (shard.size() != 2)
    throw std::runtime_error("shard: expected [index, count], got " + sp::printable(shard.dump(), 80));
  const std::int64_t index = count_member(json{{"shard[0]", shard[0]}}, "shard[0]"),
                     count = count_member(json{{"shard[1]", shard[1]}}, "shard[1]");
  if (count < 1 || count > 100000 || index >= count) {
    throw std::runtime_error("shard: " + std::to_string(index) + "/" + std::to_string(count) +
                             " is not a shard (index in [0, count), count in [1, 100000])");
  }
  member_of(r, "port", &json::is_string, "a string");
  member_of(r, "profiles", &json::is_array, "an array");
  member_of(r, "seed", &json::is_number_integer, "an integer");
  std::int64_t grouped = 0;
  const json& groups = member_of(r, "groups", &json::is_array, "an array of groups");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const json& g = groups[i];
    const std::string at = "groups[" + std::to_string(i) + "]";
    try {
      if (!g.is_object()) throw std::runtime_error("expected an object");
      member_of(g, "signature", &json::is_string, "a string");
      const std::int64_t n = count_member(g, "count");
      if (n < 1) throw std::runtime_error("count: expected at least 1, got 0");
      const json& members = member_of(g, "members", &json::is_array, "an array of case ids");
      if (members.empty() || static_cast<std::int64_t>(members.size()) > n ||
          !std::all_of(members.begin(), members.end(), [](const json& m) { return m.is_string(); })) {
        throw std::runtime_error("members: expected 1 to " + std::to_string(n) + " case ids, got " +
                                 sp::printable(members.dump(), 80));
      }
      grouped = add_counts(grouped, n, "groups");
    } catch (const std::exception& e) {
      throw std::runtime_error(at + "." + e.what());
    }
  }
  if (grouped > unexpected) {
    throw std::runtime_error("groups: " + std::to_string(grouped) + " cases in groups, but unexpected_failures is " +
                             std::to_string(unexpected));
  }
  for (const char* k : {"known_seen", "known_failed"}) {
    if (!r.contains(k)) continue;
    const json& list = member_of(r, k, &json::is_array, "an array of strings");
    if (!std::all_of(list.begin(), list.end(), [](const json& m) { return m.is_string(); })) {
      throw std::runtime_error(std::string(k) + ": expected an array of strings");
    }
  }
  for (const char* k : {"circuit_breaker", "max_hangs_stop"}) {
    if (r.contains(k) && !r[k].is_null() && !r[k].is_string()) {
      throw std::runtime_error(std::string(k) + ": expected null or a string, got " + sp::printable(r[k].dump(), 80));
    }
  }
  if (r.contains("stopped_early") && !r["stopped_early"].is_boolean()) {
    throw std::runtime_error("stopped_early: expected a boolean");
  }
}

json read_report(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error("not a readable file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error("cannot read it: " + ec.message());
  if (size > kMaxReportBytes) {
    throw std::runtime_error(std::to_string(size) + " bytes, more than a report may hold (" +
                             std::to_string(kMaxReportBytes) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open it");
  std::stringstream text;
  text << in.rdbuf();
  // The protocol's limits on any JSON text: nesting, values, UTF-8, repeated keys.
  json r = sp::parse_json(text.str(), "the report", std::max<std::size_t>(sp::kMaxJsonValues, size / 2));
  validate_report(r);
  return r;
}

int merge_reports(const std::vector<std::string>& files, const std::string& out_file, std::ostream& out,
                  std::ostream& err) {
  json merged = {{"cases", 0},
                 {"vectors", 0},
                 {"seconds", 0.0},
                 {"unexpected_failures", 0},
                 {"known_failures", 0},
                 {"crashes_or_hangs", 0},
                 {"case_mix", json::object()},
                 {"shards", json::array()},
                 {"groups", json::array()}};
  std::set<std::string> known_seen, known_failed;
  std::map<std::string, std::size_t> group_at;  // signature -> index in merged["groups"]
  std::set<std::int64_t> shard_indexes;
  std::int64_t shard_count = -1;
  bool stopped = false;
  std::string breaker, hang_stop;
  for (const auto& path : files) {
    try {
      const json r = read_report(path);
      for (const char* k : {"cases", "vectors", "unexpected_failures", "known_failures", "crashes_or_hangs"}) {
        merged[k] = add_counts(merged[k].get<std::int64_t>(), r.at(k).get<std::int64_t>(), k);
      }
      merged["seconds"] = std::max(merged["seconds"].get<double>(), r.at("seconds").get<double>());
      for (const auto& [cat, n] : r.at("case_mix").items()) {
        merged["case_mix"][cat] =
            add_counts(merged["case_mix"].value(cat, std::int64_t{0}), n.get<std::int64_t>(), "case_mix");
      }
      for (const auto& k : r.value("known_seen", json::array())) known_seen.insert(k.get<std::string>());
      for (const auto& k : r.value("known_failed", json::array())) known_failed.insert(k.get<std::string>());
      stopped = stopped || r.value("stopped_early", false);
      if (r.contains("circuit_breaker") && r["circuit_breaker"].is_string() && breaker.empty()) {
        breaker = r["circuit_breaker"].get<std::string>();  // a shard's port hung or crashed on every case
      }
      if (r.contains("max_hangs_stop") && r["max_hangs_stop"].is_string() && hang_stop.empty()) {
        hang_stop = r["max_hangs_stop"].get<std::string>();  // a shard's port hung on --max-hangs cases
      }
      const json& shard = r.at("shard");
      const std::int64_t index = shard.at(0).get<std::int64_t>(), count = shard.at(1).get<std::int64_t>();
      if (shard_count >= 0 && count != shard_count) {
        throw std::runtime_error("shard " + std::to_string(index) + "/" + std::to_string(count) + " is not of " +
                                 std::to_string(shard_count) + " shards like the others");
      }
      if (!shard_indexes.insert(index).second) {
        throw std::runtime_error("shard " + std::to_string(index) + " appears twice");
      }
      shard_count = count;
      for (const char* k : {"port", "seed", "profiles"}) {
        if (merged.contains(k) && merged[k] != r.at(k)) {
          throw std::runtime_error(std::string(k) + " " + sp::printable(r.at(k).dump(), 80) + " differs from " +
                                   sp::printable(merged[k].dump(), 80));
        }
        merged[k] = r.at(k);
      }
      merged["shards"].push_back({{"file", shown_path(path)}, {"shard", shard}, {"cases", r.at("cases")}});
      for (const auto& g : r.at("groups")) {
        const std::string sig = g.at("signature").get<std::string>();
        const auto it = group_at.find(sig);
        if (it == group_at.end()) {
          group_at[sig] = merged["groups"].size();
          merged["groups"].push_back(g);
          continue;
        }
        json& m = merged["groups"][it->second];
        m["count"] = add_counts(m["count"].get<std::int64_t>(), g.at("count").get<std::int64_t>(), "groups.count");
        for (const auto& id : g.at("members")) {
          if (m["members"].size() < 5) m["members"].push_back(id);
        }
      }
    } catch (const std::exception& e) {
      err << "report merge: " << shown_path(path) << ": " << sp::printable(e.what(), 400) << "\n";
      return 2;
    }
  }
  std::vector<std::string> now_passing;
  if (!stopped) {
    for (const auto& k : known_seen) {
      if (!known_failed.count(k)) now_passing.push_back(k);
    }
  }
  merged["now_passing"] = now_passing;
  merged["stopped_early"] = stopped;
  merged["circuit_breaker"] = breaker.empty() ? json() : json(breaker);
  merged["max_hangs_stop"] = hang_stop.empty() ? json() : json(hang_stop);
  std::vector<std::int64_t> missing;
  for (std::int64_t i = 0; i < shard_count; ++i) {
    if (!shard_indexes.count(i)) missing.push_back(i);
  }
  if (!missing.empty()) merged["missing_shards"] = missing;
  out << "report merge: " << files.size() << " reports (shards of " << shard_count << ")";
  if (!missing.empty()) {
    out << ", " << missing.size() << " shards missing:";
    for (std::size_t k = 0; k < missing.size() && k < 20; ++k) out << " " << missing[k];
    if (missing.size() > 20) out << " ...";
  }
  out << "\n";
  std::size_t n = 0;
  for (const auto& g : merged["groups"]) {
    out << "  " << ++n << ". " << sp::printable(g["signature"].get<std::string>(), 300) << ": " << g["count"]
        << " cases, smallest " << sp::printable(g.value("id", ""), 100)
        << "\n     first difference: " << sp::printable(g.value("diff", ""), 400) << "\n";
  }
  for (const auto& k : now_passing)
    out << "NOW PASSES (remove from the known failures): " << sp::printable(k, 300) << "\n";
  if (!breaker.empty()) out << "verdict: " << sp::printable(breaker, 400) << "; that shard's run stopped\n";
  if (!hang_stop.empty()) out << "verdict: " << sp::printable(hang_stop, 400) << "; that shard's run stopped\n";
  out << "merged: " << merged["cases"] << " cases (" << merged["vectors"] << " vectors); "
      << merged["unexpected_failures"] << " unexpected failures in " << merged["groups"].size() << " groups, "
      << merged["known_failures"] << " known failures, " << now_passing.size() << " now passing, "
      << merged["crashes_or_hangs"] << " crashes or hangs\n";
  if (!out_file.empty()) {
    std::ofstream f(out_file);
    f << merged.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    if (!f) {
      err << "report merge: cannot write " << shown_path(out_file) << "\n";
      return 2;
    }
  }
  const bool bad = merged["unexpected_failures"].get<std::int64_t>() > 0 || !merged["groups"].empty() ||
                   !now_passing.empty() || !missing.empty() || !breaker.empty() || !hang_stop.empty();
  return bad ? 1 : 0;
}

}  // namespace

int run_report_merge(const std::vector<std::string>& files, const std::string& out_file, std::ostream& out,
                     std::ostream& err) {
  // Nothing a report holds may end the merge any other way than exit 2.
  try {
    return merge_reports(files, out_file, out, err);
  } catch (const std::exception& e) {
    err << "report merge: " << sp::printable(e.what(), 400) << "\n";
    return 2;
  }
}

}  // namespace seqpack::cli
