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
using detail::same;
using detail::show;
using detail::wants;

__extension__ typedef __int128 Wide;

// Why a number of the port's is not the reference's integer, when its form
// says so ("" otherwise).
std::string number_note(const json& want, const json& got) {
  if (!want.is_number_integer()) return "";
  if (got.is_number_float()) return " (a number with a fraction or an exponent: the field takes integers only)";
  if (got.is_number_integer() && !detail::is_int64(got)) return " (past int64: the field is a signed 64-bit integer)";
  return "";
}

// {"runs":[first,count,step,...]}: a list of integers written as triples.
bool is_runs(const json& v) { return v.is_object() && v.size() == 1 && v.contains("runs"); }

// The values a runs object stands for, checked whole: InputError (naming
// the field) for malformed runs and for any count past `budget`, before
// anything is allocated. The triples' values all fit int64 afterwards.
std::size_t runs_total(const json& r, std::size_t budget, const std::string& at, std::size_t limit) {
  if (!r.is_array()) throw InputError(at + ".runs: expected an array, port " + show(r));
  if (r.size() % 3 != 0) {
    throw InputError(at + ".runs: " + std::to_string(r.size()) + " numbers, not triples [first, count, step]");
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < r.size(); i += 3) {
    for (std::size_t k = i; k < i + 3; ++k) {
      if (!detail::is_int64(r[k])) {
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
  return total;
}

// One triple of a checked runs object; value k is first + k * step, taken
// wide (first + k * step fits int64, k * step alone may not).
struct Run {
  std::int64_t first, count, step;
  std::int64_t at(std::int64_t k) const { return static_cast<std::int64_t>(Wide{first} + Wide{k} * Wide{step}); }
};

std::vector<Run> runs_of(const json& v) {
  const json& r = v["runs"];
  std::vector<Run> out;
  out.reserve(r.size() / 3);
  for (std::size_t i = 0; i < r.size(); i += 3) {
    const Run run{r[i].get<std::int64_t>(), r[i + 1].get<std::int64_t>(), r[i + 2].get<std::int64_t>()};
    if (run.count > 0) out.push_back(run);
  }
  return out;
}

// Checks every runs object of `v` (runs_total) and takes its values from
// `budget`, leaving them unexpanded: diff walks them as they are.
void check_runs(const json& v, std::size_t& budget, const std::string& at, std::size_t limit) {
  if (is_runs(v)) {
    budget -= runs_total(v["runs"], budget, at, limit);
    return;
  }
  if (v.is_object()) {
    for (const auto& [k, child] : v.items()) {
      if (child.is_structured()) check_runs(child, budget, at + "." + printable(k, 40), limit);
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].is_structured()) check_runs(v[i], budget, at + "[" + std::to_string(i) + "]", limit);
    }
  }
}

// Replaces every (checked) runs object of `v` by its plain array, in place.
void expand_runs(json& v) {
  if (is_runs(v)) {
    const std::vector<Run> runs = runs_of(v);
    json out = json::array();
    auto& values = out.get_ref<json::array_t&>();
    for (const Run& run : runs) {
      for (std::int64_t k = 0; k < run.count; ++k) values.emplace_back(run.at(k));
    }
    v = std::move(out);
  } else if (v.is_structured()) {
    for (auto& child : v) expand_runs(child);
  }
}

// A copy of `v` with its (checked) runs expanded.
json expanded(json v) {
  expand_runs(v);
  return v;
}

// A value as a message shows it: runs as the plain array they stand for.
std::string shown(const json& v) { return v.is_structured() ? show(expanded(v)) : show(v); }

// The entries of a list, plain or (checked) runs.
std::size_t list_size(const json& v) {
  if (!is_runs(v)) return v.size();
  std::size_t n = 0;
  for (const Run& run : runs_of(v)) n += static_cast<std::size_t>(run.count);
  return n;
}

// A list, plain or runs, read one value at a time.
class Cursor {
 public:
  explicit Cursor(const json& v) : plain_(is_runs(v) ? nullptr : &v) {
    if (plain_ == nullptr) runs_ = runs_of(v);
  }
  bool done() const { return plain_ != nullptr ? index_ >= plain_->size() : run_ >= runs_.size(); }
  const json& value() {
    if (plain_ != nullptr) return (*plain_)[index_];
    scratch_ = runs_[run_].at(k_);
    return scratch_;
  }
  void next() {
    if (plain_ != nullptr) {
      ++index_;
    } else if (++k_ == runs_[run_].count) {
      ++run_;
      k_ = 0;
    }
  }

 private:
  const json* plain_;
  std::size_t index_ = 0;
  std::vector<Run> runs_;
  std::size_t run_ = 0;
  std::int64_t k_ = 0;
  json scratch_;
};

std::string diff(const json& want, const json& got, const std::string& at);

// The first difference between two lists, either of them runs: value by
// value, as diff compares plain arrays, but a stretch where both sides run
// with one step is passed in one move.
std::string list_diff(const json& want, const json& got, const std::string& at) {
  std::size_t i = 0;
  if (is_runs(want) && is_runs(got)) {
    const std::vector<Run> w = runs_of(want), g = runs_of(got);
    std::size_t a = 0, b = 0;
    std::int64_t ka = 0, kb = 0;
    while (a < w.size() && b < g.size()) {
      const std::int64_t x = w[a].at(ka), y = g[b].at(kb);
      if (x != y)
        return at + "[" + std::to_string(i) + "]: expected " + std::to_string(x) + ", port " + std::to_string(y);
      const std::int64_t left_a = w[a].count - ka, left_b = g[b].count - kb;
      // Equal here, equal steps: equal for as long as both runs last.
      const std::int64_t m = w[a].step == g[b].step ? std::min(left_a, left_b) : 1;
      i += static_cast<std::size_t>(m);
      if ((ka += m) == w[a].count) ++a, ka = 0;
      if ((kb += m) == g[b].count) ++b, kb = 0;
    }
  } else {
    Cursor w(want), g(got);
    for (; !w.done() && !g.done(); w.next(), g.next(), ++i) {
      const json& x = w.value();
      const json& y = g.value();
      if (same(x, y)) continue;
      std::string d = diff(x, y, at + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
  }
  const std::size_t nw = list_size(want), ng = list_size(got);
  if (nw != ng) return at + ": expected " + std::to_string(nw) + " entries, port " + std::to_string(ng);
  return "";
}

// The first difference between two JSON values, as "path: expected X, port
// Y"; a runs object compares as the list it stands for.
std::string diff(const json& want, const json& got, const std::string& at) {
  if (is_runs(want) || is_runs(got)) {
    if ((is_runs(want) || want.is_array()) && (is_runs(got) || got.is_array())) return list_diff(want, got, at);
    return at + ": expected " + shown(want) + ", port " + shown(got);
  }
  if (want.type() != got.type() && !(want.is_number() && got.is_number())) {
    return at + ": expected " + shown(want) + ", port " + shown(got);
  }
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      const auto g = got.find(it.key());
      if (g == got.end()) return at + "." + it.key() + ": missing in the port's result";
      if (same(it.value(), *g)) continue;  // the path is written only where the values differ
      std::string d = diff(it.value(), *g, at + "." + it.key());
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.is_array()) {
    for (std::size_t i = 0; i < want.size() && i < got.size(); ++i) {
      if (same(want[i], got[i])) continue;
      std::string d = diff(want[i], got[i], at + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    if (want.size() != got.size()) {
      return at + ": expected " + std::to_string(want.size()) + " entries, port " + std::to_string(got.size());
    }
    return "";
  }
  return same(want, got) ? "" : at + ": expected " + show(want) + ", port " + show(got) + number_note(want, got);
}

// A member's string value, or "" when it is absent or not a string.
std::string string_member(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The first difference between two parsed results (runs checked; diff reads
// them as the lists they stand for).
// Every member of the port's answer is type-checked before it is used.
std::string result_difference(const json& want, const json& got, const std::vector<std::string>& views) {
  if (!got.is_object()) return std::string("the port's answer is not an object but ") + got.type_name();
  const auto type = got.find("type");
  if (type == got.end() || !type->is_string()) {
    return "type: expected \"result\", port " + (type == got.end() ? std::string("none") : shown(*type));
  }
  if (*type != "result") return "type: expected \"result\", port " + shown(*type);
  const auto id = got.find("id");
  if (id == got.end()) return "id: expected " + shown(want["id"]) + ", port none";
  if (!same(*id, want["id"])) return "id: expected " + shown(want["id"]) + ", port " + shown(*id);
  if (!got.contains("ok") || !got["ok"].is_boolean()) {
    return "ok: expected a boolean, port " + (got.contains("ok") ? shown(got["ok"]) : std::string("none"));
  }
  const auto message = got.find("message");
  if (message != got.end() && !message->is_string()) return "message: expected a string, port " + shown(*message);
  if (!got["ok"].get<bool>()) {
    const auto error = got.find("error");
    if (error == got.end() || !error->is_string()) {
      return "error: expected a string (the error class), port " +
             (error == got.end() ? std::string("none") : shown(*error));
    }
  }
  if (want["ok"] != got["ok"]) {
    return std::string("ok: expected ") + (want["ok"].get<bool>() ? "a result" : "error " + want["error"].dump()) +
           ", port " +
           (got["ok"].get<bool>()
                ? "a result"
                : "error " + shown(got["error"]) + " (" + printable(string_member(got, "message")) + ")");
  }
  if (!want["ok"].get<bool>()) {
    if (!same(want["error"], got["error"])) return diff(want["error"], got["error"], "error");
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

// The values of a (trusted, runs checked) document: every node, as
// parse_json counts them once the runs are expanded.
std::size_t value_count(const json& v) {
  if (is_runs(v)) return 1 + list_size(v);
  std::size_t n = 1;
  if (v.is_structured()) {
    for (const auto& child : v) n += value_count(child);
  }
  return n;
}

// The reference's answer parsed, runs checked (not expanded), and the values the port's
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
  check_runs(w.doc, unlimited, "expected", SIZE_MAX);
  w.limit = answer_value_limit(std::max(SIZE_MAX - unlimited, value_count(w.doc)));
  return w;
}

// The port's answer parsed within `limit`, runs checked; the returned
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
    check_runs(got, budget, "the port's answer", limit);
  } catch (const InputError& e) {
    return e.what();
  }
  if (is_runs(got)) expand_runs(got);  // a whole answer written as runs is a list, not a result
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
  expand_runs(a.want);
  if (a.why.empty()) expand_runs(a.got);
  return a;
}

std::string answer_difference(const Want& expected, const std::string& actual, const std::vector<std::string>& views) {
  json got;
  std::string why = read_got(actual, expected.limit, got);
  if (!why.empty()) return why;
  const json& want = expected.doc;
  if (string_member(want, "type") != "session") return result_difference(want, got, views);
  if (string_member(got, "type") != "session") {
    return "type: expected \"session\", port " + (got.contains("type") ? shown(got["type"]) : std::string("none"));
  }
  if (!got.contains("id") || !same(got["id"], want["id"])) {
    return "id: expected " + shown(want["id"]) + ", port " + (got.contains("id") ? shown(got["id"]) : "none");
  }
  if (!got.contains("results") || !(got["results"].is_array() || is_runs(got["results"])))
    return "results: missing or not an array";
  const json& w = want["results"];
  // Results written as runs are a list of numbers: each step's result "not an object".
  const json plain = is_runs(got["results"]) ? expanded(got["results"]) : json();
  const json& g = is_runs(got["results"]) ? plain : got["results"];
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
