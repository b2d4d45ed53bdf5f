// Fuzz target: arbitrary bytes as protocol request lines into the oracle's
// request handling (seqpack oracle's loop). Every line must get exactly one
// JSON object back, a result or a named error, never a crash or a hang; a
// line that parse_json's fast path reads must parse to the same document
// with nlohmann's parser. The
// oracle's row limit is lowered (kRowLimit) so that each input stays fast.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"

namespace sc = seqpack::protocol;

// The oracle's row limit here: requests are about the protocol (parsing,
// validation, error classes, the limit's own refusal), and a result's cost
// grows with its rows on both sides (the oracle writes it, this target parses
// it back). 1024 rows keep every bucket step of 128 and the refusal in reach.
constexpr std::int64_t kRowLimit = 1024;

// The top-level fields of an answer, read without building a document (an
// answer of a thousand rows is tens of kilobytes, and parsing it into a DOM
// took as long as the oracle's own work): whether the text is one JSON value
// that is an object, and its "type", "ok" and "error" members.
class AnswerShape : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool object = false, valid = true, ok = false, has_ok = false, error_is_string = false;
  std::string type;
  bool has_type = false;

  bool null() override { return scalar(); }
  bool boolean(bool b) override {
    if (depth_ == 1 && key_ == "ok") has_ok = true, ok = b;
    return scalar();
  }
  bool number_integer(number_integer_t) override { return scalar(); }
  bool number_unsigned(number_unsigned_t) override { return scalar(); }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool string(string_t& v) override {
    if (depth_ == 1 && key_ == "type") has_type = true, type = v;
    if (depth_ == 1 && key_ == "error") error_is_string = true;
    return scalar();
  }
  bool binary(binary_t&) override { return scalar(); }
  bool start_object(std::size_t) override {
    if (depth_ == 0) object = true;
    return open();
  }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      key_ = k;
      // A repeated member: the last one counts, as in a parsed document.
      if (k == "type") has_type = false;
      if (k == "ok") has_ok = false;
      if (k == "error") error_is_string = false;
    }
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    valid = false;
    return false;
  }

 private:
  bool scalar() {
    if (depth_ == 1) key_.clear();
    return true;
  }
  bool open() {
    if (depth_ == 1) key_.clear();
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  int depth_ = 0;
  std::string key_;
};

// One JSON object: a hello, or a result that is ok or names its error class.
bool well_formed(const std::string& answer) {
  AnswerShape shape;
  if (!nlohmann::json::sax_parse(answer, &shape) || !shape.valid || !shape.object || !shape.has_type) return false;
  if (shape.type == "hello") return true;
  return shape.type == "result" && shape.has_ok && (shape.ok || shape.error_is_string);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool limited = (sc::set_oracle_row_limit(kRowLimit), true);
  (void)limited;
  sc::Oracle oracle;
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::size_t start = 0;
  while (start <= input.size()) {
    std::size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    const std::string line = input.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    // parse_json's fast path reads a line only as nlohmann's parser does.
    if (const auto fast = sc::parse_simple_json(line)) {
      nlohmann::json general;
      try {
        general = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception& e) {
        std::fprintf(stderr, "\nseqpack-fuzz: protocol: the fast path read a line the parser refuses (%s)\nline: %s\n",
                     e.what(), line.c_str());
        std::abort();
      }
      if (fast->dump() != general.dump()) {
        std::fprintf(stderr, "\nseqpack-fuzz: protocol: the fast path read another document\nline: %s\nfast: %s\n",
                     line.c_str(), fast->dump().c_str());
        std::abort();
      }
    }
    const std::string answer = oracle.handle(line);
    if (!well_formed(answer) || answer.find('\n') != std::string::npos) {
      std::fprintf(stderr, "\nseqpack-fuzz: protocol: malformed answer\nline: %s\nanswer: %s\n", line.c_str(),
                   answer.c_str());
      std::abort();
    }
  }
  return 0;
}
