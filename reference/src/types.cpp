// Out-of-line members of the value types.
#include "seqpack/reference/types.hpp"

#include <algorithm>
#include <limits>
#include <string_view>

#include "seqpack/reference/errors.hpp"

namespace seqpack::reference {

const char* to_string(AttnMode mode) noexcept { return mode == AttnMode::causal ? "causal" : "full"; }

Rows::Rows(std::size_t rows, std::size_t row_bytes) : rows_(rows), row_bytes_(row_bytes) {
  if (row_bytes != 0 && rows > std::numeric_limits<std::size_t>::max() / row_bytes) {
    throw Error(Errc::invalid_argument, "rows",
                std::to_string(rows) + " rows of " + std::to_string(row_bytes) + " bytes overflow size_t");
  }
  bytes_.assign(rows * row_bytes, std::byte{0});
}

std::vector<std::int64_t> packer_und_tokens(const Layout& layout) {
  std::vector<std::int64_t> und;
  std::int64_t pos = 0;
  for (std::size_t j = 0; j < layout.split_lens.size(); ++j) {
    const std::int64_t len = std::max<std::int64_t>(0, layout.split_lens[j]);
    if (j < layout.attn_modes.size() && std::string_view(layout.attn_modes[j]) == "causal") {
      for (std::int64_t i = 0; i < len; ++i) und.push_back(pos + i);
    }
    pos += len;
  }
  return und;
}

bool Metadata::matches_layout(const Layout& layout) const {
  if (layout.sample_lens != sample_lens || layout.split_lens != split_lens) return false;
  if (layout.attn_modes.size() != attn_modes.size()) return false;
  for (std::size_t i = 0; i < attn_modes.size(); ++i) {
    if (layout.attn_modes[i] != to_string(attn_modes[i])) return false;
  }
  return true;
}

}  // namespace seqpack::reference
