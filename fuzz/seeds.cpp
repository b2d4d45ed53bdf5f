// Writes seed inputs for every fuzz target into OUT_DIR/<target>/ (one file
// per seed, named by index; fuzz/make-corpus.sh merges them into corpus/,
// where libFuzzer names them by the SHA-1 of their content):
//  - the golden vectors' cases, in the raw form (build_pack, differential,
//    context_parallel, large_pack) and as request lines after a hello
//    (protocol; lines of at most 4096 bytes, its max_len);
//  - generated cases of both profiles (fixed seeds), the same way;
//  - structured-form inputs from a fixed byte stream;
//  - malformed request lines (protocol).
//   fuzz_seeds VECTORS_DIR OUT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "seqpack/conformance/runner.hpp"
#include "seqpack/fuzz/decode.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/protocol/protocol.hpp"

namespace fs = std::filesystem;
namespace sc = seqpack::conformance;
namespace proto = seqpack::protocol;
namespace sp = seqpack::properties;

namespace {

void write(const fs::path& dir, std::size_t& n, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / ("seed-" + std::to_string(n++)), std::ios::binary) << bytes;
}

std::string as_string(const std::vector<std::uint8_t>& v) { return std::string(v.begin(), v.end()); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_seeds VECTORS_DIR OUT_DIR\n");
    return 2;
  }
  const fs::path out = argv[2];
  std::vector<proto::Case> cases;
  for (const sc::Vector& v : sc::read_vectors(argv[1])) cases.push_back(v.c);
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const auto gen = seed % 2 ? sp::gen_packer_case() : sp::gen_strict_case();
    cases.push_back(gen(rc::Random(seed), 30).value());
  }
  std::size_t n = 0, p = 0;
  const std::string hello =
      "{\"type\":\"hello\",\"protocol\":\"seqpack-conformance/1\",\"encodings\":[\"plain\",\"runs\"]}\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string raw = as_string(seqpack::fuzz::encode_raw(cases[i]));
    for (const char* target : {"build_pack", "differential", "context_parallel", "large_pack"}) {
      // Within each target's max_len (options/<target>.options): 2048 bytes,
      // 65536 for large_pack; libFuzzer would cut a longer one.
      std::size_t k = n;
      if (raw.size() <= (std::string(target) == "large_pack" ? 65536u : 2048u)) write(out / target, k, raw);
    }
    ++n;
    // Only lines within fuzz_protocol's max_len (options/protocol.options):
    // libFuzzer would run the first 4096 bytes of a longer one.
    const std::string line =
        (i % 2 ? hello : std::string()) + proto::request_line(cases[i], "c" + std::to_string(i)) + "\n";
    if (line.size() <= 4096) write(out / "protocol", p, line);
  }
  std::mt19937_64 bytes(7);
  for (int i = 0; i < 64; ++i) {
    std::string s(1 + bytes() % 96, '\0');
    for (char& ch : s) ch = static_cast<char>(bytes());
    s[0] = static_cast<char>(s[0] & ~1);  // the structured form
    for (const char* target : {"build_pack", "differential", "context_parallel", "large_pack"}) {
      std::size_t k = n;
      write(out / target, k, s);
    }
    ++n;
  }
  for (const char* line : {"", "{", "[]", "{\"type\":\"case\"}", "{\"type\":\"nope\",\"id\":\"x\"}",
                           "{\"type\":\"case\",\"id\":\"x\",\"layout\":{\"sample_lens\":[1e400]}}",
                           "{\"type\":\"hello\",\"protocol\":\"seqpack-conformance/1\",\"encodings\":[\"runs\"]}"}) {
    write(out / "protocol", p, std::string(line) + "\n");
  }
  // port_answer: a chunk-size byte, a port's hello, then its answers to the
  // target's three requests (fuzz_port_answer.cpp), right and hostile.
  std::size_t a = 0;
  proto::Case example;
  example.layout = {{5, 5}, {2, 3, 1, 4}, {"causal", "full", "causal", "full"}, {0, 1, 5}};
  example.rows = 10;
  example.options.full_seq_alignment = example.options.causal_seq_alignment = 4;
  proto::Case mismatch = example;
  mismatch.rows = 11;
  for (const bool runs : {false, true}) {
    for (const bool views : {false, true}) {
      const std::vector<std::string> declared = views ? proto::oracle_views() : std::vector<std::string>{};
      std::string hello = "{\"type\":\"hello\",\"protocol\":\"seqpack-conformance/1\",\"name\":\"seed\"";
      if (runs) hello += ",\"encoding\":\"runs\"";
      hello += ",\"views\":[";
      for (std::size_t i = 0; i < declared.size(); ++i) hello += (i ? ",\"" : "\"") + declared[i] + "\"";
      hello += "]}\n";
      const proto::Encoding e = runs ? proto::Encoding::runs : proto::Encoding::plain;
      const std::string c0 = proto::result_line(example, "c0", proto::views_for(example, declared), e);
      const std::string c1 = proto::result_line(mismatch, "c1", proto::views_for(mismatch, declared), e);
      const std::string s2 =
          proto::session_line({example, mismatch}, "s2", proto::views_for({example, mismatch}, declared), e);
      write(out / "port_answer", a,
            std::string(1, static_cast<char>(runs ? 7 : 63)) + hello + c0 + "\n" + c1 + "\n" + s2 + "\n");
    }
  }
  const std::string runs_hello =
      "\x05{\"type\":\"hello\",\"protocol\":\"seqpack-conformance/1\",\"views\":[],\"encoding\":\"runs\"}\n";
  for (const std::string& answer :
       {std::string("{\"type\":\"result\",\"id\":\"c0\",\"ok\":true,\"pack\":{\"causal_rows\":{\"runs\":[0,"
                    "1000000000000,1]}}}"),
        std::string("{\"type\":\"result\",\"id\":\"c1\",\"ok\":false,\"error\":\"length_mismatch\",\"message\":5}"),
        std::string("{\"type\":5,\"id\":\"c0\"}"), std::string("{\"type\":\"result\",\"id\":\"x\xff\"}"),
        std::string(200, '[') + std::string(200, ']'),
        std::string("{\"type\":\"result\",\"id\":\"wrong\",\"ok\":false,\"error\":\"length_mismatch\"}"),
        // The right verdict for c1 under another id: only the id check fails it.
        std::string("x\n{\"type\":\"result\",\"id\":\"c0\",\"ok\":false,\"error\":\"length_mismatch\"}"),
        std::string("{\"ok\":true,\"type\":\"result\",\"ok\":false}"), std::string("\xff\xfe")}) {
    write(out / "port_answer", a, runs_hello + answer + "\n");
  }
  for (const std::string& bad_hello :
       {std::string("{\"type\":\"hello\",\"protocol\":\"seqpack-conformance/9\"}"),
        std::string("{\"type\":\"hello\",\"protocol\":\"seqpack-conformance/1\",\"views\":5}"), std::string("hello")}) {
    write(out / "port_answer", a, "\x01" + bad_hello + "\n");
  }
  std::printf("fuzz_seeds: %zu case seeds per decoder target, %zu protocol seeds, %zu port_answer seeds in %s\n", n, p,
              a, out.c_str());
  return 0;
}
