// The protocol's limits: bounded JSON reading, bounded lines, and the size of
// a case decided before anything is allocated.
#include "seqpack/protocol/limits.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <istream>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqpack/common/index_math.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::protocol {
namespace {

namespace ref = seqpack::reference;
using nlohmann::json;

// A SAX handler that builds the document as nlohmann's own parser does, and
// refuses what the limits forbid the moment it is seen: a container past the
// depth, a value past the count, a key an object already holds.
class BoundedDom : public nlohmann::json_sax<json> {
 public:
  BoundedDom(json& root, std::size_t max_values) : root_(root), max_values_(max_values) {}
  std::string problem;  // set when a limit stopped the parse

  bool null() override { return put(json(nullptr)); }
  bool boolean(bool v) override { return put(json(v)); }
  bool number_integer(number_integer_t v) override { return put(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return put(json(v)); }
  bool string(string_t& v) override { return put(json(std::move(v))); }
  bool binary(binary_t&) override { return refuse("binary values are not JSON"); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    json& object = *stack_.back();
    if (object.contains(k)) return refuse("key \"" + printable(k) + "\" repeated in " + where(false));
    keys_.back() = k;
    slot_ = &object[k];
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    syntax = "not JSON at byte " + std::to_string(position) + ": " + printable(e.what(), 300);
    return false;
  }
  std::string syntax;  // set on a syntax error

 private:
  // The path of the value being read, e.g. views.getters.und_rows.
  // With `inner` false, the path of the innermost open container itself.
  std::string where(bool inner = true) const {
    std::string path;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      const std::string& k = keys_[i];
      if (k.empty() || (!inner && i + 1 == keys_.size())) continue;
      path += (path.empty() ? "" : ".") + printable(k, 40);
    }
    return path.empty() ? "the top-level object" : path;
  }
  bool count() {
    if (++values_ > max_values_) {
      return refuse("more than " + std::to_string(max_values_) + " values (the limit of PROTOCOL.md)");
    }
    return true;
  }
  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool put(json&& v) {
    if (!count()) return false;
    place(std::move(v));
    return true;
  }
  bool open(json&& v) {
    if (!count()) return false;
    if (stack_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
      return refuse("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels in " + where());
    }
    stack_.push_back(place(std::move(v)));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool refuse(std::string why) {
    problem = std::move(why);
    return false;
  }

  json& root_;
  std::vector<json*> stack_;
  std::vector<std::string> keys_;
  json* slot_ = nullptr;
  std::size_t values_ = 0;
  std::size_t max_values_;
};

// The length of the valid UTF-8 sequence at `p` (at most `n` bytes), or 0.
std::size_t utf8_length(const unsigned char* p, std::size_t n) {
  const unsigned char c = p[0];
  std::size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (n < len || p[1] < lo || p[1] > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (p[k] < 0x80 || p[k] > 0xBF) return 0;
  }
  return len;
}

}  // namespace

// Never recurses: the containers open are a stack.
std::optional<json> parse_simple_json(std::string_view text, std::size_t max_values) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const auto skip = [&] {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) ++p;
  };
  // A string after its opening quote, into `out`.
  const auto string = [&](std::string& out) {
    const char* const from = p;
    while (p < end && *p != '"') {
      if (*p < 0x20 || *p > 0x7E || *p == '\\') return false;
      ++p;
    }
    if (p == end) return false;
    out.assign(from, p);
    ++p;
    return true;
  };
  json root;
  std::vector<json*> stack;  // the open containers
  std::size_t values = 0;
  std::string key;
  json* slot = &root;
  // `"key":` of the object on top, into the slot for its value.
  const auto member = [&] {
    skip();
    if (p == end || *p != '"') return false;
    ++p;
    if (!string(key)) return false;
    skip();
    if (p == end || *p != ':') return false;
    ++p;
    json& object = *stack.back();
    if (object.contains(key)) return false;
    slot = &object[key];
    return true;
  };
  for (;;) {
    // A value, into `slot`.
    skip();
    if (p == end || ++values > max_values) return std::nullopt;
    bool opened = false;
    const char c = *p;
    if (c == '{' || c == '[') {
      if (stack.size() >= static_cast<std::size_t>(kMaxJsonDepth)) return std::nullopt;
      *slot = c == '{' ? json::object() : json::array();
      stack.push_back(slot);
      ++p;
      skip();
      if (p < end && *p == (c == '{' ? '}' : ']')) {
        ++p;
        stack.pop_back();
      } else {
        opened = true;
      }
    } else if (c == '"') {
      ++p;
      std::string v;
      if (!string(v)) return std::nullopt;
      *slot = std::move(v);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const bool negative = c == '-';
      if (negative) ++p;
      const char* const digits = p;
      std::uint64_t v = 0;
      while (p < end && *p >= '0' && *p <= '9') {
        if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, static_cast<unsigned>(*p - '0'), &v)) {
          return std::nullopt;
        }
        ++p;
      }
      const std::size_t n = static_cast<std::size_t>(p - digits);
      if (n == 0 || (*digits == '0' && (n > 1 || negative))) return std::nullopt;
      if (negative && v > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
      // A fraction or exponent ('.', 'e') is no separator: refused below.
      if (negative) {
        *slot = -static_cast<std::int64_t>(v);
      } else {
        *slot = v;
      }
    } else {
      const std::string_view rest(p, static_cast<std::size_t>(end - p));
      if (rest.substr(0, 4) == "true") {
        *slot = true;
        p += 4;
      } else if (rest.substr(0, 5) == "false") {
        *slot = false;
        p += 5;
      } else if (rest.substr(0, 4) == "null") {
        *slot = nullptr;
        p += 4;
      } else {
        return std::nullopt;
      }
    }
    if (opened) {
      if (stack.back()->is_object()) {
        if (!member()) return std::nullopt;
      } else {
        stack.back()->push_back(json());
        slot = &stack.back()->back();
      }
      continue;
    }
    // After a value: a separator, or the ends of the containers it closes.
    for (;;) {
      skip();
      if (stack.empty()) {
        if (p != end) return std::nullopt;
        return root;
      }
      if (p == end) return std::nullopt;
      json& top = *stack.back();
      if (*p == ',') {
        ++p;
        if (top.is_object()) {
          if (!member()) return std::nullopt;
        } else {
          top.push_back(json());
          slot = &top.back();
        }
        break;
      }
      if (*p != (top.is_object() ? '}' : ']')) return std::nullopt;
      ++p;
      stack.pop_back();
    }
  }
}

namespace {

__extension__ typedef __int128 Wide;

}  // namespace

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t i = 0;
  char hex[8];
  while (i < text.size() && out.size() < max) {
    const std::size_t len = utf8_length(p + i, text.size() - i);
    if (len == 0 || (len == 1 && (p[i] < 0x20 || p[i] == 0x7F))) {
      std::snprintf(hex, sizeof hex, len == 0 ? "\\x%02X" : "\\u%04X", p[i]);
      out += hex;
      ++i;
    } else if (len == 2 && p[i] == 0xC2 && p[i + 1] < 0xA0) {  // C1: U+0080 to U+009F
      std::snprintf(hex, sizeof hex, "\\u%04X", p[i + 1]);
      out += hex;
      i += 2;
    } else {
      out.append(text.data() + i, len);
      i += len;
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

std::string xml_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_length(p + i, text.size() - i);
    if (len == 0 || (len == 3 && p[i] == 0xEF && p[i + 1] == 0xBF && p[i + 2] >= 0xBE)) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      i += len == 0 ? 1 : len;
      continue;
    }
    if (len > 1) {
      out.append(text.data() + i, len);
      i += len;
      continue;
    }
    const char ch = text[i++];
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r' ? '?' : ch;
    }
  }
  return out;
}

nlohmann::json parse_json(std::string_view text, const std::string& what, std::size_t max_values) {
  if (auto simple = parse_simple_json(text, max_values)) return std::move(*simple);
  json root;
  BoundedDom dom(root, max_values);
  bool ok = false;
  try {
    ok = json::sax_parse(text.data(), text.data() + text.size(), &dom, json::input_format_t::json, true);
  } catch (const json::parse_error& e) {
    throw InputError(what + ": not JSON at byte " + std::to_string(e.byte) + ": " + printable(e.what(), 300));
  }
  if (!ok && !dom.problem.empty()) throw InputError(what + ": " + dom.problem);
  if (!ok) throw InputError(what + ": " + (dom.syntax.empty() ? std::string("not JSON") : dom.syntax));
  return root;
}

std::size_t answer_value_limit(std::size_t expected_values) {
  return std::max(kMaxJsonValues, expected_values > SIZE_MAX / 2 ? SIZE_MAX : 2 * expected_values);
}

CaseShape plan_case(const Case& c) {
  ref::validate_options(c.options, c.marks);
  ref::validate_layout(c.layout);
  const auto& L = c.layout;
  // As build_pack: the row count first (saturating), then the token count.
  std::int64_t sum = 0;
  for (const std::int64_t s : L.sample_lens) sum = s > INT64_MAX - sum ? INT64_MAX : sum + s;
  if (c.rows != sum) {
    throw ref::Error(ref::Errc::length_mismatch, "rows",
                     "the packed sequence has " + std::to_string(c.rows) + " rows but sample_lens sum to " +
                         (sum == INT64_MAX ? std::string("more than int64") : std::to_string(sum)));
  }
  Wide total = 0;
  for (const std::int64_t s : L.sample_lens) total += s;
  if (total > common::kInt32Max) {
    throw ref::Error(ref::Errc::overflow, "sample_lens",
                     "the batch has " + std::to_string(sum) + " tokens, past int32");
  }
  // The metadata prepare_metadata builds, less its per-token lists: every
  // count and offset fits int32 now (the layout is valid and tiles).
  ref::Metadata meta;
  meta.sample_lens = L.sample_lens;
  meta.split_lens = L.split_lens;
  meta.sample_offsets.push_back(0);
  for (const std::int64_t s : L.sample_lens) {
    meta.sample_offsets.push_back(static_cast<std::int32_t>(meta.sample_offsets.back() + s));
    meta.max_sample_len = std::max(meta.max_sample_len, static_cast<std::int32_t>(s));
  }
  meta.causal_seq_offsets.push_back(0);
  meta.full_only_seq_offsets.push_back(0);
  for (std::size_t j = 0; j < L.split_lens.size(); ++j) {
    const bool causal = L.attn_modes[j] == "causal";
    meta.attn_modes.push_back(causal ? ref::AttnMode::causal : ref::AttnMode::full);
    const auto len = static_cast<std::int32_t>(L.split_lens[j]);
    auto& offsets = causal ? meta.causal_seq_offsets : meta.full_only_seq_offsets;
    offsets.push_back(offsets.back() + len);
    auto& max_len = causal ? meta.max_causal_len : meta.max_full_len;
    max_len = std::max(max_len, len);
    (causal ? meta.num_causal_tokens : meta.num_full_tokens) += len;
  }
  const ref::PackShape shape = ref::plan_pack(meta, c.rows, c.options, c.marks);
  return {shape.causal_len, shape.full_len};
}

std::optional<std::string> too_large(const Case& c, const CaseShape& shape, std::int64_t row_limit,
                                     std::size_t row_bytes) {
  const std::int64_t padded = shape.causal_len + shape.full_len;
  if (padded > row_limit || c.rows > row_limit) {
    return "rows: padded streams of " + std::to_string(padded) + " rows (" + std::to_string(c.rows) +
           " packed) exceed the oracle's limit of " + std::to_string(row_limit);
  }
  // Both counts are below 2^31 here, so the product fits int64.
  const std::int64_t bytes = (c.rows + padded) * static_cast<std::int64_t>(row_bytes);
  if (bytes > kMaxCaseBytes) {
    return "row_bytes: " + std::to_string(c.rows) + " packed and " + std::to_string(padded) + " padded rows of " +
           std::to_string(row_bytes) + " bytes exceed the oracle's limit of " + std::to_string(kMaxCaseBytes) +
           " bytes";
  }
  if (c.options.cp_world_size > kMaxOracleWorldSize) {
    return "options.cp_world_size: " + std::to_string(c.options.cp_world_size) +
           " ranks exceed the oracle's limit of " + std::to_string(kMaxOracleWorldSize) +
           " (the cp views list one entry per rank)";
  }
  return std::nullopt;
}

bool read_line_bounded(std::istream& in, std::string& line, std::size_t max, std::size_t* too_long) {
  line.clear();
  *too_long = 0;
  in.clear();         // the state of an earlier read does not stop this one
  std::size_t n = 0;  // bytes of the line so far
  bool any = false;
  // In chunks: getline copies out of the stream's buffer up to the newline.
  std::array<char, std::size_t{1} << 16> chunk;
  for (;;) {
    in.getline(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    // A read error (getline catches the stream buffer's exception and sets
    // badbit): retrying would spin forever on it.
    if (in.bad()) throw InputError("the input cannot be read (an I/O error, or not a file)");
    const bool eof = in.eof(), filled = in.fail() && !eof;
    if (filled && got != chunk.size() - 1) throw InputError("the input stream stopped mid-line");
    if (eof && got == 0 && !any) {
      in.setstate(std::ios::eofbit | std::ios::failbit);
      return false;
    }
    any = true;
    // The newline, when it was read, is counted in gcount but not stored.
    const std::size_t stored = eof || filled ? got : got - 1;
    if (n + stored <= max) {
      line.append(chunk.data(), stored);
    } else if (n <= max) {
      std::string().swap(line);  // past the limit: nothing more is kept
    }
    n += stored;
    if (!filled) break;  // the newline or the end of the input
    in.clear();          // a chunk filled: the line goes on
  }
  if (n > max) *too_long = n;
  return true;
}

}  // namespace seqpack::protocol
