// The worked examples of NOTES.md section 5.
#include "seqpack/protocol/examples.hpp"

namespace seqpack::protocol {
namespace {

Case make(std::vector<std::int64_t> samples, std::vector<std::string> modes, std::vector<std::int64_t> splits,
          std::int64_t cp = 1, std::int64_t align = 1, bool only_when_padded = false) {
  Case c;
  c.layout.sample_lens = std::move(samples);
  c.layout.split_lens = std::move(splits);
  c.layout.attn_modes = std::move(modes);
  list_und_tokens(c);
  for (const std::int64_t s : c.layout.sample_lens) c.rows += s;
  c.options.cp_world_size = cp;
  c.options.causal_seq_alignment = c.options.full_seq_alignment = align;
  c.options.pad_segment_only_when_padded = only_when_padded;
  return c;
}

std::vector<WorkedExample> make_examples() {
  const std::vector<std::string> pairs{"causal", "full", "causal", "full"};
  std::vector<WorkedExample> examples = {
      {"E1", "two samples, both streams aligned to 4", make({2, 2}, pairs, {1, 1, 1, 1}, 1, 4)},
      {"E2", "two samples, alignment 128", make({112, 160}, pairs, {12, 100, 20, 140}, 1, 128)},
      {"E3", "as E2 with alignment 1", make({112, 160}, pairs, {12, 100, 20, 140})},
      {"E3b", "as E3, pad segment only when padded", make({112, 160}, pairs, {12, 100, 20, 140}, 1, 1, true)},
      {"E4", "full-only pack", make({100}, {"full"}, {100})},
      {"E5", "full-only pack under cp 2", make({5, 2}, {"full", "full"}, {5, 2}, 2)},
      {"E6a", "cp 2, alignments 2", make({8, 9}, pairs, {3, 5, 2, 7}, 2, 2)},
      {"E6b", "cp 2, empty causal splits", make({5, 7}, pairs, {0, 5, 0, 7}, 2, 2)},
      {"E6c", "cp 2, empty full splits", make({3, 2}, pairs, {3, 0, 2, 0}, 2, 2)},
      {"E7", "one sample with two pairs: pairing fails", make({4}, pairs, {1, 1, 1, 1})},
  };
  examples.back().c.expect_error = "pad_segment_pairing";
  examples.back().c.fault = "pairing";
  return examples;
}

}  // namespace

const std::vector<WorkedExample>& worked_examples() {
  static const std::vector<WorkedExample> examples = make_examples();
  return examples;
}

}  // namespace seqpack::protocol
