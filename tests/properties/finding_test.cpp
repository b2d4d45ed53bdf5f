// The findings of the consequence properties about the original
// (reference/README.md, "Findings of the consequence oracle"), pinned: each
// layout below is one the original accepts, and the reference's pack of it
// still does to attention what the finding says. A change of the reference
// that fixes or widens a finding fails here, and the exemption in
// properties/src/catalogue_consequences.cpp must then change with it.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "catalogue_internal.hpp"  // white box: the exemptions' split owners
#include "seqpack/attention/consequences.hpp"
#include "seqpack/properties/catalogue.hpp"
#include "seqpack/protocol/case.hpp"

namespace {

namespace at = seqpack::attention;
namespace sp = seqpack::properties;

const at::PassReport* pass(const at::Report& r, at::PassKind kind) {
  const auto it = std::find_if(r.passes.begin(), r.passes.end(), [&](const auto& p) { return p.kind == kind; });
  return it == r.passes.end() ? nullptr : &*it;
}

sp::Case make(const std::string& json) { return seqpack::protocol::case_from_json(json); }

// Finding 1: NOTES 5's E5 shape (full-only samples) with cp 2: the full stream
// is padded from 7 to 8 rows and has no pad segment; row 7 is never written.
TEST(Findings, FullOnlyPackPaddedForContextParallelLeavesItsPaddingUnwritten) {
  const sp::Case c = make(
      R"({"type":"case","id":"finding-1","rows":7,"row_bytes":4,"data_seed":0,)"
      R"("layout":{"sample_lens":[2,4,1],"split_lens":[2,4,1],"attn_modes":["full","full","full"],"und_token_indexes":[]},)"
      R"("options":{"cp_world_size":2,"causal_seq_alignment":1,"full_seq_alignment":1,"pad_for_cuda_graphs":false,)"
      R"("is_image_batch":false,"pad_segment_only_when_padded":false},"graph_bounds":{"image":[0,0],"video":[0,0]}})");
  const sp::Subject s(c);
  const at::Report& r = s.consequences();
  EXPECT_EQ(r.severity, at::Severity::silent_wrong_gradient) << at::format_report(r);
  const at::PassReport* gen = pass(r, at::PassKind::gen_full);
  ASSERT_NE(gen, nullptr);
  ASSERT_FALSE(gen->unwritten.empty());
  EXPECT_EQ(gen->unwritten.front().rows.front().first, 7) << at::format_report(r);
}

// Finding 2: a sample with two full splits and one causal split (beyond the
// packer's layouts): the generation-to-understanding pass is unpaired.
TEST(Findings, UnequalSplitCountsLeaveTheGenerationToUnderstandingPassUnpaired) {
  const sp::Case c = make(
      R"({"type":"case","id":"finding-2","rows":3,"row_bytes":4,"data_seed":0,)"
      R"("layout":{"sample_lens":[3],"split_lens":[1,1,1],"attn_modes":["full","full","causal"],"und_token_indexes":[2]},)"
      R"("options":{"cp_world_size":1,"causal_seq_alignment":1,"full_seq_alignment":1,"pad_for_cuda_graphs":false,)"
      R"("is_image_batch":false,"pad_segment_only_when_padded":false},"graph_bounds":{"image":[0,0],"video":[0,0]}})");
  const sp::Subject s(c);
  const at::PassReport* p = pass(s.consequences(), at::PassKind::gen_to_und);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->paired) << at::format_report(s.consequences());
  EXPECT_EQ(p->q_segments, 2);
  EXPECT_EQ(p->k_segments, 1);
}

// Finding 3: a full-only sample then a causal-only one (equal split counts,
// different owners; nothing padded, so pad_segment_only_when_padded drops the
// segment that would be refused): sample 0's gen rows see sample 1's und rows.
TEST(Findings, SplitsOfDifferentSamplesArePairedAcrossSamples) {
  const sp::Case c = make(
      R"({"type":"case","id":"finding-3","rows":6,"row_bytes":4,"data_seed":0,)"
      R"("layout":{"sample_lens":[4,2],"split_lens":[4,2],"attn_modes":["full","causal"],"und_token_indexes":[4,5]},)"
      R"("options":{"cp_world_size":1,"causal_seq_alignment":2,"full_seq_alignment":4,"pad_for_cuda_graphs":false,)"
      R"("is_image_batch":false,"pad_segment_only_when_padded":true},"graph_bounds":{"image":[0,0],"video":[0,0]}})");
  const sp::Subject s(c);
  const at::PassReport* p = pass(s.consequences(), at::PassKind::gen_to_und);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->cross.has_value()) << at::format_report(s.consequences());
  EXPECT_EQ(p->cross->q_sample, 0);
  EXPECT_EQ(p->cross->k_sample, 1);
}

// Finding 3, on the dense pass: the original's assertion before the pad
// segment (~488-494) counts full splits against samples, not who owns them.
// Sample 0 holds one causal split, sample 1 two full splits and a causal one:
// 2 full splits for 2 samples, so the pad segment is built, and the dense
// pass keys sample 1's first GEN row against sample 0's rows.
TEST(Findings, TheDensePassPairsGenSplitsWithSamplesByCountNotByOwner) {
  const sp::Case c = make(
      R"({"type":"case","id":"finding-3b","rows":4,"row_bytes":4,"data_seed":0,)"
      R"("layout":{"sample_lens":[1,3],"split_lens":[1,1,1,1],"attn_modes":["causal","full","full","causal"],"und_token_indexes":[0,3]},)"
      R"("options":{"cp_world_size":1,"causal_seq_alignment":1,"full_seq_alignment":1,"pad_for_cuda_graphs":true,)"
      R"("is_image_batch":false,"pad_segment_only_when_padded":false},"graph_bounds":{"image":[0,0],"video":[0,0]}})");
  const sp::Subject s(c);
  ASSERT_TRUE(s.pack().pad_segment);
  const at::PassReport* p = pass(s.consequences(), at::PassKind::dense_full);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->cross.has_value()) << at::format_report(s.consequences());
  EXPECT_EQ(p->cross->q_sample, 1);
  EXPECT_EQ(p->cross->k_sample, 0);
}

// The exemptions read who owns each split. A text-only sample's empty full
// split is its own, also when it is not the last sample: given to the next
// sample, the owners would differ and no_cross_sample would skip the
// generation-to-understanding pass of every such pack.
TEST(Findings, SplitOwnersKeepATextOnlySamplesEmptyFullSplit) {
  const auto owners = [](const std::string& layout) {
    const sp::Case c = make(
        R"({"type":"case","id":"owners","rows":7,"row_bytes":4,"data_seed":0,"layout":)" + layout +
        R"(,"options":{"cp_world_size":1,"causal_seq_alignment":1,"full_seq_alignment":1,"pad_for_cuda_graphs":false,)"
        R"("is_image_batch":false,"pad_segment_only_when_padded":false},"graph_bounds":{"image":[0,0],"video":[0,0]}})");
    return sp::detail::split_owners(sp::Subject(c));
  };
  using V = std::vector<std::int64_t>;
  auto o = owners(
      R"({"sample_lens":[3,4],"split_lens":[3,0,2,2],"attn_modes":["causal","full","causal","full"],"und_token_indexes":[0,1,2,3,4]})");
  EXPECT_EQ(o.first, (V{0, 1}));
  EXPECT_EQ(o.second, (V{0, 1}));
  o = owners(
      R"({"sample_lens":[5,2],"split_lens":[0,5,0,2],"attn_modes":["causal","full","causal","full"],"und_token_indexes":[]})");
  EXPECT_EQ(o.first, (V{0, 1}));
  EXPECT_EQ(o.second, (V{0, 1}));
  o = owners(R"({"sample_lens":[0,7],"split_lens":[0,7],"attn_modes":["full","full"],"und_token_indexes":[]})");
  EXPECT_EQ(o.second, (V{0, 1}));
}

// The exemptions are narrow: the catalogue still fails a paired layout's pack
// whose pad segment the test removes (the fault the coverage property is for).
TEST(Findings, TheCatalogueStillPassesThePackerLayoutsOfTheWorkedExamples) {
  const sp::Case c = make(
      R"({"type":"case","id":"E1","rows":4,"row_bytes":4,"data_seed":0,)"
      R"("layout":{"sample_lens":[2,2],"split_lens":[1,1,1,1],"attn_modes":["causal","full","causal","full"],"und_token_indexes":[0,2]},)"
      R"("options":{"cp_world_size":1,"causal_seq_alignment":4,"full_seq_alignment":4,"pad_for_cuda_graphs":false,)"
      R"("is_image_batch":false,"pad_segment_only_when_padded":false},"graph_bounds":{"image":[0,0],"video":[0,0]}})");
  const sp::Subject s(c);
  EXPECT_EQ(s.consequences().severity, at::Severity::metadata_only) << at::format_report(s.consequences());
  auto meta = at::from_reference(s.pack(), c.options);
  meta.pad_segment->full_only_seq_offsets = {0, 1, 2, 3};  // planted: the pad segment one row short
  EXPECT_EQ(at::evaluate(meta).severity, at::Severity::silent_wrong_gradient);
}

}  // namespace
