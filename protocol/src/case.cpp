// Case data, building, and the JSON case files.
#include "seqpack/protocol/case.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/case_json.hpp"
#include "seqpack/protocol/limits.hpp"
#include "seqpack/reference/pack.hpp"
#include "seqpack/reference/testing.hpp"

namespace seqpack::protocol {
namespace {

using nlohmann::json;

std::string path(const char* where, const char* key) { return std::string(where) + "." + key; }

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw std::runtime_error("case: field " + field + ": " + what);
}

std::int64_t as_int(const json& v, const std::string& field) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) bad(field, "integer " + std::to_string(u) + " does not fit int64");
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_float()) bad(field, "expected an integer that fits int64, got " + v.dump());
  bad(field, std::string("expected an integer, got ") + v.type_name());
}

const json& member(const json& j, const char* key, const char* where) {
  if (!j.is_object()) bad(where, std::string("expected an object, got ") + j.type_name());
  const auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error("case: missing field " + path(where, key));
  return *it;
}

// A list written as {"runs":[first,count,step,...]}, checked whole before
// anything is allocated: triples of int64 integers, counts >= 0 that
// together stay within `budget` (which they spend), every value within int64.
std::vector<std::int64_t> expand_list_runs(const json& v, const std::string& field, std::size_t& budget) {
  const auto it = v.find("runs");
  if (v.size() != 1 || it == v.end()) bad(field, "expected an array, or an object {\"runs\": [...]}, got an object");
  const json& r = *it;
  if (!r.is_array()) bad(field + ".runs", std::string("expected an array, got ") + r.type_name());
  if (r.size() % 3 != 0) bad(field + ".runs", std::to_string(r.size()) + " numbers, not triples [first, count, step]");
  std::size_t total = 0;
  for (std::size_t i = 0; i < r.size(); i += 3) {
    const std::int64_t first = as_int(r[i], field + ".runs[" + std::to_string(i) + "]");
    const std::int64_t count = as_int(r[i + 1], field + ".runs[" + std::to_string(i + 1) + "]");
    const std::int64_t step = as_int(r[i + 2], field + ".runs[" + std::to_string(i + 2) + "]");
    if (count < 0) bad(field + ".runs[" + std::to_string(i + 1) + "]", "negative count " + std::to_string(count));
    if (static_cast<std::uint64_t>(count) > budget - total) {
      bad(field + ".runs[" + std::to_string(i + 1) + "]",
          "count " + std::to_string(count) + " expands the case file past " + std::to_string(budget) + " more values");
    }
    total += static_cast<std::size_t>(count);
    if (count > 1) {
      const __int128 last = static_cast<__int128>(first) + static_cast<__int128>(count - 1) * step;
      if (last > INT64_MAX || last < INT64_MIN)
        bad(field + ".runs[" + std::to_string(i) + "]", "the triple's values leave int64");
    }
  }
  budget -= total;
  std::vector<std::int64_t> out;
  out.reserve(total);
  for (std::size_t i = 0; i < r.size(); i += 3) {
    const std::int64_t first = as_int(r[i], field), count = as_int(r[i + 1], field), step = as_int(r[i + 2], field);
    for (std::int64_t k = 0; k < count; ++k) out.push_back(first + k * step);
  }
  return out;
}

std::vector<std::int64_t> int_list(const json& j, const char* key, const char* where,
                                   std::size_t* runs_budget = nullptr) {
  const json& v = member(j, key, where);
  if (runs_budget != nullptr && v.is_object()) return expand_list_runs(v, path(where, key), *runs_budget);
  if (!v.is_array()) bad(path(where, key), std::string("expected an array, got ") + v.type_name());
  std::vector<std::int64_t> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    // The field's name is only spelled out when there is an error to report
    // (the parser keeps every non-negative integer as unsigned).
    const json& e = v[i];
    if (e.is_number_unsigned() && e.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
      out.push_back(static_cast<std::int64_t>(e.get<std::uint64_t>()));
    } else if (e.is_number_integer() && !e.is_number_unsigned()) {
      out.push_back(e.get<std::int64_t>());
    } else {
      out.push_back(as_int(v[i], path(where, key) + "[" + std::to_string(i) + "]"));
    }
  }
  return out;
}

bool required_bool(const json& j, const char* key, const char* where) {
  const json& v = member(j, key, where);
  if (!v.is_boolean()) bad(path(where, key), std::string("expected a boolean, got ") + v.type_name());
  return v.get<bool>();
}

std::int64_t int_or(const json& j, const char* key, std::int64_t fallback, const char* where) {
  return j.contains(key) ? as_int(j.at(key), path(where, key)) : fallback;
}

std::string string_or(const json& j, const char* key, const char* where) {
  if (!j.contains(key)) return "";
  const json& v = j.at(key);
  if (!v.is_string()) bad(path(where, key), std::string("expected a string, got ") + v.type_name());
  return v.get<std::string>();
}

}  // namespace

void list_und_tokens(Case& c) { c.layout.und_token_indexes = reference::packer_und_tokens(c.layout); }

reference::Rows case_rows(const Case& c) {
  reference::Rows rows(static_cast<std::size_t>(c.rows < 0 ? 0 : c.rows), c.row_bytes);
  // xorshift64, eight bytes a step (little-endian), the tail from one more step.
  std::uint64_t s = c.data_seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  const auto next = [&s] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  std::byte* out = rows.data();
  const std::size_t n = rows.size_bytes();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t v = next();
    for (int b = 0; b < 8; ++b) out[i + b] = static_cast<std::byte>(v >> (8 * b));
  }
  if (i < n) {
    const std::uint64_t v = next();
    for (int b = 0; i < n; ++i, ++b) out[i] = static_cast<std::byte>(v >> (8 * b));
  }
  for (std::size_t r = 0; r < rows.rows(); ++r)
    reference::testing::plant_special_value(rows.row(r), rows.row_bytes(), r, 5);
  return rows;
}

reference::Pack build_case(const Case& c, reference::GraphMarks* marks_after) {
  reference::GraphMarks marks = c.marks;
  reference::Pack pack = reference::build_pack(case_rows(c), c.layout, c.options, marks);
  if (marks_after) *marks_after = marks;
  return pack;
}

namespace {

// The compact JSON nlohmann's dump() writes, without building a document:
// keys in sorted order at every level (its objects are sorted maps).
class CaseText {
 public:
  std::string out;
  void text(const std::string& v) {
    if (writes_as_is(v)) {
      out += '"';
      out += v;
      out += '"';
    } else {
      out += json(v).dump();  // escapes; throws on text that is not UTF-8, as dump() does
    }
  }
  template <typename T>
  void num(T v) {
    char buf[24];
    out.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  }
  void flag(bool v) { out += v ? "true" : "false"; }
  template <typename T>
  void list(const std::vector<T>& v) {
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      if constexpr (std::is_same_v<T, std::string>) {
        text(v[i]);
      } else {
        num(v[i]);
      }
    }
    out += ']';
  }
};

}  // namespace

std::string to_json(const Case& c, const std::string& id) {
  const auto& o = c.options;
  const auto& L = c.layout;
  CaseText t;
  t.out.reserve(256 + 12 * (L.sample_lens.size() + L.split_lens.size() + L.und_token_indexes.size()) +
                10 * L.attn_modes.size());
  t.out += "{\"data_seed\":";
  t.num(static_cast<std::int64_t>(c.data_seed));
  if (!c.expect_error.empty()) {
    t.out += ",\"expect_error\":";
    t.text(c.expect_error);
  }
  if (!c.fault.empty()) {
    t.out += ",\"fault\":";
    t.text(c.fault);
  }
  t.out += ",\"graph_bounds\":{\"image\":[";
  t.num(c.marks.image_causal);
  t.out += ',';
  t.num(c.marks.image_full);
  t.out += "],\"video\":[";
  t.num(c.marks.video_causal);
  t.out += ',';
  t.num(c.marks.video_full);
  t.out += "]},\"id\":";
  t.text(id);
  t.out += ",\"layout\":{\"attn_modes\":";
  t.list(L.attn_modes);
  t.out += ",\"sample_lens\":";
  t.list(L.sample_lens);
  t.out += ",\"split_lens\":";
  t.list(L.split_lens);
  t.out += ",\"und_token_indexes\":";
  t.list(L.und_token_indexes);
  t.out += "},\"options\":{\"causal_seq_alignment\":";
  t.num(o.causal_seq_alignment);
  t.out += ",\"cp_world_size\":";
  t.num(o.cp_world_size);
  t.out += ",\"full_seq_alignment\":";
  t.num(o.full_seq_alignment);
  t.out += ",\"is_image_batch\":";
  t.flag(o.is_image_batch);
  t.out += ",\"pad_for_cuda_graphs\":";
  t.flag(o.pad_for_cuda_graphs);
  t.out += ",\"pad_segment_only_when_padded\":";
  t.flag(o.pad_segment_only_when_padded);
  t.out += "},\"row_bytes\":";
  t.num(c.row_bytes);
  t.out += ",\"rows\":";
  t.num(c.rows);
  t.out += ",\"type\":\"case\"}";
  return std::move(t.out);
}

Case case_from_json(const std::string& text) {
  std::size_t runs_budget = kMaxJsonValues;  // a case file may write its lists as runs
  return case_from_json_value(parse_json(text, "case"), &runs_budget);
}

Case case_from_json_value(const json& j, std::size_t* runs_budget) {
  if (!j.is_object()) throw std::runtime_error(std::string("case: expected a JSON object, got ") + j.type_name());
  Case c;
  const json& layout = member(j, "layout", "case");
  c.layout.sample_lens = int_list(layout, "sample_lens", "layout", runs_budget);
  c.layout.split_lens = int_list(layout, "split_lens", "layout", runs_budget);
  c.layout.und_token_indexes = int_list(layout, "und_token_indexes", "layout", runs_budget);
  const json& modes = member(layout, "attn_modes", "layout");
  if (!modes.is_array()) bad("layout.attn_modes", std::string("expected an array, got ") + modes.type_name());
  for (std::size_t i = 0; i < modes.size(); ++i) {
    if (!modes[i].is_string())
      bad("layout.attn_modes[" + std::to_string(i) + "]",
          std::string("expected a string, got ") + modes[i].type_name());
    c.layout.attn_modes.push_back(modes[i].get<std::string>());
  }
  c.rows = as_int(member(j, "rows", "case"), "case.rows");
  // Every field of the case is required (PROTOCOL.md, "Case and result"):
  // a missing option or mark is an error, never a silent default.
  const json& options = member(j, "options", "case");
  if (!options.is_object()) bad("case.options", std::string("expected an object, got ") + options.type_name());
  c.options.cp_world_size = as_int(member(options, "cp_world_size", "options"), "options.cp_world_size");
  c.options.pad_for_cuda_graphs = required_bool(options, "pad_for_cuda_graphs", "options");
  c.options.is_image_batch = required_bool(options, "is_image_batch", "options");
  c.options.full_seq_alignment = as_int(member(options, "full_seq_alignment", "options"), "options.full_seq_alignment");
  c.options.causal_seq_alignment =
      as_int(member(options, "causal_seq_alignment", "options"), "options.causal_seq_alignment");
  c.options.pad_segment_only_when_padded = required_bool(options, "pad_segment_only_when_padded", "options");
  const json& g = member(j, "graph_bounds", "case");
  if (!g.is_object()) bad("case.graph_bounds", std::string("expected an object, got ") + g.type_name());
  const auto image = int_list(g, "image", "graph_bounds");
  const auto video = int_list(g, "video", "graph_bounds");
  if (image.size() != 2)
    bad("graph_bounds.image", "expected [causal, full], got " + std::to_string(image.size()) + " numbers");
  if (video.size() != 2)
    bad("graph_bounds.video", "expected [causal, full], got " + std::to_string(video.size()) + " numbers");
  c.marks = {image[0], image[1], video[0], video[1]};
  const std::int64_t width = int_or(j, "row_bytes", 4, "case");
  if (width < 1 || width > 4096) bad("case.row_bytes", "expected 1 to 4096, got " + std::to_string(width));
  c.row_bytes = static_cast<std::size_t>(width);
  c.data_seed = static_cast<std::uint64_t>(int_or(j, "data_seed", 0, "case"));
  c.expect_error = string_or(j, "expect_error", "case");
  c.fault = string_or(j, "fault", "case");
  return c;
}

namespace {

// `v` as runs: each triple the longest stretch of one step from where it starts.
json runs_of(const std::vector<std::int64_t>& v) {
  json r = json::array();
  for (std::size_t i = 0; i < v.size();) {
    std::size_t n = 1;
    std::int64_t step = 0;
    if (i + 1 < v.size()) {
      const __int128 d = static_cast<__int128>(v[i + 1]) - v[i];
      if (d >= INT64_MIN && d <= INT64_MAX) {
        step = static_cast<std::int64_t>(d);
        n = 2;
        while (i + n < v.size() && static_cast<__int128>(v[i + n]) - v[i + n - 1] == d) ++n;
      }
    }
    r.push_back(v[i]);
    r.push_back(static_cast<std::int64_t>(n));
    r.push_back(n == 1 ? 0 : step);
    i += n;
  }
  return json{{"runs", r}};
}

void layout_with_runs(json& c) {
  if (!c.is_object() || !c.contains("layout") || !c["layout"].is_object()) return;
  for (const char* key : {"sample_lens", "split_lens", "und_token_indexes"}) {
    json& list = c["layout"][key];
    if (!list.is_array() || list.size() < 4) continue;
    std::vector<std::int64_t> v;
    for (const json& e : list) {
      if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<std::uint64_t>() > INT64_MAX)) return;
      v.push_back(e.get<std::int64_t>());
    }
    json runs = runs_of(v);
    if (runs.dump().size() < list.dump().size()) list = std::move(runs);
  }
}

}  // namespace

std::string with_runs(const std::string& line) {
  json j = json::parse(line);
  if (j.contains("cases") && j["cases"].is_array()) {
    for (json& step : j["cases"]) layout_with_runs(step);
  } else {
    layout_with_runs(j);
  }
  return j.dump();
}

std::string category(const Case& c) { return c.expect_error.empty() ? "valid" : c.expect_error + "/" + c.fault; }

}  // namespace seqpack::protocol
