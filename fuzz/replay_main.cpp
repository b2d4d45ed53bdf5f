// A main for the fuzz targets without libFuzzer (g++ builds): runs every file
// named on the command line, or every file of every directory named, through
// LLVMFuzzerTestOneInput, and prints how many ran. CTest's corpus label uses
// it to replay corpus/<target>/. With SEQPACK_REPLAY_TIMES set, it prints
// each input's time in microseconds and size (fuzz/README.md: the cost of an
// input).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int run_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", p.c_str());
    return 1;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto start = std::chrono::steady_clock::now();
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  if (std::getenv("SEQPACK_REPLAY_TIMES")) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
    std::printf("%lld us %zu bytes %s\n", static_cast<long long>(us.count()), bytes.size(), p.filename().c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  std::size_t files = 0;
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p = argv[i];
    if (std::filesystem::is_directory(p)) {
      std::vector<std::filesystem::path> entries;
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        if (e.is_regular_file()) entries.push_back(e.path());
      }
      std::sort(entries.begin(), entries.end());
      for (const auto& e : entries) {
        failures += run_file(e);
        ++files;
      }
    } else {
      failures += run_file(p);
      ++files;
    }
  }
  std::printf("replay: %zu inputs, none failed\n", files);
  return failures == 0 && files > 0 ? 0 : 1;
}
