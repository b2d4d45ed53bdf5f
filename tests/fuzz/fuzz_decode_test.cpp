// The fuzz input format: the raw form carries a case exactly, and any bytes
// (short, empty, random) decode without reading past the end.
#include <cstdlib>
#include <random>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "seqpack/fuzz/decode.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/reference/reference.hpp"

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
    if (m == "causal" || m == "full")
      RC_ASSERT(d.layout.attn_modes[j] == m);
    else
      RC_ASSERT(d.layout.attn_modes[j] != "causal" && d.layout.attn_modes[j] != "full");
  }
  RC_ASSERT(d.rows == c.rows || c.rows == 0);
}

RC_GTEST_PROP(FuzzDecode, AnyBytesDecode, (const std::vector<std::uint8_t>& bytes)) {
  const sp::Case c = sf::decode_case(bytes.data(), bytes.size());
  RC_ASSERT(c.row_bytes >= 1);
  // The structured form plants at most one fault and names its class.
  if (!bytes.empty() && (bytes[0] & 1) == 0) RC_ASSERT(c.expect_error.empty() == c.fault.empty());
}

// What small_enough lets through, the build keeps within the budget: the
// decision (from the split lengths, before anything is allocated) agrees with
// the reference's own plan.
RC_GTEST_PROP(FuzzDecode, SmallEnoughHoldsTheBudget, (const std::vector<std::uint8_t>& bytes)) {
  for (const sf::Budget& budget : {sf::kFastBudget, sf::kShardBudget}) {
    const sp::Case c = sf::decode_case(bytes.data(), bytes.size(), budget);
    if (!sf::small_enough(c, budget)) {
      // Skipped only when the reference would build it: a case it refuses
      // (and whose rows fit) is always checked.
      namespace ref = seqpack::reference;
      std::int64_t sum = 0;
      for (const std::int64_t n : c.layout.sample_lens)
        sum += std::min<std::int64_t>(std::max<std::int64_t>(n, 0), budget.rows + 1);
      if (c.rows < 0 || c.rows > budget.rows || sum > budget.rows || c.options.cp_world_size > 64) continue;
      try {
        ref::validate_options(c.options, c.marks);
        ref::validate_layout(c.layout);
        ref::plan_pack(ref::prepare_metadata(c.layout), c.rows, c.options, c.marks);
      } catch (const ref::Error& e) {
        RC_FAIL(std::string("a case the reference refuses (") + e.what() + ") was skipped");
      }
      continue;
    }
    try {
      const seqpack::reference::Pack p = sp::build_case(c);
      const auto streams = static_cast<std::int64_t>(p.causal_seq.rows() + p.full_only_seq.rows());
      RC_ASSERT(streams <= budget.rows);
      RC_ASSERT((c.rows + streams) * static_cast<std::int64_t>(c.row_bytes) <= budget.bytes);
    } catch (const seqpack::reference::Error&) {
      // refused before any row was allocated
    }
  }
}

// Long streams land on a bucket edge the budget holds (or one or two rows off).
TEST(FuzzDecode, LongStreamsLandOnBucketEdges) {
  std::mt19937_64 random(17);
  int long_cases = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> bytes(1 + random() % 200);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(random());
    bytes[0] &= 0xFE;  // the structured form
    const sp::Case c = sf::decode_case(bytes.data(), bytes.size(), sf::kFastBudget);
    if (!c.fault.empty()) continue;  // a planted fault may add splits
    std::int64_t causal = 0, full = 0;
    for (std::size_t j = 0; j < c.layout.split_lens.size(); ++j) {
      (c.layout.attn_modes[j] == "causal" ? causal : full) += c.layout.split_lens[j];
    }
    for (const std::int64_t n : {causal, full}) {
      if (n > 1500) {
        ++long_cases;
        EXPECT_LE(std::llabs(n - 2048), 2) << "a long stream of " << n << " rows";
      }
    }
  }
  EXPECT_GT(long_cases, 100) << "too few long streams: " << long_cases;
}

TEST(FuzzDecode, ShortInputsGiveDefaults) {
  const sp::Case empty = sf::decode_case(nullptr, 0);
  EXPECT_EQ(empty.options.cp_world_size, 1);
  EXPECT_LT(empty.rows, 128) << "an exhausted reader must give a short case";
  const std::uint8_t one[] = {1};
  const sp::Case raw = sf::decode_case(one, 1);  // raw form, every field zero
  EXPECT_TRUE(raw.layout.sample_lens.empty());
  EXPECT_EQ(raw.options.cp_world_size, 0);
  EXPECT_EQ(raw.rows, 0);
}

}  // namespace
