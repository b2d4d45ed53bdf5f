// Fuzz target: arbitrary bytes as what a port writes to the runner, through
// the runner's own reading, decoding and comparison (issue 13). The bytes
// are the port's stdout: its first line is its hello (parse_hello), every
// further line an answer to the next of three fixed requests (a valid case
// with a pad segment, a rejected case, a session), read by the runner's
// LineReader in chunks whose size the first byte chooses, and compared with
// first_difference. Nothing may crash, hang or throw; and an answer that is
// accepted (no difference) must carry the request's id and verdict, so that
// no wrong answer passes silently.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqpack/conformance/port.hpp"
#include "seqpack/protocol/case_json.hpp"
#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"

namespace sc = seqpack::conformance;
namespace sp = seqpack::protocol;

namespace {

// PROTOCOL.md's example case (a pad segment), the same with a length
// mismatch, and a session of both.
sp::Case example(std::int64_t rows) {
  sp::Case c;
  c.layout.sample_lens = {5, 5};
  c.layout.split_lens = {2, 3, 1, 4};
  c.layout.attn_modes = {"causal", "full", "causal", "full"};
  c.layout.und_token_indexes = {0, 1, 5};
  c.rows = rows;
  c.options.full_seq_alignment = 4;
  c.options.causal_seq_alignment = 4;
  return c;
}

struct Request {
  std::string id;
  std::vector<sp::Case> steps;  // one case, or a session's steps
  bool session = false;
};

const std::vector<Request>& requests() {
  static const std::vector<Request> r = {
      {"c0", {example(10)}, false}, {"c1", {example(11)}, false}, {"s2", {example(10), example(11)}, true}};
  return r;
}

// What the runner expects for one request in one hello's encoding and views:
// the reference's line, read once, and the verdict an accepted answer must
// carry.
struct Expectation {
  std::vector<std::string> views;  // views_for the request's case(s)
  sp::ExpectedAnswer want;
  bool ok = false;
  nlohmann::json error;  // the error class when !ok
};

// The reference's answers depend on the request, the hello's views and its
// encoding alone, so they are computed once per such triple and kept for
// later inputs (the reference is not what this target fuzzes; the first
// input to name a triple still covers the code that writes it). Bounded: the
// cache starts over when it is full, never in the middle of an input.
class Expectations {
 public:
  void start_input() {
    if (cache_.size() >= kMaxEntries) cache_.clear();
  }
  const Expectation& get(std::size_t request, const std::vector<std::string>& declared, sp::Encoding encoding) {
    auto key = std::make_tuple(request, encoding, declared);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const Request& q = requests()[request];
    std::vector<std::string> views = q.session ? sp::views_for(q.steps, declared) : sp::views_for(q.steps[0], declared);
    std::string line = q.session ? sp::session_line(q.steps, q.id, views, encoding)
                                 : sp::result_line(q.steps[0], q.id, views, encoding);
    const nlohmann::json doc = nlohmann::json::parse(line);
    Expectation e{std::move(views), sp::ExpectedAnswer(std::move(line)), false, nullptr};
    if (!q.session) {
      e.ok = doc["ok"].get<bool>();
      if (!e.ok) e.error = doc["error"];
    }
    return cache_.emplace(std::move(key), std::move(e)).first->second;
  }

 private:
  static constexpr std::size_t kMaxEntries = 256;
  std::map<std::tuple<std::size_t, sp::Encoding, std::vector<std::string>>, Expectation> cache_;
};

Expectations& expectations() {
  static Expectations e;
  return e;
}

[[noreturn]] void finding(const char* what, const std::string& answer, const std::string& detail) {
  std::fprintf(stderr, "\nseqpack-fuzz: port_answer: %s\nanswer: %s\ndetail: %s\n", what,
               sp::printable(answer, 400).c_str(), detail.c_str());
  std::abort();
}

// An accepted answer names the request and gives its verdict.
void check_accepted(const Request& q, const Expectation& e, const std::string& answer) {
  nlohmann::json got = nlohmann::json::parse(answer, nullptr, false);
  const std::string& want = e.want.line();
  if (!got.is_object() || !got.contains("id") || got["id"] != q.id) finding("accepted with a wrong id", answer, want);
  if (q.session) {
    if (!got.contains("results") || !got["results"].is_array() || got["results"].size() != q.steps.size()) {
      finding("accepted session with the wrong steps", answer, want);
    }
    return;
  }
  if (!got.contains("ok") || got["ok"] != e.ok) finding("accepted with the wrong verdict", answer, want);
  if (!e.ok && (!got.contains("error") || got["error"] != e.error)) {
    finding("accepted with the wrong error class", answer, want);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;  // how the bytes arrive
  sc::LineReader reader;
  std::vector<std::string> lines;
  for (std::size_t at = 1; at < size; at += chunk) {
    const std::size_t n = std::min(chunk, size - at);
    if (!reader.append(reinterpret_cast<const char*>(data + at), n)) {
      if (reader.error().empty()) finding("a refused append without a reason", "", "");
      break;
    }
    while (auto line = reader.next()) lines.push_back(std::move(*line));
  }
  if (lines.empty()) return 0;
  sc::Hello hello;
  try {
    hello = sc::parse_hello(lines[0], "fuzz", true);
  } catch (const sp::InputError&) {
    return 0;  // a setup error, named
  } catch (const std::exception& e) {
    finding("parse_hello threw something other than InputError", lines[0], e.what());
  }
  expectations().start_input();
  for (std::size_t k = 1; k < lines.size(); ++k) {
    const std::size_t r = (k - 1) % requests().size();
    const Expectation& e = expectations().get(r, hello.views, hello.encoding);
    std::string diff;
    try {
      diff = sp::first_difference(e.want, lines[k], e.views);
    } catch (const std::exception& ex) {
      finding("first_difference threw", lines[k], ex.what());
    }
    if (diff.empty()) check_accepted(requests()[r], e, lines[k]);
  }
  return 0;
}
