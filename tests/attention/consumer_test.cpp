// The consumer judge (consumer_judge.hpp): the reference's own packs under each
// profile and kernel (the findings about the original), each defect the judge
// exists for planted into a pack and caught with its severity, the layer
// model's rules each planted out, and the geometry checked row for row
// against the varlen emulator.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "../reference/test_support.hpp"
#include "consumer_internal.hpp"  // white box: the geometry against the emulator
#include "seqpack/attention/consumer_judge.hpp"
#include "seqpack/attention/varlen.hpp"

namespace {

namespace att = seqpack::attention;
namespace ref = seqpack::reference;
using att::ConsumerId;
using att::Kernel;
using att::Severity;
using seqpack::testing::build;
using seqpack::testing::make_layout;
using I64 = std::vector<std::int64_t>;

const std::vector<std::string> kPairs = {"causal", "full", "causal", "full"};
const att::ConsumerOptions kSpec3{ConsumerId::spec, Kernel::fa3};
const att::ConsumerOptions kSpec2{ConsumerId::spec, Kernel::fa2};
const att::ConsumerOptions kCosmos3{ConsumerId::cosmos_5eee9ed, Kernel::fa3};
const att::ConsumerOptions kCosmos2{ConsumerId::cosmos_5eee9ed, Kernel::fa2};

ref::Options opts(std::int64_t causal, std::int64_t full, std::int64_t cp = 1) {
  ref::Options o;
  o.causal_seq_alignment = causal;
  o.full_seq_alignment = full;
  o.cp_world_size = cp;
  return o;
}

att::ConsumerInput input(const ref::Layout& layout, const ref::Options& o) {
  att::ConsumerInput in;
  in.meta = att::from_reference(build(layout, o), o);
  in.cp_world_size = o.cp_world_size;
  return in;
}

att::ConsumerInput e1() { return input(make_layout({2, 2}, kPairs, {1, 1, 1, 1}), opts(4, 4)); }
att::ConsumerInput e2() { return input(make_layout({112, 160}, kPairs, {12, 100, 20, 140}), opts(128, 128)); }
att::ConsumerInput e5() { return input(make_layout({5, 2}, {"full", "full"}, {5, 2}), opts(1, 1, 2)); }
att::ConsumerInput e6a() { return input(make_layout({8, 9}, kPairs, {3, 5, 2, 7}), opts(2, 2, 2)); }
att::ConsumerInput e6b() { return input(make_layout({5, 7}, kPairs, {0, 5, 0, 7}), opts(2, 2, 2)); }
att::ConsumerInput e6c() { return input(make_layout({3, 2}, kPairs, {3, 0, 2, 0}), opts(2, 2, 2)); }

// The spec's getters over a pack, as a port that declares the views returns them.
att::StreamView all_seq_padded_of(const att::PackMeta& m) {
  att::StreamView v;
  const bool pad = m.pad_segment.has_value();
  v.rows.assign(pad ? m.causal_rows.size() + m.full_only_rows.size() : m.causal_indices.size() + m.full_indices.size(),
                -1);
  for (std::size_t i = 0; i < m.causal_indices.size(); ++i) v.rows[m.causal_indices[i]] = m.causal_rows[i];
  for (std::size_t i = 0; i < m.full_indices.size(); ++i) v.rows[m.full_indices[i]] = m.full_only_rows[i];
  v.offsets = pad ? m.pad_segment->sample_offsets : m.sample_offsets;
  v.max_len = pad ? m.pad_segment->max_sample_len : m.max_sample_len;
  return v;
}

std::vector<att::ShardView> shards_of(const att::PackMeta& m, std::int64_t cp) {
  std::vector<att::ShardView> out;
  const auto lc = static_cast<std::int64_t>(m.causal_rows.size()) / cp;
  const auto lf = static_cast<std::int64_t>(m.full_only_rows.size()) / cp;
  for (std::int64_t r = 0; r < cp; ++r) {
    att::ShardView s;
    s.causal_rows.assign(m.causal_rows.begin() + r * lc, m.causal_rows.begin() + (r + 1) * lc);
    s.full_only_rows.assign(m.full_only_rows.begin() + r * lf, m.full_only_rows.begin() + (r + 1) * lf);
    s.num_causal_local = std::max<std::int64_t>(0, std::min(lc, m.num_causal_tokens - r * lc));
    s.num_full_local = std::max<std::int64_t>(0, std::min(lf, m.num_full_tokens - r * lf));
    out.push_back(s);
  }
  return out;
}

att::ConsumerReport judge(const att::ConsumerInput& pack, const att::ConsumerOptions& o) {
  return att::judge_consumer(pack, pack, o);
}

// The parameters whose gradients a branch's layer finding names.
std::vector<std::string> gradients(const att::ConsumerReport& r, const std::string& branch) {
  for (const att::Finding& f : r.findings)
    if (f.branch == branch && f.call == "layer") return f.gradients;
  return {};
}

bool names(const std::vector<std::string>& list, const std::string& param) {
  return std::find(list.begin(), list.end(), param) != list.end();
}

bool has(const att::ConsumerReport& r, Severity s, const std::string& branch, const std::string& text) {
  return std::any_of(r.findings.begin(), r.findings.end(), [&](const att::Finding& f) {
    return f.severity == s && (branch.empty() || f.branch == branch) && f.text.find(text) != std::string::npos;
  });
}

Severity worst_in(const att::ConsumerReport& r, const std::string& branch) {
  Severity s = Severity::metadata_only;
  for (const att::Finding& f : r.findings)
    if (f.branch == branch && f.severity > s) s = f.severity;
  return s;
}

// --- The reference's own packs (the findings table, reference/README.md) ---

TEST(ConsumerJudge, TheSpecsConsumerReadsTheWorkedExamplesWithPadSegmentsWhole) {
  for (const auto& [name, pack] : std::map<std::string, att::ConsumerInput>{
           {"E1", e1()}, {"E2", e2()}, {"E6a", e6a()}, {"E6b", e6b()}, {"E6c", e6c()}}) {
    const att::ConsumerReport r = judge(pack, kSpec3);
    EXPECT_EQ(r.severity, Severity::metadata_only) << name << "\n" << att::format_consumer_report(r);
    EXPECT_EQ(r.line, "consequence [spec on fa3]: none (every branch computes what the spec means)") << name;
  }
}

// Finding: on FlashAttention 2, a real GEN row of a sample with no und token
// has an empty gen->und range, LSE +inf, and the LSE merge returns that side's
// 0: the row's output is 0 and it gets no gradient. FA3's -inf is ignored.
TEST(ConsumerJudge, FindingOnFa2TheMergeZeroesGenRowsOfASampleWithNoUndToken) {
  const att::ConsumerReport fa2 = judge(e6b(), kSpec2);
  EXPECT_TRUE(has(fa2, Severity::wrong_output, "three_way", "the LSE merge zeroes real full rows 0\u201311"))
      << att::format_consumer_report(fa2);
  EXPECT_EQ(judge(e6b(), kSpec3).severity, Severity::metadata_only);
  const att::ConsumerReport cosmos = judge(e6b(), kCosmos2);
  EXPECT_TRUE(has(cosmos, Severity::wrong_output, "three_way", "the LSE merge zeroes"));
  EXPECT_TRUE(has(cosmos, Severity::wrong_output, "three_way_natten", "the LSE merge zeroes"));
  EXPECT_FALSE(has(judge(e6b(), kCosmos3), Severity::wrong_output, "three_way", "the LSE merge zeroes"));
}

// Finding 1 of the original: a full-only pack padded by cp never gets a pad
// segment; the spec's GEN passes leave the padding row unwritten, and the
// spec's layer (no zero factor) carries its garbage into the gradients.
TEST(ConsumerJudge, FindingFullOnlyPackPaddedByCpIsSilentForTheSpecAndRefusedByCosmos) {
  const att::ConsumerReport spec = judge(e5(), kSpec3);
  EXPECT_EQ(spec.severity, Severity::silent_wrong_gradient) << att::format_consumer_report(spec);
  EXPECT_TRUE(has(spec, Severity::silent_wrong_gradient, "two_way",
                  "the dense GEN pass leaves full row 7 (padding) unwritten (output, dq); finite garbage reaches the "
                  "gradients of q_proj_moe_gen.weight (normed input x dq)"));
  // The real consumer refuses the causal pass of a pack without causal
  // splits before any kernel (attention/checks.py: cu_seqlens of 1 entry).
  const att::ConsumerReport cosmos = judge(e5(), kCosmos3);
  EXPECT_TRUE(has(cosmos, Severity::crash_or_refusal, "two_way", "attention/checks.py:384-388"))
      << att::format_consumer_report(cosmos);
}

// Findings about the real consumer: its dense GEN pass keeps the plain
// offsets, so GEN padding rows are never written. Without CP, RoPE's zero
// cos/sin on padding rows cancels finite garbage in dq: NaN only. Under CP
// padding rows get position 0 (cos 1, sin 0): finite garbage reaches the
// GEN projections' gradients.
TEST(ConsumerJudge, FindingCosmosDenseGenPaddingIsNanOnlyWithoutCpAndSilentUnderCp) {
  const att::ConsumerReport plain = judge(e1(), kCosmos3);
  EXPECT_EQ(worst_in(plain, "two_way"), Severity::nan_only) << att::format_consumer_report(plain);
  EXPECT_TRUE(has(plain, Severity::nan_only, "two_way",
                  "the dense GEN pass leaves full rows 2\u20133 (padding) unwritten (output, dq); only NaN reaches "
                  "the gradients of q_proj_moe_gen.weight"));
  const att::ConsumerReport cp = judge(e6a(), kCosmos3);
  EXPECT_EQ(worst_in(cp, "two_way"), Severity::silent_wrong_gradient) << att::format_consumer_report(cp);
  EXPECT_TRUE(has(cp, Severity::silent_wrong_gradient, "two_way",
                  "finite garbage reaches the gradients of q_proj_moe_gen.weight (normed input x dq)"));
  // Three-way switches every pass to the pad segment: whole, CP or not.
  EXPECT_EQ(worst_in(cp, "three_way"), Severity::metadata_only) << att::format_consumer_report(cp);
  EXPECT_EQ(worst_in(plain, "three_way"), Severity::metadata_only);
}

// The real consumer refuses a batch whose GEN stream holds no real token
// (every sample text-only) in its dense GEN pass: max_full_len is 0 and
// max_sample_len is not (attention/checks.py:266-270).
TEST(ConsumerJudge, FindingCosmosRefusesATextOnlyBatchInItsDenseGenPass) {
  const att::ConsumerReport r = judge(e6c(), kCosmos3);
  EXPECT_TRUE(has(r, Severity::crash_or_refusal, "two_way", "one maximum is 0 and the other is not"))
      << att::format_consumer_report(r);
}

// CUDA-graph marks recorded by a batch at cp 1 (256 rows) are used as lengths
// under cp 3 (NOTES.md section 6): the CP sharding asserts, whatever reads the
// pack. The vector finding-7 is this layout.
TEST(ConsumerJudge, FindingMarksOfAnotherCpBreakCpSharding) {
  ref::Options o = opts(1, 1, 3);
  o.pad_for_cuda_graphs = true;
  ref::GraphMarks marks{256, 256, 256, 256};
  const ref::Layout layout = make_layout({1}, {"full"}, {1});
  att::ConsumerInput in;
  in.meta = att::from_reference(ref::build_pack(seqpack::testing::numbered_rows(1), layout, o, marks), o);
  in.cp_world_size = 3;
  for (const auto& profile : {kSpec3, kSpec2, kCosmos3, kCosmos2}) {
    const att::ConsumerReport r = judge(in, profile);
    EXPECT_TRUE(has(r, Severity::crash_or_refusal, "two_way", "does not divide by cp_world_size 3"))
        << att::format_consumer_report(r);
  }
}

// --- The defects the judge exists for (issue 37, points 2 and 3) ---

// compare() once called a port harmless whenever its summary matched the
// reference's: here both leave row 7 unwritten, but the port also moves real
// rows 4-6 into the wrong segment.
TEST(ConsumerJudge, ComparesFindingsNotSummaries) {
  const att::ConsumerInput reference = e5();
  att::ConsumerInput port = reference;
  port.meta.full_only_seq_offsets = {0, 4, 7};
  const att::Verdict v = att::compare_consumer(port, reference, kSpec3);
  EXPECT_EQ(v.severity, Severity::wrong_output) << v.line;
  EXPECT_NE(v.line.find("changes real full rows 4"), std::string::npos) << v.line;
  EXPECT_NE(v.line.find("sees packed row 5 of sample 1"), std::string::npos) << v.line;
  // The reference's own finding is not the port's.
  const att::Verdict same = att::compare_consumer(reference, reference, kSpec3);
  EXPECT_EQ(same.severity, Severity::metadata_only);
  EXPECT_NE(same.line.find("none beyond the reference's own (silent-wrong-gradient"), std::string::npos) << same.line;
}

// Past the old work bound the oracle fell back to the offsets and called E2
// with two und rows swapped harmless. The judge compares identities (no
// attention is computed), so the size is no bound; its step budget, when it
// is too small, says not-judged.
TEST(ConsumerJudge, SwappedRowsAreFoundAtAnySizeAndABudgetTooSmallIsNotJudged) {
  const att::ConsumerInput reference = e2();
  att::ConsumerInput port = reference;
  std::swap(port.meta.causal_rows[0], port.meta.causal_rows[1]);
  for (const auto& o : {kSpec3, kCosmos3}) {
    const att::Verdict v = att::compare_consumer(port, reference, o);
    EXPECT_EQ(v.severity, Severity::wrong_output) << v.line;
    EXPECT_NE(v.line.find("the causal stream holds other rows than the spec's at rows 0\u20131"), std::string::npos)
        << v.line;
    att::JudgeLimits tiny;
    tiny.max_steps = 10;
    const att::Verdict small = att::compare_consumer(port, reference, o, tiny);
    EXPECT_EQ(small.severity, Severity::not_judged) << small.line;
  }
  att::JudgeLimits rows;
  rows.max_rows = 100;  // E2's full stream has 256 rows
  EXPECT_EQ(att::judge_consumer(reference, reference, kSpec3, rows).severity, Severity::not_judged);
}

// The views a port returns are what the consumer's getters give it.
TEST(ConsumerJudge, TheViewsAPortReturnsAreJudged) {
  att::ConsumerInput reference = e1();
  reference.all_seq_padded = all_seq_padded_of(reference.meta);
  att::ConsumerInput port = reference;
  port.all_seq_padded->offsets = port.meta.sample_offsets;  // the view drops its pad segment
  port.all_seq_padded->max_len = port.meta.max_sample_len;
  const att::Verdict spec = att::compare_consumer(port, reference, kSpec3);
  EXPECT_EQ(spec.severity, Severity::crash_or_refusal) << spec.line;
  EXPECT_NE(spec.line.find("the dense GEN pass is refused: cu_seqlens_k has 2 segments but cu_seqlens_q has 3"),
            std::string::npos)
      << spec.line;
  // The real consumer never calls get_all_seq_padded at 5eee9ed.
  EXPECT_EQ(att::compare_consumer(port, reference, kCosmos3).severity, Severity::metadata_only);
  // Its getter's rows out of order: the interleaved keys are wrong.
  att::ConsumerInput rows = reference;
  std::swap(rows.all_seq_padded->rows[0], rows.all_seq_padded->rows[2]);
  EXPECT_EQ(att::compare_consumer(rows, reference, kSpec3).severity, Severity::wrong_output);
}

// CP as the consumer sees it: the shards gathered by the all-to-all.
TEST(ConsumerJudge, CpShardsAreJudgedGathered) {
  att::ConsumerInput reference = e6a();
  reference.has_cp_shards = true;
  reference.cp_shards = shards_of(reference.meta, 2);
  EXPECT_EQ(att::compare_consumer(reference, reference, kCosmos3).severity, Severity::metadata_only);
  // Ranks' causal rows swapped: the gathered stream is out of order.
  att::ConsumerInput swapped = reference;
  std::swap(swapped.cp_shards[0].causal_rows, swapped.cp_shards[1].causal_rows);
  const att::Verdict v = att::compare_consumer(swapped, reference, kCosmos3);
  EXPECT_GE(v.severity, Severity::wrong_output) << v.line;
  // Unequal shards: the all-to-all cannot gather them.
  att::ConsumerInput unequal = reference;
  unequal.cp_shards[0].full_only_rows.push_back(-1);
  unequal.cp_shards[1].full_only_rows.pop_back();
  const att::Verdict u = att::compare_consumer(unequal, reference, kCosmos3);
  EXPECT_EQ(u.severity, Severity::crash_or_refusal) << u.line;
  EXPECT_NE(u.line.find("the all-to-all needs equal shards"), std::string::npos) << u.line;
  // not_divisible where the streams divide.
  att::ConsumerInput refused = reference;
  refused.cp_shards.clear();
  refused.cp_shards_error = "not_divisible";
  EXPECT_EQ(att::compare_consumer(refused, reference, kCosmos3).severity, Severity::crash_or_refusal);
  // Local counts that go negative: the token mask takes real rows for padding.
  att::ConsumerInput negative = reference;
  negative.cp_shards[0].num_full_local = -3;
  const att::Verdict n = att::compare_consumer(negative, reference, kCosmos3);
  EXPECT_EQ(n.severity, Severity::wrong_output) << n.line;
  EXPECT_NE(n.line.find("takes real full rows 0\u20136 for padding: their MLP input is zeroed"), std::string::npos)
      << n.line;
}

// A cp alignment taken as a gcd: streams that cannot be sharded.
TEST(ConsumerJudge, StreamsThatCannotBeShardedAreRefused) {
  const att::ConsumerInput reference = e6a();
  att::ConsumerInput port = reference;
  port.meta.full_only_rows.push_back(-1);  // 15 rows for cp 2
  port.meta.full_only_sample_ids.push_back(2);
  for (const auto& o : {kSpec3, kCosmos3}) {
    const att::Verdict v = att::compare_consumer(port, reference, o);
    EXPECT_EQ(v.severity, Severity::crash_or_refusal) << v.line;
    EXPECT_NE(v.line.find("does not divide by cp_world_size 2"), std::string::npos) << v.line;
  }
}

// Offsets that are not int32: every varlen call refuses them before any kernel.
TEST(ConsumerJudge, OffsetsOfAnotherDtypeAreRefused) {
  att::ConsumerInput reference = e1();
  reference.dtypes = {{"sample_offsets", "int32"}, {"full_only_seq_offsets", "int32"}};
  att::ConsumerInput port = reference;
  port.dtypes["full_only_seq_offsets"] = "int64";
  for (const auto& o : {kSpec3, kCosmos3}) {
    const att::Verdict v = att::compare_consumer(port, reference, o);
    EXPECT_EQ(v.severity, Severity::crash_or_refusal) << v.line;
    EXPECT_NE(v.line.find("full_only_seq_offsets is int64: varlen attention takes int32 cu_seqlens only"),
              std::string::npos)
        << v.line;
  }
  // Sample ids the MoE per-sample loss scatters by must be int64.
  att::ConsumerInput ids = reference;
  ids.dtypes["full_only_sample_ids"] = "int32";
  EXPECT_EQ(att::compare_consumer(ids, reference, kCosmos3).severity, Severity::crash_or_refusal);
  EXPECT_EQ(att::compare_consumer(ids, reference, kSpec3).severity, Severity::metadata_only);
}

// The fields other parts of the layer read: the real-token counts (the MLP's
// token mask) and the sample ids (the MoE per-sample loss).
TEST(ConsumerJudge, CountsAndSampleIdsAreJudgedAsTheLayerReadsThem) {
  const att::ConsumerInput reference = e1();
  att::ConsumerInput fewer = reference;
  fewer.meta.num_full_tokens = 1;
  EXPECT_EQ(att::compare_consumer(fewer, reference, kCosmos3).severity, Severity::wrong_output);
  att::ConsumerInput more = reference;
  more.meta.num_full_tokens = 3;
  const att::Verdict m = att::compare_consumer(more, reference, kCosmos3);
  EXPECT_EQ(m.severity, Severity::silent_wrong_gradient) << m.line;
  EXPECT_NE(m.line.find("takes padding full rows 2 for real"), std::string::npos) << m.line;
  att::ConsumerInput wrong = reference;
  wrong.meta.full_only_sample_ids[0] = 1;  // a real row of sample 0 named sample 1
  const att::Verdict w = att::compare_consumer(wrong, reference, kCosmos3);
  EXPECT_EQ(w.severity, Severity::silent_wrong_gradient) << w.line;
  EXPECT_NE(w.line.find("names another sample"), std::string::npos) << w.line;
  att::ConsumerInput out = reference;
  out.meta.full_only_sample_ids[1] = 7;
  EXPECT_EQ(att::compare_consumer(out, reference, kCosmos3).severity, Severity::crash_or_refusal);
}

// FlashAttention 2 sizes its grid in blocks: a maximum one row short drops a
// row only when the shortfall crosses a block. FA3 counts from cu_seqlens.
TEST(ConsumerJudge, AShortMaximumDropsRowsOnlyAcrossAnFa2Block) {
  const att::ConsumerInput reference = e2();  // full segments of 100, 140 and a pad segment of 16
  att::ConsumerInput within = reference;
  within.meta.pad_segment->max_full_len = 139;  // 140 needs 3 blocks of 64 either way
  EXPECT_EQ(att::compare_consumer(within, reference, kSpec2).severity, Severity::metadata_only);
  att::ConsumerInput across = reference;
  across.meta.pad_segment->max_full_len = 128;  // 2 blocks: rows 128-139 of the segment are dropped
  const att::Verdict v = att::compare_consumer(across, reference, kSpec2);
  EXPECT_GE(v.severity, Severity::wrong_output) << v.line;
  EXPECT_EQ(att::compare_consumer(across, reference, kSpec3).severity, Severity::metadata_only);
}

// FlashAttention 2 refuses a grid of 0 blocks in one dimension (the
// gen->und pass with a causal maximum of 0 and a full one that is not); the
// real consumer's checks refuse it first, and both maxima 0 in its flash3
// wrapper (an empty batch).
TEST(ConsumerJudge, KernelRefusalsAreModelled) {
  att::ConsumerInput zero = e1();
  zero.meta.pad_segment->max_causal_len = 0;
  const att::ConsumerReport fa2 = att::judge_consumer(zero, e1(), kSpec2);
  EXPECT_TRUE(has(fa2, Severity::crash_or_refusal, "three_way",
                  "the gen->und cross-attention is refused: pad_segment.max_full_len = 2 and "
                  "pad_segment.max_causal_len = 0: a grid of 0 blocks in one dimension does not launch"))
      << att::format_consumer_report(fa2);
  EXPECT_FALSE(has(att::judge_consumer(zero, e1(), kSpec3), Severity::crash_or_refusal, "three_way", ""));
  const att::ConsumerReport cosmos = att::judge_consumer(zero, e1(), kCosmos3);
  EXPECT_TRUE(has(cosmos, Severity::crash_or_refusal, "two_way",
                  "the causal pass is refused: both maxima are 0: an empty batch"))
      << att::format_consumer_report(cosmos);
  // The training step stops at the first refused call: three-way's causal pass.
  EXPECT_TRUE(has(cosmos, Severity::crash_or_refusal, "three_way", "the causal pass is refused"));
  EXPECT_FALSE(has(cosmos, Severity::crash_or_refusal, "three_way", "cross-attention"));
}

// Text-only samples that are not last: the gen->und pass pairs each sample's
// GEN split with its own und split (the old split_owners gave an empty full
// split to the next sample and skipped the check).
TEST(ConsumerJudge, TextOnlySamplesPairTheirOwnSplits) {
  ref::Options o;
  o.pad_segment_only_when_padded = true;  // nothing padded: the plain offsets are the ones read
  const att::ConsumerInput reference = input(make_layout({3, 4}, kPairs, {3, 0, 2, 2}), o);
  ASSERT_FALSE(reference.meta.pad_segment);
  EXPECT_EQ(judge(reference, kSpec3).severity, Severity::metadata_only)
      << att::format_consumer_report(judge(reference, kSpec3));
  att::ConsumerInput port = reference;
  port.meta.causal_seq_offsets = {0, 2, 5};  // sample 1's und rows start one early
  const att::Verdict v = att::compare_consumer(port, reference, kSpec3);
  EXPECT_EQ(v.severity, Severity::wrong_output) << v.line;
}

// --- The layer model's rules, each planted out by the fault it exists for ---

// An unwritten row that only ever meets exact zeros hurts nothing finite:
// GEN padding without CP in the real consumer (RoPE's 0 cos/sin cancels dq,
// the masked MLP's select drops the row, the loss reads real rows). Turning
// any of these into a multiplication by garbage would make it silent.
TEST(ConsumerLayer, ExactZerosCancelFiniteGarbageButNotNan) {
  const att::ConsumerReport r = judge(e1(), kCosmos3);
  EXPECT_FALSE(has(r, Severity::silent_wrong_gradient, "two_way", "")) << att::format_consumer_report(r);
  const std::vector<std::string> g = gradients(r, "two_way");
  EXPECT_TRUE(names(g, "o_proj_moe_gen.weight")) << att::format_consumer_report(r);
  EXPECT_TRUE(names(g, "post_attention_layernorm_moe_gen.weight"));
  EXPECT_TRUE(names(g, "norm_moe_gen.weight"));
  // The MLP's input is a select, not a product: its weights take nothing from
  // padding rows, not even NaN.
  EXPECT_FALSE(names(g, "mlp_moe_gen weights"));
}

// The spec's text has no zero factor on padding rows: its layer carries a
// bias, so the bias gradients are named; the real consumer's finding is
// reported for the configuration without attention_bias unless the bias makes
// it worse (then it says "(with attention_bias)").
TEST(ConsumerLayer, BiasesAreTheSpecsAndAConditionOfTheRealConsumer) {
  const std::vector<std::string> spec = gradients(judge(e5(), kSpec3), "two_way");
  EXPECT_TRUE(names(spec, "q_proj_moe_gen.bias"));
  const att::ConsumerReport cosmos = judge(e6a(), kCosmos3);
  const std::vector<std::string> g = gradients(cosmos, "two_way");
  EXPECT_TRUE(names(g, "q_proj_moe_gen.weight")) << att::format_consumer_report(cosmos);
  EXPECT_FALSE(names(g, "q_proj_moe_gen.bias"));
  EXPECT_FALSE(has(cosmos, Severity::silent_wrong_gradient, "two_way", "(with attention_bias)"));
}

// NATTEN zero-fills its varlen outputs and gradients, so the GEN padding rows
// outside its segments (from token shapes) hold 0, never garbage.
TEST(ConsumerLayer, NattenZeroFillsWhatItsSegmentsDoNotCover) {
  for (const auto& pack : {e1(), e6a()}) {
    const att::ConsumerReport r = judge(pack, kCosmos3);
    EXPECT_EQ(worst_in(r, "three_way_natten"), Severity::metadata_only) << att::format_consumer_report(r);
  }
}

// --- The geometry against the varlen emulator, row for row ---

struct Rng {
  std::uint64_t s;
  std::int64_t below(std::int64_t n) {
    return static_cast<std::int64_t>(att::splitmix64(s) % static_cast<std::uint64_t>(n));
  }
};

I64 random_cu(Rng& rng, std::int64_t segments, std::int64_t rows) {
  I64 cu{0};
  for (std::int64_t s = 0; s < segments; ++s) cu.push_back(std::min(rows, cu.back() + rng.below(5)));
  return cu;
}

// For random calls (offsets, maxima, grids of 1 to 3 rows, causal or not,
// both LSE conventions): a row the emulator leaves NaN is exactly a row the
// geometry calls unwritten, and two query rows with the same identity and
// the same identities of visible keys get the same bits.
TEST(ConsumerGeometry, AgreesWithTheEmulatorRowForRow) {
  Rng rng{0x5eed};
  std::int64_t checked = 0, pairs = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t nq = rng.below(10), nk = rng.below(10), segs = 1 + rng.below(3);
    att::Call call;
    call.q_rows.resize(static_cast<std::size_t>(nq));
    call.kv_rows.resize(static_cast<std::size_t>(nk));
    for (auto& r : call.q_rows) r = rng.below(4) - 1;  // few identities: equal dependencies happen
    for (auto& r : call.kv_rows) r = rng.below(4) - 1;
    call.kv_src.assign(static_cast<std::size_t>(nk), att::Source{0, 0});
    call.args.cu_seqlens_q = random_cu(rng, segs, nq);
    call.args.cu_seqlens_k = random_cu(rng, segs, nk);
    call.args.max_seqlen_q = rng.below(6);
    call.args.max_seqlen_k = rng.below(6);
    call.args.causal = rng.below(2) == 1;
    call.args.grid_block = 1 + rng.below(3);
    call.args.minus_inf_empty_lse = rng.below(2) == 1;
    const Kernel kernel = Kernel::fa2;
    const att::detail::Geometry g = att::detail::plan_call(call, kernel);
    if (!g.refusal.empty()) continue;
    // Values hashed from the identities: -1 rows by position (each padding row its own).
    const auto fill = [&](const I64& ids, std::uint64_t tag) {
      att::Tensor t(static_cast<std::int64_t>(ids.size()), 1, 2);
      for (std::size_t r = 0; r < ids.size(); ++r)
        for (int e = 0; e < 2; ++e)
          t.row(static_cast<std::int64_t>(r))[e] =
              att::hashed_value(7, tag, ids[r] >= 0 ? static_cast<std::uint64_t>(ids[r]) : 1000 + r, e);
      return t;
    };
    const att::Tensor q = fill(call.q_rows, 1), k = fill(call.kv_rows, 2), v = fill(call.kv_rows, 3);
    const att::Tensor dout = fill(call.q_rows, 4);
    const double nan = att::poison_nan();
    att::Tensor out(nq, 1, 2, nan), dq(nq, 1, 2, nan), dk(nk, 1, 2, nan), dv(nk, 1, 2, nan);
    std::vector<double> lse(static_cast<std::size_t>(nq), nan);
    att::varlen_forward(q, k, v, call.args, out, lse);
    att::varlen_backward(dout, q, k, v, out, lse, call.args, dq, dk, dv);
    const auto is_nan = [](const att::Tensor& t, std::int64_t r) { return std::isnan(t.row(r)[0]); };
    std::map<std::pair<std::int64_t, std::string>, std::int64_t> seen;
    for (std::int64_t i = 0; i < nq; ++i) {
      const att::detail::QueryState st = att::detail::query_state(g, i);
      const bool unwritten = st.out == att::detail::Out::unwritten;
      EXPECT_EQ(is_nan(out, i), unwritten) << "trial " << trial << " out row " << i;
      EXPECT_EQ(is_nan(dq, i), !st.dq_written) << "trial " << trial << " dq row " << i;
      ++checked;
      if (unwritten || call.q_rows[static_cast<std::size_t>(i)] < 0) continue;
      // The dependency: the query's identity, the visible keys' identities (and
      // for dq, the keys the backward grid keeps), as text.
      std::string keys;
      if (st.out == att::detail::Out::computed || st.out == att::detail::Out::empty)
        for (const att::detail::Run& r : att::detail::slice(
                 g.segments[static_cast<std::size_t>(g.q_seg[static_cast<std::size_t>(i)])].k_ids, 0, st.n))
          keys += std::to_string(r.first) + "x" + std::to_string(r.count) + " ";
      keys += st.out == att::detail::Out::zero ? "zero" : "";
      const auto key = std::make_pair(call.q_rows[static_cast<std::size_t>(i)], keys);
      const auto [it, added] = seen.emplace(key, i);
      if (!added) {
        ++pairs;
        EXPECT_TRUE(att::same_bits(out.row(i)[0], out.row(it->second)[0]) &&
                    att::same_bits(out.row(i)[1], out.row(it->second)[1]))
            << "trial " << trial << ": rows " << i << " and " << it->second << " share a dependency " << keys;
      }
    }
    for (std::int64_t j = 0; j < nk; ++j) {
      const att::detail::KeyGrad kg = att::detail::key_state(g, j).grad;
      const bool unwritten = kg == att::detail::KeyGrad::unwritten || kg == att::detail::KeyGrad::garbage;
      EXPECT_EQ(is_nan(dk, j), unwritten) << "trial " << trial << " dk row " << j;
      EXPECT_EQ(is_nan(dv, j), unwritten) << "trial " << trial << " dv row " << j;
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(pairs, 50);  // the identity rule was exercised
}

}  // namespace
