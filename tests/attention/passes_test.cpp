// The passes derived from a pack (attention/PASSES.md), on the worked
// examples of NOTES.md section 5: which passes exist, which streams and
// offsets each reads, with and without a pad segment.
#include "seqpack/attention/passes.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "../reference/test_support.hpp"

namespace {

namespace att = seqpack::attention;
namespace ref = seqpack::reference;
using seqpack::testing::build;
using seqpack::testing::make_layout;
using I64 = std::vector<std::int64_t>;

ref::Options aligned(std::int64_t causal, std::int64_t full) {
  ref::Options o;
  o.causal_seq_alignment = causal;
  o.full_seq_alignment = full;
  return o;
}

att::PackMeta e1() {
  const auto options = aligned(4, 4);
  return att::from_reference(build(make_layout({2, 2}, {"causal", "full", "causal", "full"}, {1, 1, 1, 1}), options),
                             options);
}

const att::Pass& find(const std::vector<att::Pass>& passes, att::PassKind kind) {
  const auto it = std::find_if(passes.begin(), passes.end(), [&](const att::Pass& p) { return p.kind == kind; });
  if (it == passes.end()) throw std::runtime_error(std::string("no pass ") + att::pass_id(kind));
  return *it;
}

bool has(const std::vector<att::Pass>& passes, att::PassKind kind) {
  return std::any_of(passes.begin(), passes.end(), [&](const att::Pass& p) { return p.kind == kind; });
}

TEST(Passes, FromReferenceCarriesTheWireFields) {
  const att::PackMeta m = e1();
  EXPECT_EQ(m.causal_rows, (I64{0, 2, -1, -1}));
  EXPECT_EQ(m.full_only_rows, (I64{1, 3, -1, -1}));
  ASSERT_TRUE(m.pad_segment);
  EXPECT_EQ(m.pad_segment->sample_offsets, (I64{0, 2, 4, 8}));
  EXPECT_EQ(m.full_seq_alignment, 4);
}

TEST(Passes, PaddedPackFeedsEveryPassThePadSegmentOffsets) {
  const auto passes = att::derive_passes(e1(), att::Variant::as_packed);
  const att::Pass& und = find(passes, att::PassKind::und_causal);
  EXPECT_EQ(und.args.cu_seqlens_q.values(), (I64{0, 1, 2, 4}));
  EXPECT_EQ(und.args.max_seqlen_q, 2);
  EXPECT_TRUE(und.args.causal);
  const att::Pass& g2u = find(passes, att::PassKind::gen_to_und);
  EXPECT_EQ(g2u.q_rows, (I64{1, 3, -1, -1}));   // gen queries
  EXPECT_EQ(g2u.kv_rows, (I64{0, 2, -1, -1}));  // und keys
  EXPECT_FALSE(g2u.args.causal);
  const att::Pass& dense = find(passes, att::PassKind::dense_full);
  EXPECT_EQ(dense.q_rows, (I64{1, 3, -1, -1}));                 // gen queries
  EXPECT_EQ(dense.kv_rows, (I64{0, 1, 2, 3, -1, -1, -1, -1}));  // get_all_seq_padded's keys
  EXPECT_EQ(dense.args.cu_seqlens_q.values(), (I64{0, 1, 2, 4}));
  EXPECT_EQ(dense.args.cu_seqlens_k.values(), (I64{0, 2, 4, 8}));
  EXPECT_EQ(dense.args.max_seqlen_k, 4);
  EXPECT_EQ(dense.cu_q_field, "pad_segment.full_only_seq_offsets");
  EXPECT_EQ(dense.cu_k_field, "pad_segment.sample_offsets");
  const att::Pass& flex = find(passes, att::PassKind::flex_gen);
  EXPECT_EQ(flex.kv_rows, (I64{0, 2, -1, -1, 1, 3, -1, -1}));  // [und | gen]
  EXPECT_EQ(flex.kv_sample_ids, (I64{0, 1, 2, 2, 0, 1, 2, 2}));
  EXPECT_EQ(flex.block_size, 4);
}

TEST(Passes, UnpaddedVariantReadsRealRowsWithThePlainOffsets) {
  const auto passes = att::derive_passes(e1(), att::Variant::unpadded);
  const att::Pass& und = find(passes, att::PassKind::und_causal);
  EXPECT_EQ(und.q_rows, (I64{0, 2}));
  EXPECT_EQ(und.args.cu_seqlens_q.values(), (I64{0, 1, 2}));
  EXPECT_EQ(find(passes, att::PassKind::dense_full).q_rows, (I64{1, 3}));
  EXPECT_EQ(find(passes, att::PassKind::dense_full).kv_rows, (I64{0, 1, 2, 3}));
}

TEST(Passes, FullOnlyPackHasNoCausalOrGenToUndPass) {
  // E4: one full split of 100 rows.
  const att::PackMeta m = att::from_reference(build(make_layout({100}, {"full"}, {100})));
  const auto passes = att::derive_passes(m, att::Variant::as_packed);
  EXPECT_FALSE(has(passes, att::PassKind::und_causal));
  EXPECT_FALSE(has(passes, att::PassKind::gen_to_und));
  EXPECT_EQ(find(passes, att::PassKind::dense_full).args.cu_seqlens_q.values(), (I64{0, 100}));
}

TEST(Passes, IndexOutsideTheInterleavedBufferIsRefusedByName) {
  att::PackMeta m = e1();
  m.full_indices[1] = 8;
  try {
    att::derive_passes(m, att::Variant::as_packed);
    ADD_FAILURE() << "not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("full_indices[1] = 8"), std::string::npos) << e.what();
  }
}

}  // namespace
