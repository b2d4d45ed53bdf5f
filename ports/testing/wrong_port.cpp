// A deliberately wrong port for the runner's own tests: the reference oracle
// with one fault, a crash or a hang, chosen on the command line.
//   wrong_port max_sample_len   pad_segment.max_sample_len forgets the pad rows
//   wrong_port crash_cp N       exits without answering when cp_world_size == N
//   wrong_port hang_cp N        never answers when cp_world_size == N
//   wrong_port pad_row          a pad segment's full stream one row short
//                               (its reserved row forgotten)
//   wrong_port two_faults       max_sample_len, and overflow answered as
//                               invalid_layout (two distinct faults)
//   wrong_port no_pad_samples   the pad segment missing on sample_offsets
//                               (pad_segment.sample_offsets = the plain ones,
//                               and its all_seq_padded view returns them, as
//                               the original's getter returns the field)
//   wrong_port full_offsets_plus1
//                               full_only_seq_offsets: every entry after the
//                               first one greater, capped at the full
//                               stream's rows (real rows change segment; a
//                               case whose full stream holds padding only
//                               keeps the difference and loses the harm)
//   wrong_port pad_row_front    a pad segment's full stream one row short, its
//                               first row dropped, in cases and session steps
//                               alike (one fault, seen as a value or as a
//                               length difference of full_only_rows)
//   wrong_port long_causal N    a causal stream of more than N real rows gets
//                               its first row wrong, in cases and session
//                               steps (a fault that only long cases show)
//   wrong_port session_marks N  a session's last step (of two or more) has
//                               graph_bounds.image[0] one too high when its
//                               steps hold more than N samples together (a
//                               fault only sessions show)
//   wrong_port setter_all       set_all_seq also overwrites the padding rows
//                               (views.setters.after_set_all: a full padding
//                               row read as set_all_seq's row, not set_gen_seq's)
//   wrong_port scoped           declares in its hello every case option but
//                               pad_segment_only_when_padded, and refuses a
//                               case that sets it (unsupported_option)
//   wrong_port unscoped         the same refusal, without the declaration
//   wrong_port cp_swap          the cp_shards view lists ranks 0 and 1's causal
//                               rows the other way round
//   wrong_port nan_payload      the payload view's streams with every NaN
//                               made the canonical quiet NaN (a fault of the
//                               rows' contents, not of their places: as a
//                               float copy through a register can do)
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/protocol.hpp"

namespace {

const char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string from_base64(const std::string& text) {
  std::string out;
  unsigned bits = 0;
  int have = 0;
  for (const char ch : text) {
    const char* at = std::strchr(kBase64, ch);
    if (ch == '=' || at == nullptr || ch == '\0') break;
    bits = (bits << 6) | static_cast<unsigned>(at - kBase64);
    have += 6;
    if (have >= 8) {
      have -= 8;
      out.push_back(static_cast<char>((bits >> have) & 0xFF));
    }
  }
  return out;
}

std::string to_base64(const std::string& bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(kBase64[(v >> 18) & 63]);
    out.push_back(kBase64[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kBase64[(v >> 6) & 63] : '=');
    out.push_back(i + 2 < bytes.size() ? kBase64[v & 63] : '=');
  }
  return out;
}

// Every 8-byte NaN of `b64` (little-endian float64 rows) as 0x7FF8000000000000.
std::string canonical_nans(const std::string& b64) {
  std::string bytes = from_base64(b64);
  for (std::size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i, 8);
    if ((bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (bits & 0x000FFFFFFFFFFFFFull) != 0) {
      bits = 0x7FF8000000000000ull;
      std::memcpy(&bytes[i], &bits, 8);
    }
  }
  return to_base64(bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const long n = argc > 2 ? std::atol(argv[2]) : 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string answer = seqpack::protocol::handle_line(line);
    const auto req = nlohmann::json::parse(line, nullptr, false);
    const long cp = req.is_object() && req.contains("options") ? req["options"].value("cp_world_size", 1L) : 1L;
    if (mode == "crash_cp" && cp == n) return 3;
    if (mode == "scoped" || mode == "unscoped") {
      const bool hello = req.is_object() && req.value("type", "") == "hello";
      if (hello && mode == "scoped") {
        auto h = nlohmann::json::parse(answer);
        h["options"] = {"cp_world_size", "causal_seq_alignment", "full_seq_alignment", "pad_for_cuda_graphs",
                        "is_image_batch"};
        answer = h.dump();
      }
      const auto sets_it = [](const nlohmann::json& c) {
        return c.is_object() && c.contains("options") && c["options"].value("pad_segment_only_when_padded", false);
      };
      bool refused = sets_it(req);
      if (req.is_object() && req.contains("cases") && req["cases"].is_array()) {
        for (const auto& c : req["cases"]) refused = refused || sets_it(c);
      }
      if (refused) {
        answer = nlohmann::json{{"type", "result"},
                                {"id", req.value("id", "")},
                                {"ok", false},
                                {"error", "unsupported_option"},
                                {"message", "no pad_segment_only_when_padded"}}
                     .dump();
      }
    }
    if (mode == "hang_cp" && cp == n) pause();
    if (mode == "max_sample_len" || mode == "two_faults") {
      auto r = nlohmann::json::parse(answer);
      if (r.value("ok", false) && !r["pack"]["pad_segment"].is_null()) {
        r["pack"]["pad_segment"]["max_sample_len"] = r["pack"]["max_sample_len"];
        answer = r.dump();
      }
      if (mode == "two_faults" && r.value("error", "") == "overflow") {
        r["error"] = "invalid_layout";
        answer = r.dump();
      }
    }
    if (mode == "no_pad_samples") {
      auto r = nlohmann::json::parse(answer);
      if (r.value("ok", false) && !r["pack"]["pad_segment"].is_null()) {
        r["pack"]["pad_segment"]["sample_offsets"] = r["pack"]["sample_offsets"];
        if (r.contains("views") && r["views"].contains("all_seq_padded")) {
          r["views"]["all_seq_padded"]["offsets"] = r["pack"]["sample_offsets"];
          r["views"]["all_seq_padded"]["max_len"] = r["pack"]["max_sample_len"];
        }
        answer = r.dump();
      }
    }
    if (mode == "full_offsets_plus1") {
      auto r = nlohmann::json::parse(answer);
      if (r.value("ok", false) && r["pack"]["full_only_seq_offsets"].size() >= 2) {
        const long rows = static_cast<long>(r["pack"]["full_only_rows"].size());
        auto& cu = r["pack"]["full_only_seq_offsets"];
        for (std::size_t i = 1; i < cu.size(); ++i) cu[i] = std::min(cu[i].get<long>() + 1, rows);
        answer = r.dump();
      }
    }
    if (mode == "pad_row") {
      auto r = nlohmann::json::parse(answer);
      if (r.value("ok", false) && !r["pack"]["pad_segment"].is_null() && !r["pack"]["full_only_rows"].empty()) {
        r["pack"]["full_only_rows"].erase(r["pack"]["full_only_rows"].size() - 1);
        answer = r.dump();
      }
    }
    if (mode == "pad_row_front") {
      auto r = nlohmann::json::parse(answer);
      const auto drop_first = [](nlohmann::json& result) {
        if (result.value("ok", false) && !result["pack"]["pad_segment"].is_null() &&
            !result["pack"]["full_only_rows"].empty()) {
          result["pack"]["full_only_rows"].erase(0);
        }
      };
      if (r.contains("results") && r["results"].is_array()) {
        for (auto& step : r["results"]) drop_first(step);
      } else {
        drop_first(r);
      }
      answer = r.dump();
    }
    if (mode == "long_causal" || mode == "session_marks") {
      auto r = nlohmann::json::parse(answer);
      if (mode == "long_causal") {
        const auto corrupt = [n](nlohmann::json& result) {
          if (!result.value("ok", false)) return;
          long real = 0;
          for (const auto& row : result["pack"]["causal_rows"]) real += row.get<long>() >= 0 ? 1 : 0;
          if (real > n) result["pack"]["causal_rows"][0] = -7;
        };
        if (r.contains("results") && r["results"].is_array()) {
          for (auto& step : r["results"]) corrupt(step);
        } else {
          corrupt(r);
        }
      } else if (r.contains("results") && r["results"].is_array() && r["results"].size() >= 2 && [&] {
                   long samples = 0;
                   for (const auto& step : req["cases"])
                     samples += static_cast<long>(step["layout"]["sample_lens"].size());
                   return samples > n;
                 }()) {
        auto& last = r["results"].back();
        if (last.value("ok", false))
          last["graph_bounds"]["image"][0] = last["graph_bounds"]["image"][0].get<long>() + 1;
      }
      answer = r.dump();
    }
    if (mode == "setter_all" || mode == "cp_swap") {
      auto r = nlohmann::json::parse(answer);
      auto* views = r.value("ok", false) && r.contains("views") ? &r["views"] : nullptr;
      if (views != nullptr && mode == "setter_all" && views->contains("setters")) {
        for (auto& v : (*views)["setters"]["after_set_all"]["full_only_rows"]) {
          const long name = v.get<long>();
          if ((name >> 26) == 2) v = (3L << 26) + (name & ((1L << 26) - 1));
        }
      }
      if (views != nullptr && mode == "cp_swap" && views->contains("cp_shards") && (*views)["cp_shards"].size() >= 2 &&
          (*views)["cp_shards"][0].contains("causal_rows")) {
        std::swap((*views)["cp_shards"][0]["causal_rows"], (*views)["cp_shards"][1]["causal_rows"]);
      }
      answer = r.dump();
    }
    if (mode == "nan_payload") {
      auto r = nlohmann::json::parse(answer);
      if (r.value("ok", false) && r.contains("views") && r["views"].contains("payload")) {
        for (const char* stream : {"causal", "full_only"}) {
          auto& b = r["views"]["payload"][stream];
          if (b.is_string()) b = canonical_nans(b.get<std::string>());
        }
        answer = r.dump();
      }
    }
    std::cout << answer << "\n" << std::flush;
  }
  return 0;
}
