// A main for the fuzz targets without libFuzzer (g++ builds): runs every file
// named on the command line, or every file of every directory named, through
// LLVMFuzzerTestOneInput, and prints how many ran. CTest's corpus label uses
// it to replay corpus/<target>/.
#include <algorithm>
#include <cstdint>
#include <cstdio>
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
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
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
