// The findings of the consequence properties about the original
// (reference/README.md, "Findings of the consequence oracle"), pinned: each
// layout below is one the original accepts, and the reference's pack of it
// still does to attention what the finding says. A change of the reference
// that fixes or widens a finding fails here, and the exemption in
// properties/src/catalogue_consequences.cpp must then change with it.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

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
  meta.pad_segment->sample_offsets = meta.sample_offsets;  // planted: no pad segment on sample_offsets
  EXPECT_EQ(at::evaluate(meta).severity, at::Severity::silent_wrong_gradient);
}

}  // namespace
