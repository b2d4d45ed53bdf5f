// Uses the installed reference: builds NOTES.md's worked example E1 and checks
// its offsets and streams against the values worked by hand in NOTES.md.
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "seqpack/common/version.hpp"
#include "seqpack/reference/reference.hpp"

namespace ref = seqpack::reference;

int main() {
  // E1: two samples of 2 tokens, splits causal 1, full 1, causal 1, full 1,
  // both streams aligned to 4.
  ref::Layout layout{{2, 2}, {1, 1, 1, 1}, {"causal", "full", "causal", "full"}, {}};
  layout.und_token_indexes = ref::packer_und_tokens(layout);
  ref::Options options;
  options.causal_seq_alignment = options.full_seq_alignment = 4;
  ref::Rows rows(4, 4);
  for (std::uint32_t r = 0; r < 4; ++r) {
    const std::uint32_t tag = r + 1;  // 0 is a padding row
    std::memcpy(rows.row(r), &tag, sizeof tag);
  }
  ref::GraphMarks marks;
  const ref::Pack pack = ref::build_pack(rows, layout, options, marks);

  // The causal stream holds packed rows 0 and 2 (tags 1 and 3), then padding.
  std::vector<std::uint32_t> causal;
  for (std::size_t r = 0; r < pack.causal_seq.rows(); ++r) {
    std::uint32_t v = 0;
    std::memcpy(&v, pack.causal_seq.row(r), sizeof v);
    causal.push_back(v);
  }
  const std::vector<std::uint32_t> want_causal{1, 3, 0, 0};
  // NOTES.md: pad offsets causal and full [0,1,2,4], sample pad offsets [0,2,4,8].
  const std::vector<std::int32_t> want_offsets{0, 1, 2, 4};
  const std::vector<std::int32_t> want_samples{0, 2, 4, 8};
  bool ok = causal == want_causal && pack.pad_segment.has_value() &&
            pack.pad_segment->causal_seq_offsets == want_offsets &&
            pack.pad_segment->full_only_seq_offsets == want_offsets &&
            pack.pad_segment->sample_offsets == want_samples && ref::get_all_seq(pack) == rows;
  try {
    ref::Options bad;
    bad.cp_world_size = 0;
    ref::build_pack(rows, layout, bad, marks);
    ok = false;  // must be refused
  } catch (const ref::Error& e) {
    std::cout << "consumer: refused as expected: " << e.what() << "\n";
    ok = ok && std::string(e.what()).rfind("invalid_option: options.cp_world_size: ", 0) == 0;
  }
  std::cout << "consumer: seqpack " << seqpack::kVersion << ", E1 " << (ok ? "ok" : "WRONG") << "\n";
  return ok ? 0 : 1;
}
