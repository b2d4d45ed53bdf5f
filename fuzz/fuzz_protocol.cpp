// Fuzz target: arbitrary bytes as protocol request lines into the oracle's
// request handling (seqpack oracle's loop). Every line must get exactly one
// JSON object back, a result or a named error, never a crash or a hang. The
// oracle's row limit is lowered (kRowLimit) so that each input stays fast.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "seqpack/conformance/protocol.hpp"

namespace sc = seqpack::conformance;

// The oracle's row limit here: requests are about the protocol (parsing,
// validation, error classes, the limit's own refusal), and a result's cost
// grows with its rows on both sides (the oracle writes it, this target parses
// it back). 1024 rows keep every bucket step of 128 and the refusal in reach.
constexpr std::int64_t kRowLimit = 1024;

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
    const std::string answer = oracle.handle(line);
    const nlohmann::json j = nlohmann::json::parse(answer, nullptr, false);
    const bool ok = j.is_object() && j.contains("type") && j["type"].is_string() &&
                    (j["type"] == "hello" || (j["type"] == "result" && j.contains("ok") && j["ok"].is_boolean() &&
                                              (j["ok"] == true || (j.contains("error") && j["error"].is_string()))));
    if (!ok || answer.find('\n') != std::string::npos) {
      std::fprintf(stderr, "\nseqpack-fuzz: protocol: malformed answer\nline: %s\nanswer: %s\n", line.c_str(), answer.c_str());
      std::abort();
    }
  }
  return 0;
}
