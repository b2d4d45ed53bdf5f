// The classes of a case: the edge classes and error tags that classify()
// gives RapidCheck's RC_TAG and the distribution check, and the classes each
// profile's run must reach (required_classes). The generators that aim at
// them are in generators.cpp and its neighbours (generators_internal.hpp).
#include <algorithm>

#include "generators_internal.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/properties/spec.hpp"

namespace seqpack::properties {
namespace detail {
namespace {

// PROTOCOL.md's order of the error classes.
int class_rank(const std::string& error) {
  static const char* const order[] = {"invalid_option",  "empty_batch", "invalid_layout",     "und_token_in_full_split",
                                      "length_mismatch", "overflow",    "pad_segment_pairing"};
  for (int i = 0; i < 7; ++i)
    if (error == order[i]) return i;
  return -1;
}

// Whether a non-empty stream of alignment a has a step past int32.
bool step_past_int32(std::int64_t rows, std::int64_t a, std::int64_t cp, bool graphs) {
  if (rows <= 0 || a < 1 || cp < 1) return false;
  return spec_lcm(spec_lcm(a, cp), graphs ? 128 : 1) > kInt32Limit;
}

// The latest error class (by rank) that the case's content shows through
// simple checks, or -1; not every fault shows (a split across a sample
// boundary does not), which only makes error:precedence rarer.
int latest_visible_class(const Case& c) {
  const auto& L = c.layout;
  const auto& o = c.options;
  const auto& m = c.marks;
  int latest = -1;
  const auto saw = [&](int rank) { latest = std::max(latest, rank); };
  if (o.cp_world_size < 1 || o.causal_seq_alignment < 1 || o.full_seq_alignment < 1 || m.image_causal < 0 ||
      m.image_full < 0 || m.video_causal < 0 || m.video_full < 0) {
    saw(0);
  }
  if (L.sample_lens.empty()) saw(1);
  bool well_formed = L.split_lens.size() == L.attn_modes.size();
  for (const std::int64_t v : L.sample_lens) well_formed = well_formed && v >= 0;
  for (const std::int64_t v : L.split_lens) well_formed = well_formed && v >= 0;
  for (const auto& mode : L.attn_modes) well_formed = well_formed && (mode == "causal" || mode == "full");
  const Wide tokens = wide_sum(L.sample_lens);
  well_formed = well_formed && wide_sum(L.split_lens) == tokens;
  I64 und = L.und_token_indexes;
  std::sort(und.begin(), und.end());
  well_formed = well_formed && std::adjacent_find(und.begin(), und.end()) == und.end() &&
                (und.empty() || (und.front() >= 0 && und.back() < tokens));
  if (!well_formed) saw(2);
  if (well_formed) {
    std::int64_t start = 0;
    std::size_t j = 0;
    for (const std::int64_t u : und) {
      while (j < L.split_lens.size() && start + L.split_lens[j] <= u) start += L.split_lens[j++];
      if (j < L.split_lens.size() && L.attn_modes[j] == "full") saw(3);
    }
  }
  if (Wide{c.rows} != tokens) saw(4);
  const SplitCounts n = split_counts(L);
  std::int64_t causal = 0, full = 0;
  for (std::size_t j = 0; j < std::min(L.split_lens.size(), L.attn_modes.size()); ++j) {
    (L.attn_modes[j] == "causal" ? causal : full) += std::max<std::int64_t>(0, L.split_lens[j]);
  }
  const bool segment = n.causal == n.full && n.full > 0;
  const std::int64_t mark_causal = o.is_image_batch ? m.image_causal : m.video_causal;
  const std::int64_t mark_full = o.is_image_batch ? m.image_full : m.video_full;
  if (tokens > kInt32Limit || step_past_int32(causal, o.causal_seq_alignment, o.cp_world_size, o.pad_for_cuda_graphs) ||
      step_past_int32(full, o.full_seq_alignment, o.cp_world_size, o.pad_for_cuda_graphs) ||
      (o.pad_for_cuda_graphs && (mark_causal > kInt32Limit || mark_full > kInt32Limit ||
                                 (segment && Wide{mark_causal} + mark_full > kInt32Limit)))) {
    saw(5);
  }
  if (segment && n.full != n.samples && (!o.pad_segment_only_when_padded || o.pad_for_cuda_graphs)) saw(6);
  return latest;
}

}  // namespace

void error_tags(const Case& c, std::vector<std::string>& tags) {
  const auto& L = c.layout;
  const auto& o = c.options;
  const auto& m = c.marks;
  tags.push_back("fault:" + c.fault);
  // An und fault that is not the list's last index (the planted one is last
  // unless the list was reordered): out of range, repeated, or the largest
  // index (the one in a full split).
  if (const auto& u = L.und_token_indexes; u.size() >= 2) {
    const std::int64_t last = u.back();
    std::int64_t tokens = 0;
    for (const std::int64_t len : L.sample_lens) tokens += std::max<std::int64_t>(0, len);
    const bool moved = (c.fault == "und_out_of_range" && last >= 0 && last < tokens) ||
                       (c.fault == "und_repeated" && std::count(u.begin(), u.end(), last) == 1) ||
                       (c.fault == "und_in_full" && last != *std::max_element(u.begin(), u.end()));
    if (moved) tags.push_back("fault:und_unordered");
  }
  if (latest_visible_class(c) > class_rank(c.expect_error)) tags.push_back("error:precedence");
  if (std::any_of(L.sample_lens.begin(), L.sample_lens.end(), [](std::int64_t v) { return v < 0; })) {
    tags.push_back("fault:negative_sample_len");
  }
  if (m.image_causal < 0 || m.image_full < 0 || m.video_causal < 0 || m.video_full < 0) {
    tags.push_back("fault:negative_mark");
  }
  if (c.expect_error == "overflow") {
    const bool in_range = o.cp_world_size >= 1 && o.cp_world_size <= kInt32Limit && o.full_seq_alignment >= 1 &&
                          o.full_seq_alignment <= kInt32Limit && o.causal_seq_alignment >= 1 &&
                          o.causal_seq_alignment <= kInt32Limit;
    if (in_range && step_past_int32(full_rows(L), o.full_seq_alignment, o.cp_world_size, o.pad_for_cuda_graphs)) {
      tags.push_back("fault:overflow_lcm");
    }
    const std::int64_t mc = o.is_image_batch ? m.image_causal : m.video_causal;
    const std::int64_t mf = o.is_image_batch ? m.image_full : m.video_full;
    if (o.pad_for_cuda_graphs && mc <= kInt32Limit && mf <= kInt32Limit && Wide{mc} + mf > kInt32Limit) {
      tags.push_back("fault:overflow_interleaved");
    }
  }
  if (c.expect_error == "pad_segment_pairing") {
    const SplitCounts n = split_counts(L);
    if (n.samples >= 2) tags.push_back("error:pairing_multi_sample");
    if (n.full < n.samples) tags.push_back("error:pairing_fewer_full_splits");
    if (n.full > n.samples) tags.push_back("error:pairing_more_full_splits");
  }
}

}  // namespace detail

using detail::error_tags;
using detail::split_counts;
using detail::SplitCounts;

std::vector<std::string> classify(const Case& c) {
  std::vector<std::string> tags;
  if (!c.expect_error.empty()) {
    tags.push_back("error:" + c.expect_error);
    error_tags(c, tags);
    return tags;
  }
  const auto& L = c.layout;
  std::int64_t causal = 0, full = 0;
  bool empty_causal = false, empty_full = false;
  for (std::size_t j = 0; j < L.split_lens.size(); ++j) {
    const bool is_causal = L.attn_modes[j] == "causal";
    (is_causal ? causal : full) += L.split_lens[j];
    if (L.split_lens[j] == 0) (is_causal ? empty_causal : empty_full) = true;
  }
  const SplitCounts n = split_counts(L);
  const auto& o = c.options;
  const auto [need_causal, need_full] = stream_needs(c);
  const std::int64_t reserve = n.causal == n.full && n.causal > 0 ? 1 : 0;
  for (const std::int64_t need : {causal + reserve, full + reserve}) {
    for (const std::int64_t b : kSpecTierEdges) {
      if (need == b) tags.push_back("bucket_boundary:on");
      if (need == b + 1 || need == b - 1) tags.push_back("bucket_boundary:off_by_one");
    }
    if (need > 0 && need % 128 == 0) tags.push_back("multiple_of_128");
  }
  // The edges of each stream's own arithmetic, from its need.
  for (const auto& [need, a] :
       {std::pair{need_causal, o.causal_seq_alignment}, std::pair{need_full, o.full_seq_alignment}}) {
    const std::int64_t e = spec_lcm(a, o.cp_world_size);
    const bool non_pow2 = !spec_is_pow2(e);
    for (const SpecEdge& edge : spec_edges_near(need, a, o.cp_world_size, o.pad_for_cuda_graphs)) {
      const std::string where = need == edge.at ? "on" : need < edge.at ? "below" : "above";
      switch (edge.kind) {
        case SpecEdge::Kind::tier:
          tags.push_back("bucket_edge:" + std::to_string(edge.at));
          tags.push_back("bucket_edge:" + where);
          tags.push_back(o.is_image_batch ? "bucket_edge:image" : "bucket_edge:video");
          if (non_pow2) tags.push_back("bucket_edge:non_pow2_alignment");
          if (o.cp_world_size > 1) tags.push_back("bucket_edge:cp>1");
          break;
        case SpecEdge::Kind::bucket_step:
          if (edge.at >= 2 * edge.step && non_pow2) tags.push_back("bucket_step_edge:non_pow2_alignment");
          if (edge.at > 8192) tags.push_back("bucket_step_edge:past_8192");
          break;
        case SpecEdge::Kind::alignment_multiple:
          // Long streams only: short ones sit next to a multiple of a small
          // alignment by chance.
          if (o.cp_world_size > 1 && non_pow2 && edge.step >= 5 && need >= 1024) {
            tags.push_back("alignment_multiple:cp>1");
            tags.push_back("alignment_multiple:cp>1:" + where);
          }
          break;
      }
    }
  }
  for (const std::int64_t a : {o.causal_seq_alignment, o.full_seq_alignment}) {
    if (a > 1 && a % 2 == 1) tags.push_back("alignment:odd");
    if (a >= 128) tags.push_back("alignment:large");
  }
  if (o.cp_world_size > 1) tags.push_back("cp>1");
  if (o.cp_world_size > 1 &&
      (std::gcd(o.cp_world_size, o.causal_seq_alignment) > 1 || std::gcd(o.cp_world_size, o.full_seq_alignment) > 1)) {
    tags.push_back("cp_shares_factor_with_alignment");
  }
  if (o.pad_for_cuda_graphs) tags.push_back("cuda_graphs");
  if (c.marks != reference::GraphMarks{}) tags.push_back("marks_from_earlier_calls");
  // Streams already on a multiple of everything that pads them (with graphs,
  // of the bucket at their length), on a layout that pairs.
  if (o.pad_segment_only_when_padded && n.causal == n.full && n.full > 0 &&
      spec_padded(causal, o.cp_world_size, o.pad_for_cuda_graphs, o.causal_seq_alignment) == causal &&
      spec_padded(full, o.cp_world_size, o.pad_for_cuda_graphs, o.full_seq_alignment) == full) {
    tags.push_back("only_when_padded_already_aligned");
    if (o.cp_world_size > 1) tags.push_back("only_when_padded_already_aligned:cp>1");
    if (o.pad_for_cuda_graphs && std::max(causal, full) > 2048) {
      tags.push_back("only_when_padded_already_aligned:graphs_past_2048");
    }
  }
  // Layouts beyond the packer's (by counts: not one full split per sample, or
  // causal splits in some samples only).
  if (n.full != n.samples || (n.causal != 0 && n.causal != n.samples)) tags.push_back("layout:unusual");
  if (n.causal == n.full && n.full > 0 && n.full != n.samples) tags.push_back("layout:pairing_violated");
  if (std::find(L.sample_lens.begin(), L.sample_lens.end(), 0) != L.sample_lens.end()) tags.push_back("sample:empty");
  if (!std::is_sorted(L.und_token_indexes.begin(), L.und_token_indexes.end())) tags.push_back("und:unordered");
  if (empty_causal) tags.push_back("empty_causal_split");
  if (empty_full) tags.push_back("empty_full_split");
  if (n.causal == 0) tags.push_back("full_only");
  if (L.sample_lens.size() == 1) tags.push_back("samples:1");
  if (L.sample_lens.size() >= 64) tags.push_back("samples:64+");
  if (causal > 20000 || full > 20000) tags.push_back("stream>20000");
  tags.push_back("row_bytes:" + std::to_string(c.row_bytes));
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  return tags;
}

const std::vector<RequiredClass>& required_classes(Profile profile) {
  // Shares of the runner's default run (1,000 cases); the distribution test
  // checks them at three seeds.
  static const std::vector<RequiredClass> packer = {
      {"bucket_boundary:on", 0.005},
      {"bucket_boundary:off_by_one", 0.005},
      {"multiple_of_128", 0.005},
      {"bucket_edge:2048", 0.005},
      {"bucket_edge:4096", 0.005},
      {"bucket_edge:8192", 0.005},
      {"bucket_edge:16384", 0.005},
      {"bucket_edge:on", 0.01},
      {"bucket_edge:below", 0.005},
      {"bucket_edge:above", 0.005},
      {"bucket_edge:image", 0.005},
      {"bucket_edge:video", 0.005},
      {"bucket_edge:cp>1", 0.005},
      {"bucket_edge:non_pow2_alignment", 0.03},
      {"bucket_step_edge:non_pow2_alignment", 0.005},
      {"bucket_step_edge:past_8192", 0.005},
      {"alignment_multiple:cp>1", 0.05},
      {"alignment_multiple:cp>1:on", 0.02},
      {"alignment_multiple:cp>1:below", 0.01},
      {"alignment_multiple:cp>1:above", 0.01},
      {"alignment:odd", 0.05},
      {"alignment:large", 0.05},
      {"cp>1", 0.1},
      {"cp_shares_factor_with_alignment", 0.05},
      {"cuda_graphs", 0.1},
      {"marks_from_earlier_calls", 0.1},
      {"only_when_padded_already_aligned", 0.02},
      {"only_when_padded_already_aligned:cp>1", 0.03},
      {"only_when_padded_already_aligned:graphs_past_2048", 0.003},
      {"layout:unusual", 0.01},
      {"layout:pairing_violated", 0.005},
      {"sample:empty", 0.02},
      {"empty_causal_split", 0.05},
      {"empty_full_split", 0.05},
      {"full_only", 0.05},
      {"samples:1", 0.03},
      {"samples:64+", 0.01},
      {"stream>20000", 0.01},
      {"row_bytes:1", 0.03},
      {"row_bytes:2", 0.03},
      {"row_bytes:4", 0.03},
      {"row_bytes:8", 0.03},
      {"row_bytes:16", 0.03},
      {"und:unordered", 0.05},
  };
  // The strict profile spends most cases on faults; its valid edges are the
  // packer's, checked there at larger shares.
  static const std::vector<RequiredClass> strict = {
      {"full_only", 0.01},
      {"cp>1", 0.03},
      {"cuda_graphs", 0.03},
      {"marks_from_earlier_calls", 0.03},
      {"bucket_edge:non_pow2_alignment", 0.005},
      {"alignment_multiple:cp>1", 0.005},
      {"only_when_padded_already_aligned", 0.002},
      {"layout:unusual", 0.03},
      {"layout:pairing_violated", 0.01},
      {"sample:empty", 0.01},
      {"error:invalid_option", 0.02},
      {"error:empty_batch", 0.01},
      {"error:invalid_layout", 0.05},
      {"error:und_token_in_full_split", 0.01},
      {"error:length_mismatch", 0.01},
      {"error:overflow", 0.02},
      {"error:pad_segment_pairing", 0.02},
      {"error:precedence", 0.1},
      {"error:pairing_multi_sample", 0.01},
      {"error:pairing_fewer_full_splits", 0.003},
      {"error:pairing_more_full_splits", 0.01},
      {"fault:negative_sample_len", 0.005},
      {"fault:negative_mark", 0.005},
      {"fault:overflow_lcm", 0.005},
      {"fault:overflow_interleaved", 0.005},
      {"und:unordered", 0.01},
      {"fault:und_unordered", 0.005},
  };
  return profile == Profile::packer ? packer : strict;
}

}  // namespace seqpack::properties
