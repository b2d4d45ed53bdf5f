// The fuzz input format: the raw form carries a case exactly, and any bytes
// (short, empty, random) decode without reading past the end.
#include <gtest/gtest.h>

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "seqpack/fuzz/decode.hpp"
#include "seqpack/properties/generators.hpp"

namespace {

namespace sf = seqpack::fuzz;
namespace sp = seqpack::properties;

RC_GTEST_PROP(FuzzDecode, RawFormCarriesTheCase, ()) {
  const sp::Case c = *sp::gen_strict_case();
  const std::vector<std::uint8_t> bytes = sf::encode_raw(c);
  const sp::Case d = sf::decode_case(bytes.data(), bytes.size());
  RC_ASSERT(d.layout.sample_lens == c.layout.sample_lens);
  RC_ASSERT(d.layout.split_lens == c.layout.split_lens);
  RC_ASSERT(d.layout.und_token_indexes == c.layout.und_token_indexes);
  RC_ASSERT(d.options.cp_world_size == c.options.cp_world_size);
  RC_ASSERT(d.options.causal_seq_alignment == c.options.causal_seq_alignment);
  RC_ASSERT(d.options.full_seq_alignment == c.options.full_seq_alignment);
  RC_ASSERT(d.options.pad_for_cuda_graphs == c.options.pad_for_cuda_graphs);
  RC_ASSERT(d.options.is_image_batch == c.options.is_image_batch);
  RC_ASSERT(d.options.pad_segment_only_when_padded == c.options.pad_segment_only_when_padded);
  RC_ASSERT(d.marks == c.marks);
  RC_ASSERT(d.row_bytes == c.row_bytes);
  RC_ASSERT(d.data_seed == c.data_seed);
  // Modes outside causal/full come back as some other invalid mode.
  RC_ASSERT(d.layout.attn_modes.size() == c.layout.attn_modes.size());
  for (std::size_t j = 0; j < c.layout.attn_modes.size(); ++j) {
    const std::string& m = c.layout.attn_modes[j];
    if (m == "causal" || m == "full") RC_ASSERT(d.layout.attn_modes[j] == m);
    else RC_ASSERT(d.layout.attn_modes[j] != "causal" && d.layout.attn_modes[j] != "full");
  }
  RC_ASSERT(d.rows == c.rows || c.rows == 0);
}

RC_GTEST_PROP(FuzzDecode, AnyBytesDecode, (const std::vector<std::uint8_t>& bytes)) {
  const sp::Case c = sf::decode_case(bytes.data(), bytes.size());
  RC_ASSERT(c.row_bytes >= 1);
  // The structured form plants at most one fault and names its class.
  if (!bytes.empty() && (bytes[0] & 1) == 0) RC_ASSERT(c.expect_error.empty() == c.fault.empty());
}

TEST(FuzzDecode, ShortInputsGiveDefaults) {
  const sp::Case empty = sf::decode_case(nullptr, 0);
  EXPECT_EQ(empty.options.cp_world_size, 1);
  const std::uint8_t one[] = {1};
  const sp::Case raw = sf::decode_case(one, 1);  // raw form, every field zero
  EXPECT_TRUE(raw.layout.sample_lens.empty());
  EXPECT_EQ(raw.options.cp_world_size, 0);
  EXPECT_EQ(raw.rows, 0);
}

}  // namespace
