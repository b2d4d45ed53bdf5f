// The oracle's private JSON writer (not installed): an append-only writer
// of result lines, with the helpers that write marks, error lines and values
// in messages (defined in writer.cpp). Its users: views.cpp (the views),
// results.cpp (result lines), oracle.cpp (hello and errors), compare.cpp.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/case_json.hpp"
#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::protocol::detail {

namespace ref = seqpack::reference;
using nlohmann::json;

/// Thrown by a Writer whose text would pass kMaxOracleAnswerBytes.
struct AnswerTooLarge {};

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
    // Printable ASCII without quote or backslash is written as it is (what
    // the serializer below writes for it, without its allocations).
    if (writes_as_is(s)) {
      put('"');
      raw(s.data(), s.size());
      put('"');
      return *this;
    }
    // Text that is not UTF-8 (a port's or a user's) is written with U+FFFD.
    const std::string quoted = json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    raw(quoted.data(), quoted.size());
    return *this;
  }
  /// A string that needs no escaping (base64, class names).
  Writer& plain_str(const std::string& s) {
    sep();
    put('"');
    raw(s.data(), s.size());
    put('"');
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
    // The answer's bound (PROTOCOL.md "Limits"), on the bytes reserved (an
    // integer reserves 21): checked before the buffer grows, so that the
    // buffer never passes it, and the same on any machine.
    if (n > kMaxOracleAnswerBytes - size_) throw AnswerTooLarge{};
    const std::size_t cap = std::min(kMaxOracleAnswerBytes, std::max(cap_ * 2, size_ + n + 256));
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
inline RowNames row_names(const ref::Rows& rows) { return RowNames{rows}; }

/// Writes the graph marks as {"image": [causal, full], "video": [...]}.
void marks(Writer& w, const ref::GraphMarks& m);

/// An error result line: `cls` the error class, `message` as it is.
std::string error_line(const std::string& id, const std::string& cls, const std::string& message);

/// A JSON value as a message shows it (printable, cut past 200 bytes).
std::string show(const json& v);

/// An integer as the protocol reads one (PROTOCOL.md, "Numbers"): a JSON
/// number written without fraction or exponent whose value fits int64.
/// nlohmann reads `6.0` and `1e3` as floats and a number past INT64_MAX as
/// unsigned; both are false here, as is every other value.
inline bool is_int64(const json& v) {
  return v.is_number_integer() &&
         !(v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX));
}

/// Type-exact equality of two JSON values (PROTOCOL.md, "Numbers").
/// nlohmann's == compares numbers by value across their types: 6.0 equals 6,
/// and 2^64 - 1 (read as unsigned) equals -1 (cast to int64). Here an integer
/// equals only an integer of the same exact value, and a float only a float;
/// the reference writes no floats, so a float in a port's answer is always a
/// difference. Every comparison of a port's answer uses this, never ==.
bool same(const json& a, const json& b);

}  // namespace seqpack::protocol::detail
