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

bool parse_shard(const std::string& text, std::int64_t* index, std::int64_t* count) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() || slash > 6 || text.size() - slash - 1 > 6)
    return false;
  const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
  const auto digits = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  if (!digits(a) || !digits(b)) return false;
  const std::int64_t i = std::stoll(a), n = std::stoll(b);
  if (n < 1 || n > 100000 || i >= n) return false;
  *index = i;
  *count = n;
  return true;
}

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

int run_report_merge(const std::vector<std::string>& files, const std::string& out_file, std::ostream& out,
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
    json r;
    try {
      std::ifstream in(path);
      if (!in) throw std::runtime_error("cannot open it");
      r = json::parse(in);
      for (const char* k : {"cases", "vectors", "unexpected_failures", "known_failures", "crashes_or_hangs"}) {
        merged[k] = merged[k].get<std::int64_t>() + r.at(k).get<std::int64_t>();
      }
      merged["seconds"] = std::max(merged["seconds"].get<double>(), r.at("seconds").get<double>());
      for (const auto& [cat, n] : r.at("case_mix").items()) {
        merged["case_mix"][cat] = merged["case_mix"].value(cat, std::int64_t{0}) + n.get<std::int64_t>();
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
      const json shard = r.value("shard", json::array({0, 1}));
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
        if (merged.contains(k) && merged[k] != r.at(k))
          throw std::runtime_error(std::string(k) + " " + r.at(k).dump() + " differs from " + merged[k].dump());
        merged[k] = r.at(k);
      }
      merged["shards"].push_back({{"file", path}, {"shard", shard}, {"cases", r.at("cases")}});
      for (const auto& g : r.at("groups")) {
        const std::string sig = g.at("signature").get<std::string>();
        const auto it = group_at.find(sig);
        if (it == group_at.end()) {
          group_at[sig] = merged["groups"].size();
          merged["groups"].push_back(g);
          continue;
        }
        json& m = merged["groups"][it->second];
        m["count"] = m["count"].get<std::int64_t>() + g.at("count").get<std::int64_t>();
        for (const auto& id : g.at("members")) {
          if (m["members"].size() < 5) m["members"].push_back(id);
        }
      }
    } catch (const std::exception& e) {
      err << "report merge: " << path << ": " << e.what() << "\n";
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
  const std::int64_t missing = shard_count - static_cast<std::int64_t>(shard_indexes.size());
  if (missing > 0) merged["missing_shards"] = missing;
  out << "report merge: " << files.size() << " reports (shards of " << shard_count << ")";
  if (missing > 0) out << ", " << missing << " shards missing";
  out << "\n";
  std::size_t n = 0;
  for (const auto& g : merged["groups"]) {
    out << "  " << ++n << ". " << g["signature"].get<std::string>() << ": " << g["count"] << " cases, smallest "
        << g.value("id", "") << "\n     first difference: " << g.value("diff", "") << "\n";
  }
  for (const auto& k : now_passing) out << "NOW PASSES (remove from the known failures): " << k << "\n";
  if (!breaker.empty()) out << "verdict: " << breaker << "; that shard's run stopped\n";
  if (!hang_stop.empty()) out << "verdict: " << hang_stop << "; that shard's run stopped\n";
  out << "merged: " << merged["cases"] << " cases (" << merged["vectors"] << " vectors); "
      << merged["unexpected_failures"] << " unexpected failures in " << merged["groups"].size() << " groups, "
      << merged["known_failures"] << " known failures, " << now_passing.size() << " now passing, "
      << merged["crashes_or_hangs"] << " crashes or hangs\n";
  if (!out_file.empty()) {
    std::ofstream f(out_file);
    f << merged.dump(2) << "\n";
    if (!f) {
      err << "report merge: cannot write " << out_file << "\n";
      return 2;
    }
  }
  const bool bad = merged["unexpected_failures"].get<std::int64_t>() > 0 || !now_passing.empty() || missing > 0 ||
                   !breaker.empty() || !hang_stop.empty();
  return bad ? 1 : 0;
}

}  // namespace seqpack::cli
