// Comparing a port's answer with the reference's: first_difference, which
// reads the answer within the limits, expands the runs encoding and names
// the first differing field. The answers are written in results.cpp, the
// oracle is in oracle.cpp.
#include <algorithm>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "views.hpp"
#include "writer.hpp"

namespace seqpack::protocol {
namespace {

using detail::json;
using detail::show;
using detail::wants;

// The first difference between two JSON values, as "path: expected X, port Y".
std::string diff(const json& want, const json& got, const std::string& at) {
  if (want.type() != got.type() && !(want.is_number() && got.is_number())) {
    return at + ": expected " + show(want) + ", port " + show(got);
  }
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return at + "." + it.key() + ": missing in the port's result";
      std::string d = diff(it.value(), got.at(it.key()), at + "." + it.key());
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.is_array()) {
    for (std::size_t i = 0; i < want.size() && i < got.size(); ++i) {
      std::string d = diff(want[i], got[i], at + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    if (want.size() != got.size()) {
      return at + ": expected " + std::to_string(want.size()) + " entries, port " + std::to_string(got.size());
    }
    return "";
  }
  return want == got ? "" : at + ": expected " + show(want) + ", port " + show(got);
}

// Expands {"runs":[first,count,step,...]} objects into plain arrays, in
// place, refusing (InputError, naming the field) malformed runs and any
// expansion past `budget` values in all, before it is allocated.
void expand_runs(json& v, std::size_t& budget, const std::string& at, std::size_t limit) {
  if (v.is_object()) {
    if (v.size() == 1 && v.contains("runs")) {
      const json& r = v["runs"];
      if (!r.is_array()) throw InputError(at + ".runs: expected an array, port " + show(r));
      if (r.size() % 3 != 0) {
        throw InputError(at + ".runs: " + std::to_string(r.size()) + " numbers, not triples [first, count, step]");
      }
      __extension__ typedef __int128 Wide;
      std::size_t total = 0;
      for (std::size_t i = 0; i < r.size(); i += 3) {
        for (std::size_t k = i; k < i + 3; ++k) {
          if (!r[k].is_number_integer() || (r[k].is_number_unsigned() && r[k].get<std::uint64_t>() > INT64_MAX)) {
            throw InputError(at + ".runs[" + std::to_string(k) + "]: expected an integer that fits int64, port " +
                             show(r[k]));
          }
        }
        const auto first = r[i].get<std::int64_t>(), count = r[i + 1].get<std::int64_t>(),
                   step = r[i + 2].get<std::int64_t>();
        if (count < 0) throw InputError(at + ".runs[" + std::to_string(i + 1) + "]: negative count " + show(count));
        if (static_cast<std::uint64_t>(count) > budget - total) {
          throw InputError(at + ".runs[" + std::to_string(i + 1) + "]: count " + std::to_string(count) +
                           " expands the answer past " + std::to_string(limit) + " values (the limit of PROTOCOL.md)");
        }
        const Wide last = Wide{first} + Wide{step} * Wide{count > 0 ? count - 1 : 0};
        if (last > INT64_MAX || last < INT64_MIN) {
          throw InputError(at + ".runs[" + std::to_string(i) + "]: the triple's values leave int64");
        }
        total += static_cast<std::size_t>(count);
      }
      budget -= total;
      json out = json::array();
      out.get_ref<json::array_t&>().reserve(total);
      for (std::size_t i = 0; i < r.size(); i += 3) {
        const auto first = r[i].get<std::int64_t>(), count = r[i + 1].get<std::int64_t>(),
                   step = r[i + 2].get<std::int64_t>();
        for (std::int64_t k = 0; k < count; ++k) out.push_back(first + k * step);
      }
      v = std::move(out);
      return;
    }
    for (auto& [k, child] : v.items()) {
      if (child.is_structured()) expand_runs(child, budget, at + "." + printable(k, 40), limit);
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].is_structured()) expand_runs(v[i], budget, at + "[" + std::to_string(i) + "]", limit);
    }
  }
}

// A member's string value, or "" when it is absent or not a string.
std::string string_member(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The first difference between two parsed results (runs already expanded).
// Every member of the port's answer is type-checked before it is used.
std::string result_difference(const json& want, const json& got, const std::vector<std::string>& views) {
  if (!got.is_object()) return std::string("the port's answer is not an object but ") + got.type_name();
  const auto type = got.find("type");
  if (type == got.end() || !type->is_string()) {
    return "type: expected \"result\", port " + (type == got.end() ? std::string("none") : show(*type));
  }
  if (*type != "result") return "type: expected \"result\", port " + show(*type);
  const auto id = got.find("id");
  if (id == got.end()) return "id: expected " + show(want["id"]) + ", port none";
  if (*id != want["id"]) return "id: expected " + show(want["id"]) + ", port " + show(*id);
  if (!got.contains("ok") || !got["ok"].is_boolean()) {
    return "ok: expected a boolean, port " + (got.contains("ok") ? show(got["ok"]) : std::string("none"));
  }
  const auto message = got.find("message");
  if (message != got.end() && !message->is_string()) return "message: expected a string, port " + show(*message);
  if (!got["ok"].get<bool>()) {
    const auto error = got.find("error");
    if (error == got.end() || !error->is_string()) {
      return "error: expected a string (the error class), port " +
             (error == got.end() ? std::string("none") : show(*error));
    }
  }
  if (want["ok"] != got["ok"]) {
    return std::string("ok: expected ") + (want["ok"].get<bool>() ? "a result" : "error " + want["error"].dump()) +
           ", port " +
           (got["ok"].get<bool>()
                ? "a result"
                : "error " + show(got["error"]) + " (" + printable(string_member(got, "message")) + ")");
  }
  if (!want["ok"].get<bool>()) {
    if (want["error"] != got["error"]) return diff(want["error"], got["error"], "error");
    if (wants(views, "error_marks") && want.contains("graph_bounds")) {
      if (!got.contains("graph_bounds")) return "graph_bounds: missing in the port's error result (error_marks)";
      return diff(want["graph_bounds"], got["graph_bounds"], "graph_bounds");
    }
    return "";
  }
  // A pad segment on one side only is the decision the pack's rows and
  // offsets follow from: it is reported before any of them (PROTOCOL.md,
  // "Grouped failures").
  if (want.contains("pack") && want["pack"].is_object() && want["pack"].contains("pad_segment") &&
      got.contains("pack") && got["pack"].is_object()) {
    const json& w = want["pack"]["pad_segment"];
    const auto g = got["pack"].find("pad_segment");
    if (g != got["pack"].end() && w.is_null() != g->is_null()) return diff(w, *g, "pack.pad_segment");
  }
  for (const char* part : {"pack", "graph_bounds"}) {
    if (!got.contains(part)) return std::string(part) + ": missing in the port's result";
    std::string d = diff(want[part], got[part], part);
    if (!d.empty()) return d;
  }
  for (const auto& v : views) {
    if (!want["views"].contains(v)) continue;
    if (!got.contains("views") || !got["views"].is_object() || !got["views"].contains(v))
      return "views." + v + ": declared but missing";
    std::string d = diff(want["views"][v], got["views"][v], "views." + v);
    if (!d.empty()) return d;
  }
  return "";
}

// The values of a (trusted) document: every node, as parse_json counts them.
std::size_t value_count(const json& v) {
  std::size_t n = 1;
  if (v.is_structured()) {
    for (const auto& child : v) n += value_count(child);
  }
  return n;
}

// The reference's answer parsed, runs expanded, and the values the port's
// may hold: the limits grow with the reference's own answer (a session of
// large packs).
struct Want {
  json doc;
  std::size_t limit = 0;
};

Want read_want(const std::string& expected) {
  Want w;
  w.doc = json::parse(expected);  // the reference's own line
  std::size_t unlimited = SIZE_MAX;
  expand_runs(w.doc, unlimited, "expected", SIZE_MAX);
  w.limit = answer_value_limit(std::max(SIZE_MAX - unlimited, value_count(w.doc)));
  return w;
}

// The port's answer parsed within `limit`, runs expanded; the returned
// reason says what it lacks, empty when it could be read.
std::string read_got(const std::string& actual, std::size_t limit, json& got) {
  try {
    got = parse_json(actual, "the port's answer", limit);
  } catch (const InputError& e) {
    return std::string(e.what()) + " (answer: " + printable(actual, 120) + ")";
  }
  if (!got.is_object()) return std::string("the port's answer is not an object but ") + got.type_name();
  std::size_t budget = limit;
  try {
    expand_runs(got, budget, "the port's answer", limit);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Both answers parsed, runs expanded; `why` says what the port's lacks.
struct Answers {
  json want, got;
  std::string why;
};

Answers read_answers(const std::string& expected, const std::string& actual) {
  Want w = read_want(expected);
  Answers a;
  a.want = std::move(w.doc);
  a.why = read_got(actual, w.limit, a.got);
  return a;
}

std::string answer_difference(const Want& expected, const std::string& actual, const std::vector<std::string>& views) {
  json got;
  std::string why = read_got(actual, expected.limit, got);
  if (!why.empty()) return why;
  const json& want = expected.doc;
  if (string_member(want, "type") != "session") return result_difference(want, got, views);
  if (string_member(got, "type") != "session") {
    return "type: expected \"session\", port " + (got.contains("type") ? show(got["type"]) : std::string("none"));
  }
  if (!got.contains("id") || got["id"] != want["id"]) {
    return "id: expected " + show(want["id"]) + ", port " + (got.contains("id") ? show(got["id"]) : "none");
  }
  if (!got.contains("results") || !got["results"].is_array()) return "results: missing or not an array";
  const json& w = want["results"];
  const json& g = got["results"];
  for (std::size_t k = 0; k < w.size() && k < g.size(); ++k) {
    std::string d = result_difference(w[k], g[k], views);
    if (!d.empty()) return "session step " + std::to_string(k) + ": " + d;
  }
  if (w.size() != g.size()) {
    return "results: expected " + std::to_string(w.size()) + " step results, port " + std::to_string(g.size());
  }
  return "";
}

}  // namespace

std::string first_difference(const std::string& expected, const std::string& actual,
                             const std::vector<std::string>& views) {
  if (expected == actual) return "";
  // Nothing a port writes may escape as an exception: whatever is left
  // unchecked above fails the case with what went wrong.
  try {
    return answer_difference(read_want(expected), actual, views);
  } catch (const std::exception& e) {
    return std::string("the port's answer cannot be compared: ") + printable(e.what(), 300);
  }
}

struct ExpectedAnswer::Read : Want {};

ExpectedAnswer::ExpectedAnswer(std::string line)
    : line_(std::move(line)), read_(std::make_shared<const Read>(Read{read_want(line_)})) {}

std::string first_difference(const ExpectedAnswer& expected, const std::string& actual,
                             const std::vector<std::string>& views) {
  if (expected.line() == actual) return "";
  try {
    return answer_difference(*expected.read_, actual, views);
  } catch (const std::exception& e) {
    return std::string("the port's answer cannot be compared: ") + printable(e.what(), 300);
  }
}

std::optional<std::pair<json, json>> read_answer_pair(const std::string& expected, const std::string& actual) {
  try {
    Answers a = read_answers(expected, actual);
    if (!a.why.empty()) return std::nullopt;
    return std::make_pair(std::move(a.want), std::move(a.got));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace seqpack::protocol
