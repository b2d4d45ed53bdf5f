// A port with one planted bucket fault, for the runner's tests: the reference
// oracle, except that a stream needing exactly 2048 rows under CUDA graphs is
// bucketed as one above 2048, as the original with `n < 2048` for `n <= 2048`
// in _get_padded_size would: it pads to lcm(alignment, 256, cp) instead of
// lcm(alignment, 128, cp). The fault shows only where lcm(alignment, cp) has
// an odd part of 7 or at least 17 (2048 pads alike under both otherwise).
#include <iostream>
#include <numeric>
#include <string>

#include <nlohmann/json.hpp>

#include "seqpack/properties/generators.hpp"
#include "seqpack/protocol/protocol.hpp"

int main() {
  namespace sp = seqpack::properties;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string request = line;
    nlohmann::json req = nlohmann::json::parse(line, nullptr, false);
    if (req.is_object() && req.value("type", "") == "case") {
      try {
        const sp::Case c = sp::case_from_json(line);
        const auto [causal, full] = sp::stream_needs(c);
        for (const auto& [need, key] :
             {std::pair{causal, "causal_seq_alignment"}, std::pair{full, "full_seq_alignment"}}) {
          const std::int64_t a = key[0] == 'c' ? c.options.causal_seq_alignment : c.options.full_seq_alignment;
          if (c.options.pad_for_cuda_graphs && need == 2048 && a >= 1 && a < (std::int64_t{1} << 40)) {
            req["options"][key] = std::lcm(a, std::int64_t{256});
          }
        }
        request = req.dump();
      } catch (const std::exception&) {
        // Not a case the fault applies to: answered as the oracle answers it.
      }
    }
    std::string answer = seqpack::protocol::handle_line(request);
    if (req.is_object() && req.value("type", "") == "hello") {
      // No optional views: the pack alone is compared, which is where the
      // fault shows (and the runner's own tests stay quick).
      nlohmann::json hello = nlohmann::json::parse(answer);
      hello["views"] = nlohmann::json::array();
      answer = hello.dump();
    }
    std::cout << answer << "\n" << std::flush;
  }
  return 0;
}
