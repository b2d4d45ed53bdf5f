// parse_shard (verdict.hpp): `--shard I/N` of conform and exhaustive, in a
// unit of its own so that the LibTorch helper of `seqpack exhaustive` links
// it without the rest of verdict.cpp.
#include <algorithm>
#include <cstdint>
#include <string>

#include "verdict.hpp"

namespace seqpack::cli {

bool parse_shard(const std::string& text, std::int64_t* index, std::int64_t* count) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() || slash > 6 || text.size() - slash - 1 > 6)
    return false;
  const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
  const auto digits = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  if (!digits(a) || !digits(b)) return false;
  const std::int64_t i = std::stoll(a), n = std::stoll(b);
  if (n < 1 || n > 100000 || i >= n) return false;
  *index = i;
  *count = n;
  return true;
}

}  // namespace seqpack::cli
