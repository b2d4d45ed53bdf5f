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

#include "seqpack/conformance/protocol.hpp"
#include "seqpack/conformance/runner.hpp"
#include "seqpack/fuzz/decode.hpp"
#include "seqpack/properties/generators.hpp"

namespace fs = std::filesystem;
namespace sc = seqpack::conformance;
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
  std::vector<sp::Case> cases;
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
        (i % 2 ? hello : std::string()) + sc::request_line(cases[i], "c" + std::to_string(i)) + "\n";
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
  std::printf("fuzz_seeds: %zu case seeds per decoder target, %zu protocol seeds in %s\n", n, p, out.c_str());
  return 0;
}
