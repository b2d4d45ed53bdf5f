// The oracle's answers and the comparison of results.
#include "seqpack/conformance/protocol.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "seqpack/conformance/case_json.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::conformance {
namespace {

namespace ref = seqpack::reference;
using nlohmann::json;

// A small append-only JSON writer: the result lines are large integer arrays,
// which nlohmann's DOM builds slowly. The buffer grows without zero-filling.
class Writer {
 public:
  std::string text() const { return std::string(buf_.get(), size_); }

  Writer& open() { return sep(), put('{'), first_ = true, *this; }
  Writer& close() { return put('}'), first_ = false, *this; }
  Writer& key(const char* k) {
    sep();
    put('"');
    raw(k, std::strlen(k));
    raw("\":", 2);
    first_ = true;
    return *this;
  }
  Writer& str(const std::string& s) {
    sep();
    const std::string quoted = json(s).dump();
    raw(quoted.data(), quoted.size());
    return *this;
  }
  Writer& num(std::int64_t v) {
    sep();
    reserve(24);
    size_ = static_cast<std::size_t>(std::to_chars(buf_.get() + size_, buf_.get() + cap_, v).ptr - buf_.get());
    return *this;
  }
  Writer& boolean(bool v) {
    sep();
    return v ? raw("true", 4) : raw("false", 5);
  }
  Writer& null() {
    sep();
    return raw("null", 4);
  }
  // Rows, ids and offsets come in runs of equal or consecutive values, so a
  // number is mostly written by copying or incrementing the one before it.
  template <typename V>
  Writer& list(const V& v) {
    sep();
    reserve(v.size() * 21 + 2);
    char* p = buf_.get() + size_;
    char* const end = buf_.get() + cap_;
    *p++ = '[';
    char* prev = nullptr;  // start of the previous number
    std::size_t prev_len = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) *p++ = ',';
      char* const at = p;
      if (prev && v[i] == v[i - 1]) {
        for (std::size_t k = 0; k < prev_len; ++k) p[k] = prev[k];
        p += prev_len;
      } else if (prev && v[i - 1] >= 0 && v[i] == v[i - 1] + 1 && prev[prev_len - 1] != '9') {
        for (std::size_t k = 0; k < prev_len; ++k) p[k] = prev[k];
        p[prev_len - 1] = static_cast<char>(p[prev_len - 1] + 1);
        p += prev_len;
      } else {
        p = std::to_chars(p, end, static_cast<std::int64_t>(v[i])).ptr;
      }
      prev = at;
      prev_len = static_cast<std::size_t>(p - at);
    }
    *p++ = ']';
    size_ = static_cast<std::size_t>(p - buf_.get());
    return *this;
  }
  // {"runs":[first,count,step,...]}: values first + k*step, k in [0, count).
  template <typename V>
  Writer& runs(const V& v) {
    sep();
    raw("{\"runs\":[", 9);
    bool any = false;
    std::size_t i = 0;
    while (i < v.size()) {
      const std::int64_t first = v[i];
      std::int64_t step = 0;
      std::size_t count = 1;
      if (i + 1 < v.size()) {
        step = static_cast<std::int64_t>(v[i + 1]) - first;
        count = 2;
        while (i + count < v.size() && static_cast<std::int64_t>(v[i + count]) - v[i + count - 1] == step) ++count;
      }
      reserve(72);
      char* p = buf_.get() + size_;
      char* const end = buf_.get() + cap_;
      if (any) *p++ = ',';
      p = std::to_chars(p, end, first).ptr;
      *p++ = ',';
      p = std::to_chars(p, end, static_cast<std::int64_t>(count)).ptr;
      *p++ = ',';
      p = std::to_chars(p, end, step).ptr;
      size_ = static_cast<std::size_t>(p - buf_.get());
      any = true;
      i += count;
    }
    raw("]}", 2);
    return *this;
  }
  Encoding encoding = Encoding::plain;
  /// An integer array in this writer's encoding.
  template <typename V>
  Writer& ints(const V& v) {
    return encoding == Encoding::runs ? runs(v) : list(v);
  }
  Writer& open_list() { return sep(), put('['), first_ = true, *this; }
  Writer& close_list() { return put(']'), first_ = false, *this; }

 private:
  void reserve(std::size_t n) {
    if (size_ + n <= cap_) return;
    const std::size_t cap = std::max(cap_ * 2, size_ + n + 256);
    std::unique_ptr<char[]> grown(new char[cap]);
    if (size_) std::memcpy(grown.get(), buf_.get(), size_);
    buf_ = std::move(grown);
    cap_ = cap;
  }
  Writer& raw(const char* p, std::size_t n) {
    reserve(n);
    std::memcpy(buf_.get() + size_, p, n);
    size_ += n;
    return *this;
  }
  void put(char c) { raw(&c, 1); }
  void sep() {
    if (!first_) put(',');
    first_ = false;
  }
  // One buffer per thread, reused across results: fresh large buffers cost a
  // page fault per page.
  static thread_local std::unique_ptr<char[]> pool_;
  static thread_local std::size_t pool_cap_;
  std::unique_ptr<char[]>& buf_ = pool_;
  std::size_t& cap_ = pool_cap_;
  std::size_t size_ = 0;
  bool first_ = true;
};

thread_local std::unique_ptr<char[]> Writer::pool_;
thread_local std::size_t Writer::pool_cap_ = 0;

// Row r of the packed sequence holds r + 1; 0 marks padding.
ref::Rows self_naming_rows(std::int64_t n) {
  ref::Rows rows(static_cast<std::size_t>(n), 4);
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const auto v = static_cast<std::uint32_t>(r + 1);
    std::memcpy(rows.row(r), &v, 4);
  }
  return rows;
}

// The packed row each row of a self-naming buffer holds (-1: padding), read
// in place as the writer walks it.
struct RowNames {
  const ref::Rows& rows;
  std::size_t size() const { return rows.rows(); }
  std::int64_t operator[](std::size_t r) const {
    std::uint32_t v = 0;
    std::memcpy(&v, rows.row(r), 4);
    return static_cast<std::int64_t>(v) - 1;
  }
};
RowNames row_names(const ref::Rows& rows) { return RowNames{rows}; }

void marks(Writer& w, const ref::GraphMarks& m) {
  w.open().key("image").list(std::vector<std::int64_t>{m.image_causal, m.image_full});
  w.key("video").list(std::vector<std::int64_t>{m.video_causal, m.video_full}).close();
}

std::string error_line(const std::string& id, const std::string& cls, const std::string& message) {
  Writer w;
  w.open().key("type").str("result").key("id").str(id).key("ok").boolean(false);
  w.key("error").str(cls).key("message").str(message).close();
  return w.text();
}

bool wants(const std::vector<std::string>& views, const char* v) {
  return std::find(views.begin(), views.end(), v) != views.end();
}

class ReferenceBuilt : public Built {
 public:
  explicit ReferenceBuilt(ref::Pack p) : pack_(std::move(p)) {}
  const ref::Pack& pack() const override { return pack_; }
  ref::AllSeqPadded all_seq_padded() const override { return ref::get_all_seq_padded(pack_); }
  ref::Pack shard(std::int64_t rank, std::int64_t world) const override { return ref::shard_pack(pack_, rank, world); }

 private:
  ref::Pack pack_;
};

class ReferenceImplementation : public Implementation {
 public:
  std::string name() const override { return "seqpack reference oracle"; }
  std::unique_ptr<Built> build(const ref::Rows& rows, const conformance::Case& c,
                               ref::GraphMarks& marks) const override {
    return std::make_unique<ReferenceBuilt>(ref::build_pack(rows, c.layout, c.options, marks));
  }
};

std::atomic<std::int64_t> g_row_limit{kMaxOracleRows};

std::string result_or_error(const Implementation& impl, const conformance::Case& c, const std::string& id,
                            const std::vector<std::string>& views, Encoding encoding) {
  try {
    // The reference's checks decide the size before anything is allocated:
    // a case it rejects with more rows than the limit is answered from them.
    std::optional<ref::Error> rejected;
    std::int64_t padded_rows = 0;
    try {
      ref::validate_options(c.options, c.marks);
      ref::validate_layout(c.layout);
      std::int64_t sum = 0;
      for (const std::int64_t s : c.layout.sample_lens) sum = s > INT64_MAX - sum ? INT64_MAX : sum + s;
      if (c.rows != sum) {
        throw ref::Error(ref::Errc::length_mismatch, "rows",
                         "the packed sequence has " + std::to_string(c.rows) + " rows but sample_lens sum to " +
                             (sum == INT64_MAX ? std::string("more than int64") : std::to_string(sum)));
      }
      const ref::Metadata meta = ref::prepare_metadata(c.layout);
      const ref::PackShape shape = ref::plan_pack(meta, c.rows, c.options, c.marks);
      padded_rows = shape.causal_len + shape.full_len;
    } catch (const ref::Error& e) {
      rejected = e;
    }
    const std::int64_t limit = oracle_row_limit();
    if (rejected && (c.rows < 0 || c.rows > limit)) throw *rejected;
    if (padded_rows > limit || (!rejected && c.rows > limit)) {
      return error_line(id, "too_large",
                        "padded streams of " + std::to_string(padded_rows) + " rows exceed the oracle's limit of " +
                            std::to_string(limit));
    }
    ref::GraphMarks after = c.marks;
    const std::unique_ptr<Built> built = impl.build(self_naming_rows(c.rows), c, after);
    const ref::Pack& p = built->pack();
    const ref::Metadata& m = *p.meta;
    Writer w;
    w.encoding = encoding;
    w.open().key("type").str("result").key("id").str(id).key("ok").boolean(true);
    w.key("pack").open();
    w.key("sample_offsets").ints(m.sample_offsets).key("max_sample_len").num(m.max_sample_len);
    w.key("max_causal_len").num(m.max_causal_len).key("max_full_len").num(m.max_full_len);
    w.key("max_num_tokens").num(p.max_num_tokens);
    w.key("causal_indices").ints(m.causal_indices).key("full_indices").ints(m.full_indices);
    w.key("causal_seq_offsets").ints(m.causal_seq_offsets).key("full_only_seq_offsets").ints(m.full_only_seq_offsets);
    w.key("num_causal_tokens").num(m.num_causal_tokens).key("num_full_tokens").num(m.num_full_tokens);
    w.key("causal_sample_ids").ints(p.causal_sample_ids).key("full_only_sample_ids").ints(p.full_only_sample_ids);
    w.key("causal_rows").ints(row_names(p.causal_seq)).key("full_only_rows").ints(row_names(p.full_only_seq));
    w.key("pad_segment");
    if (p.pad_segment) {
      const ref::PadSegment& s = *p.pad_segment;
      w.open().key("causal_seq_offsets").ints(s.causal_seq_offsets).key("max_causal_len").num(s.max_causal_len);
      w.key("full_only_seq_offsets").ints(s.full_only_seq_offsets).key("max_full_len").num(s.max_full_len);
      w.key("sample_offsets").ints(s.sample_offsets).key("max_sample_len").num(s.max_sample_len).close();
    } else {
      w.null();
    }
    w.close();
    w.key("graph_bounds");
    marks(w, after);
    w.key("views").open();
    if (wants(views, "all_seq_padded")) {
      const ref::AllSeqPadded all = built->all_seq_padded();
      w.key("all_seq_padded").open().key("rows").ints(row_names(all.seq));
      w.key("offsets").ints(all.offsets).key("max_len").num(all.max_len).close();
    }
    if (wants(views, "cp_shards") && c.options.cp_world_size > 1) {
      w.key("cp_shards");
      const std::int64_t world = c.options.cp_world_size;
      if (p.causal_seq.rows() % static_cast<std::size_t>(world) != 0 ||
          p.full_only_seq.rows() % static_cast<std::size_t>(world) != 0) {
        w.open().key("error").str("not_divisible").close();
      } else {
        w.open_list();
        for (std::int64_t r = 0; r < world; ++r) {
          const ref::Pack s = built->shard(r, world);
          const auto [lc, lf] = ref::get_num_real_tokens(s);
          w.open().key("rank").num(r).key("causal_rows").ints(row_names(s.causal_seq));
          w.key("full_only_rows").ints(row_names(s.full_only_seq));
          w.key("num_causal_tokens_local").num(lc).key("num_full_tokens_local").num(lf).close();
        }
        w.close_list();
      }
    }
    w.close().close();
    return w.text();
  } catch (const ref::Error& e) {
    return error_line(id, ref::to_string(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return error_line(id, "too_large", "the oracle ran out of memory building this case");
  }
}

// --- comparison --------------------------------------------------------------

std::string show(const json& v) {
  std::string s = v.dump();
  return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

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

// Expands {"runs":[first,count,step,...]} objects into plain arrays, in place.
void expand_runs(json& v) {
  if (v.is_object()) {
    if (v.size() == 1 && v.contains("runs") && v["runs"].is_array()) {
      const json r = v["runs"];
      json out = json::array();
      for (std::size_t i = 0; i + 2 < r.size(); i += 3) {
        if (!r[i].is_number_integer() || !r[i + 1].is_number_integer() || !r[i + 2].is_number_integer()) break;
        const auto first = r[i].get<std::int64_t>(), count = r[i + 1].get<std::int64_t>(),
                   step = r[i + 2].get<std::int64_t>();
        for (std::int64_t k = 0; k < count && out.size() < (std::size_t{1} << 26); ++k) out.push_back(first + k * step);
      }
      v = std::move(out);
      return;
    }
    for (auto& [k, child] : v.items()) expand_runs(child);
  } else if (v.is_array()) {
    for (auto& child : v) expand_runs(child);
  }
}

}  // namespace

void set_oracle_row_limit(std::int64_t rows) { g_row_limit = rows; }
std::int64_t oracle_row_limit() { return g_row_limit; }

const std::vector<std::string>& oracle_views() {
  static const std::vector<std::string> views = {"all_seq_padded", "cp_shards"};
  return views;
}

const Implementation& reference_implementation() {
  static const ReferenceImplementation impl;
  return impl;
}

std::string result_line(const conformance::Case& c, const std::string& id, const std::vector<std::string>& views,
                        Encoding encoding) {
  return result_or_error(reference_implementation(), c, id, views, encoding);
}

std::string result_line(const Implementation& impl, const conformance::Case& c, const std::string& id,
                        const std::vector<std::string>& views, Encoding encoding) {
  return result_or_error(impl, c, id, views, encoding);
}

std::string request_line(const conformance::Case& c, const std::string& id) { return conformance::to_json(c, id); }

std::string handle_line(const std::string& line) { return Oracle(false).handle(line); }

int serve(std::istream& in, std::ostream& out, bool allow_runs, const Implementation& impl) {
  Oracle oracle(allow_runs, impl);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    out << oracle.handle(line) << '\n' << std::flush;
  }
  return 0;
}

std::string Oracle::handle(const std::string& line) {
  std::string id;
  try {
    if (line.size() > kMaxLineBytes) {
      return error_line(
          id, "bad_request",
          "request line of " + std::to_string(line.size()) + " bytes exceeds " + std::to_string(kMaxLineBytes));
    }
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      return error_line(id, "bad_request", std::string("not JSON: ") + e.what());
    }
    if (!j.is_object())
      return error_line(id, "bad_request", std::string("expected a JSON object, got ") + j.type_name());
    if (j.contains("id")) id = j.at("id").is_string() ? j.at("id").get<std::string>() : j.at("id").dump();
    const auto type = j.find("type");
    if (type == j.end() || !type->is_string())
      return error_line(id, "bad_request", "field type: missing or not a string");
    if (*type == "hello") {
      // The runs encoding, when the runner offers it and this oracle may use it.
      encoding_ = Encoding::plain;
      if (allow_runs_ && j.contains("encodings") && j["encodings"].is_array()) {
        for (const auto& e : j["encodings"]) {
          if (e == "runs") encoding_ = Encoding::runs;
        }
      }
      Writer w;
      w.open().key("type").str("hello").key("protocol").str(kProtocol).key("name").str(impl_->name());
      if (encoding_ == Encoding::runs) w.key("encoding").str("runs");
      w.key("views").open_list();
      for (const auto& v : oracle_views()) w.str(v);
      w.close_list().close();
      return w.text();
    }
    if (*type != "case") return error_line(id, "bad_request", "field type: unknown request type " + type->dump());
    conformance::Case c;
    try {
      c = conformance::case_from_json_value(j);
    } catch (const std::exception& e) {
      return error_line(id, "bad_request", e.what());
    }
    return result_line(*impl_, c, id, oracle_views(), encoding_);
  } catch (const std::exception& e) {
    return error_line(id, "bad_request", std::string("unexpected: ") + e.what());
  }
}

std::string first_difference(const std::string& expected, const std::string& actual,
                             const std::vector<std::string>& views) {
  if (expected == actual) return "";
  json want, got;
  try {
    want = json::parse(expected);
  } catch (const json::exception& e) {
    return std::string("expected result is not JSON: ") + e.what();
  }
  try {
    got = json::parse(actual);
  } catch (const json::exception&) {
    return "the port's answer is not JSON: " + show(json(actual));
  }
  if (!got.is_object()) return "the port's answer is not an object";
  expand_runs(want);
  expand_runs(got);
  if (got.value("type", "") != "result") return "the port's answer is not a result: " + show(got);
  if (!got.contains("ok") || !got["ok"].is_boolean()) return "ok: missing or not a boolean";
  if (want["ok"] != got["ok"]) {
    return std::string("ok: expected ") + (want["ok"].get<bool>() ? "a result" : "error " + want["error"].dump()) +
           ", port " +
           (got["ok"].get<bool>() ? "a result"
                                  : "error " + got.value("error", json()).dump() + " (" +
                                        got.value("message", json("")).get<std::string>() + ")");
  }
  if (!want["ok"].get<bool>()) {
    return want["error"] == got.value("error", json()) ? "" : diff(want["error"], got.value("error", json()), "error");
  }
  for (const char* part : {"pack", "graph_bounds"}) {
    if (!got.contains(part)) return std::string(part) + ": missing in the port's result";
    std::string d = diff(want[part], got[part], part);
    if (!d.empty()) return d;
  }
  for (const auto& v : views) {
    if (!want["views"].contains(v)) continue;
    if (!got.contains("views") || !got["views"].contains(v)) return "views." + v + ": declared but missing";
    std::string d = diff(want["views"][v], got["views"][v], "views." + v);
    if (!d.empty()) return d;
  }
  return "";
}

}  // namespace seqpack::conformance
