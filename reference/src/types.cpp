// Out-of-line members of the value types.
#include "seqpack/reference/types.hpp"

#include <limits>

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

bool Metadata::matches_layout(const Layout& layout) const {
  if (layout.sample_lens != sample_lens || layout.split_lens != split_lens) return false;
  if (layout.attn_modes.size() != attn_modes.size()) return false;
  for (std::size_t i = 0; i < attn_modes.size(); ++i) {
    if (layout.attn_modes[i] != to_string(attn_modes[i])) return false;
  }
  return true;
}

}  // namespace seqpack::reference
