// The command line's ports and data, found from its own executable.
#include "paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace seqpack::cli {
namespace {

namespace fs = std::filesystem;

// The ports an install may hold, with the names `seqpack check` prints.
struct Known {
  const char* file;
  const char* name;
};
constexpr Known kPorts[] = {{"gpu_port_cpp", "gpu implementation, thrust cpp backend"},
                            {"gpu_port_omp", "gpu implementation, thrust omp backend"},
                            {"torch_port", "LibTorch binding, CPU tensors"}};

const char* name_of(const std::string& file) {
  for (const Known& k : kPorts) {
    if (file == k.file) return k.name;
  }
  return nullptr;
}

}  // namespace

std::string shell_quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Paths find_paths(const std::string& self) {
  Paths paths;
  const fs::path dir = fs::path(self).parent_path();
  std::ifstream listed(dir / "seqpack.paths");
  if (listed) {
    // Lines "vectors DIR", "original FILE" and "port FILE", written by cli/CMakeLists.txt.
    paths.source = (dir / "seqpack.paths").string();
    std::string line;
    while (std::getline(listed, line)) {
      std::istringstream words(line);
      std::string key, value;
      words >> key;
      std::getline(words >> std::ws, value);
      if (key == "vectors") paths.vectors_dir = value;
      if (key == "original") paths.original = value;
      if (key == "port") {
        const char* name = name_of(fs::path(value).filename().string());
        paths.ports.push_back({name != nullptr ? std::string(name) : value, shell_quoted(value)});
      }
    }
    return paths;
  }
  paths.source = "the install layout from " + dir.string();
  const fs::path libexec = dir / SEQPACK_BIN_TO_LIBEXEC;
  const fs::path data = dir / SEQPACK_BIN_TO_DATA;
  if (fs::is_directory(data / "vectors")) paths.vectors_dir = (data / "vectors").lexically_normal().string();
  for (const Known& k : kPorts) {
    const fs::path port = (libexec / k.file).lexically_normal();
    if (access(port.c_str(), X_OK) == 0) paths.ports.push_back({k.name, shell_quoted(port.string())});
  }
  return paths;
}

int run_paths(const Paths& paths, const std::string& name, std::ostream& out, std::ostream& err) {
  // As for the tests (README, SEQPACK_ORIGINAL): the environment wins.
  const char* env = std::getenv("SEQPACK_ORIGINAL");
  const std::string original = env != nullptr && *env != '\0' ? std::string(env) : paths.original;
  const std::pair<const char*, std::string> known[] = {{"vectors", paths.vectors_dir}, {"original", original}};
  int rc = 0;
  for (const auto& [key, value] : known) {
    if (!name.empty() && name != key) continue;
    std::error_code ec;
    if (value.empty() || !fs::exists(value, ec)) {
      err << "paths: " << key << ": " << (value.empty() ? "not known to " + paths.source : value + " is absent")
          << (std::string(key) == "original" ? " (set SEQPACK_ORIGINAL, or configure with -DSEQPACK_ORIGINAL=FILE)"
                                             : "")
          << "\n";
      rc = 1;
      continue;
    }
    out << (name.empty() ? std::string(key) + " " : std::string()) << value << "\n";
  }
  return rc;
}

}  // namespace seqpack::cli
