// RapidCheck generators for cases, with the edges of the catalogue on purpose.
#include "seqpack/properties/generators.hpp"

#include <algorithm>
#include <numeric>

#include "seqpack/properties/spec.hpp"

namespace seqpack::properties {
namespace {

namespace gen = rc::gen;
using I64 = std::vector<std::int64_t>;

// The boundaries of the CUDA-graph buckets.
constexpr std::int64_t kBoundaries[] = {2048, 4096, 8192, 16384};

// A stream total chosen on or one off a bucket boundary (or a multiple of 128).
std::int64_t boundary_total() {
  const std::int64_t base = *gen::weightedOneOf<std::int64_t>({
      {3, gen::element<std::int64_t>(2048, 4096, 8192, 16384)},
      {2, gen::map(gen::inRange<std::int64_t>(1, 24), [](std::int64_t k) { return 128 * k; })},
  });
  // With a pad segment the stream needs one row more than it holds, so both
  // the total and the total + 1 land on the boundary across cases.
  return base + *gen::element<std::int64_t>(-2, -1, 0, 1);
}

// `total` rows spread over `parts` lengths (some may be 0).
I64 spread(std::int64_t total, std::size_t parts) {
  if (parts == 0) return {};
  I64 cuts = *gen::container<I64>(parts - 1, gen::inRange<std::int64_t>(0, total + 1));
  std::sort(cuts.begin(), cuts.end());
  I64 out;
  std::int64_t prev = 0;
  for (const std::int64_t c : cuts) {
    out.push_back(c - prev);
    prev = c;
  }
  out.push_back(total - prev);
  return out;
}

// Short split lengths with a fair share of zeros.
std::int64_t short_len(std::int64_t max) {
  return *gen::weightedOneOf<std::int64_t>(
      {{1, gen::just<std::int64_t>(0)}, {4, gen::inRange<std::int64_t>(1, max + 1)}});
}

std::int64_t alignment_for(std::int64_t cp) {
  return *gen::weightedOneOf<std::int64_t>({
      {4, gen::just<std::int64_t>(1)},
      {4, gen::element<std::int64_t>(2, 4, 7, 8, 16, 64, 128, 129, 256)},
      {1, gen::map(gen::inRange<std::int64_t>(1, 5), [cp](std::int64_t k) { return k * cp; })},
  });
}

reference::Options gen_options(bool pairs) {
  reference::Options o;
  o.cp_world_size =
      *gen::weightedOneOf<std::int64_t>({{3, gen::just<std::int64_t>(1)}, {3, gen::inRange<std::int64_t>(2, 17)}});
  o.causal_seq_alignment = alignment_for(o.cp_world_size);
  o.full_seq_alignment =
      *gen::weightedElement<bool>({{1, true}, {2, false}}) ? o.causal_seq_alignment : alignment_for(o.cp_world_size);
  o.pad_for_cuda_graphs = *gen::weightedElement<bool>({{2, false}, {1, true}});
  o.is_image_batch = *gen::arbitrary<bool>();
  o.pad_segment_only_when_padded = pairs && *gen::weightedElement<bool>({{2, false}, {1, true}});
  return o;
}

// Marks as earlier calls leave them: padded lengths of other batches, under
// other cp sizes and alignments.
std::int64_t earlier_mark() {
  const std::int64_t n = *gen::inRange<std::int64_t>(1, 20000);
  const std::int64_t cp = *gen::inRange<std::int64_t>(1, 9);
  const std::int64_t a = *gen::element<std::int64_t>(1, 2, 7, 64, 128);
  return spec_padded(n, cp, true, a);
}

reference::GraphMarks gen_marks() {
  if (*gen::weightedElement<bool>({{3, false}, {2, true}})) return {};
  const auto mark = [] { return *gen::weightedElement<bool>({{1, false}, {2, true}}) ? earlier_mark() : 0; };
  reference::GraphMarks m;
  m.image_causal = mark();
  m.image_full = mark();
  m.video_causal = mark();
  m.video_full = mark();
  return m;
}

std::int64_t sum(const I64& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }

enum class Size { free, boundary, aligned, long_stream };

Case packer_case() {
  Case c;
  const bool pairs = *gen::weightedElement<bool>({{3, true}, {1, false}});
  const auto samples = static_cast<std::size_t>(
      *gen::weightedOneOf<int>({{6, gen::inRange(2, 9)}, {2, gen::just(1)}, {1, gen::inRange(64, 81)}}));
  const Size size =
      *gen::weightedElement<Size>({{8, Size::free}, {3, Size::boundary}, {2, Size::aligned}, {1, Size::long_stream}});
  c.options = gen_options(pairs);

  I64 causal(samples, 0), full(samples, 0);
  switch (size) {
    case Size::free:
      for (auto& v : causal) v = short_len(12);
      for (auto& v : full) v = short_len(40);
      break;
    case Size::boundary:
      for (auto& v : causal) v = short_len(12);
      full = spread(boundary_total(), samples);
      if (pairs && *gen::arbitrary<bool>()) std::swap(causal, full);
      break;
    case Size::aligned: {
      // Streams already aligned: the case where pad_segment_only_when_padded matters.
      c.options.cp_world_size = 1;
      c.options.pad_segment_only_when_padded = pairs;
      c.options.pad_for_cuda_graphs = *gen::weightedElement<bool>({{2, false}, {1, true}});
      if (c.options.pad_for_cuda_graphs) {
        // Multiples of 256 up to 2048 are whole buckets for any of these alignments.
        c.options.causal_seq_alignment = *gen::element<std::int64_t>(1, 2, 64, 128, 256);
        c.options.full_seq_alignment = *gen::element<std::int64_t>(1, 2, 64, 128, 256);
        causal = spread(256 * *gen::inRange<std::int64_t>(0, 4), samples);
        full = spread(256 * *gen::inRange<std::int64_t>(1, 7), samples);
      } else {
        causal = spread(c.options.causal_seq_alignment * *gen::inRange<std::int64_t>(0, 6), samples);
        full = spread(c.options.full_seq_alignment * *gen::inRange<std::int64_t>(1, 6), samples);
      }
      break;
    }
    case Size::long_stream:
      for (auto& v : causal) v = short_len(30);
      full = spread(*gen::inRange<std::int64_t>(20001, 24000), samples);
      break;
  }

  for (std::size_t s = 0; s < samples; ++s) {
    if (pairs) {
      c.layout.attn_modes.insert(c.layout.attn_modes.end(), {"causal", "full"});
      c.layout.split_lens.insert(c.layout.split_lens.end(), {causal[s], full[s]});
      c.layout.sample_lens.push_back(causal[s] + full[s]);
    } else {
      c.layout.attn_modes.push_back("full");
      c.layout.split_lens.push_back(full[s]);
      c.layout.sample_lens.push_back(full[s]);
    }
  }
  list_und_tokens(c);
  c.marks = gen_marks();
  c.rows = sum(c.layout.sample_lens);
  c.row_bytes = *gen::element<std::size_t>(1, 2, 4, 8, 16, 3, 12);
  c.data_seed = *gen::arbitrary<std::uint64_t>();
  return c;
}

// Valid layouts beyond the packer's: each sample one full split and any
// number of causal splits, in any order.
Case unusual_case() {
  Case c = packer_case();
  c.layout = {};
  const int samples = *gen::inRange(1, 6);
  for (int s = 0; s < samples; ++s) {
    const int causal_splits = *gen::inRange(0, 3);
    const int full_at = *gen::inRange(0, causal_splits + 1);
    std::int64_t len = 0;
    for (int k = 0; k <= causal_splits; ++k) {
      const bool full = k == full_at;
      const std::int64_t l = short_len(full ? 20 : 6);
      c.layout.attn_modes.push_back(full ? "full" : "causal");
      c.layout.split_lens.push_back(l);
      len += l;
    }
    c.layout.sample_lens.push_back(len);
  }
  list_und_tokens(c);
  // Not every und token need be listed.
  if (*gen::arbitrary<bool>() && !c.layout.und_token_indexes.empty()) c.layout.und_token_indexes.pop_back();
  c.rows = sum(c.layout.sample_lens);
  return c;
}

enum class Fault {
  option,
  empty,
  mode_count,
  negative,
  unknown_mode,
  tiling_sum,
  tiling_boundary,
  und_range,
  und_repeat,
  und_in_full,
  length,
  overflow_alignment,
  overflow_mark,
  pairing
};

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::option:
      return "option";
    case Fault::empty:
      return "empty";
    case Fault::mode_count:
      return "mode_count";
    case Fault::negative:
      return "negative_length";
    case Fault::unknown_mode:
      return "unknown_mode";
    case Fault::tiling_sum:
      return "tiling_sum";
    case Fault::tiling_boundary:
      return "tiling_boundary";
    case Fault::und_range:
      return "und_out_of_range";
    case Fault::und_repeat:
      return "und_repeated";
    case Fault::und_in_full:
      return "und_in_full";
    case Fault::length:
      return "length";
    case Fault::overflow_alignment:
      return "overflow_alignment";
    case Fault::overflow_mark:
      return "overflow_mark";
    case Fault::pairing:
      return "pairing";
  }
  return "unknown";
}

Case planted_case() {
  Case c = packer_case();
  auto& L = c.layout;
  const Fault fault =
      *gen::element(Fault::option, Fault::empty, Fault::mode_count, Fault::negative, Fault::unknown_mode,
                    Fault::tiling_sum, Fault::tiling_boundary, Fault::und_range, Fault::und_repeat, Fault::und_in_full,
                    Fault::length, Fault::overflow_alignment, Fault::overflow_mark, Fault::pairing);
  c.fault = fault_name(fault);
  switch (fault) {
    case Fault::option: {
      const std::int64_t bad = *gen::element<std::int64_t>(0, -1, -7, INT64_MIN);
      switch (*gen::inRange(0, 3)) {
        case 0:
          c.options.cp_world_size = bad;
          break;
        case 1:
          c.options.full_seq_alignment = bad;
          break;
        default:
          c.options.causal_seq_alignment = bad;
          break;
      }
      c.expect_error = "invalid_option";
      break;
    }
    case Fault::empty:
      L.sample_lens.clear();
      if (*gen::arbitrary<bool>()) L = {};
      c.rows = 0;
      c.expect_error = "empty_batch";
      break;
    case Fault::mode_count:
      if (*gen::arbitrary<bool>() || L.attn_modes.empty())
        L.attn_modes.push_back("full");
      else
        L.attn_modes.pop_back();
      c.expect_error = "invalid_layout";
      break;
    case Fault::negative: {
      const std::size_t j = *gen::inRange<std::size_t>(0, L.split_lens.size());
      L.split_lens[j] = -*gen::inRange<std::int64_t>(1, 5);
      c.expect_error = "invalid_layout";
      break;
    }
    case Fault::unknown_mode: {
      const std::size_t j = *gen::inRange<std::size_t>(0, L.attn_modes.size());
      L.attn_modes[j] = *gen::element<std::string>("sliding", "Causal", "", "full ");
      c.expect_error = "invalid_layout";
      break;
    }
    case Fault::tiling_sum: {
      const std::size_t j = *gen::inRange<std::size_t>(0, L.split_lens.size());
      L.split_lens[j] += 1;
      list_und_tokens(c);
      c.expect_error = "invalid_layout";
      break;
    }
    case Fault::tiling_boundary: {
      // Move one row across a sample boundary: sums still agree.
      L.sample_lens.insert(L.sample_lens.begin(), {2, 2});
      L.split_lens.insert(L.split_lens.begin(), {1, 2, 1});
      L.attn_modes.insert(L.attn_modes.begin(), {"causal", "full", "full"});
      list_und_tokens(c);
      c.rows += 4;
      c.expect_error = "invalid_layout";
      break;
    }
    case Fault::und_range:
      L.und_token_indexes.push_back(*gen::element<std::int64_t>(-1, c.rows, c.rows + 5, INT64_MAX));
      c.expect_error = "invalid_layout";
      break;
    case Fault::und_repeat:
      if (L.und_token_indexes.empty())
        L.und_token_indexes.push_back(c.rows);  // then out of range instead
      else
        L.und_token_indexes.push_back(L.und_token_indexes[*gen::inRange<std::size_t>(0, L.und_token_indexes.size())]);
      c.expect_error = "invalid_layout";
      break;
    case Fault::und_in_full: {
      // A sample whose full split is never empty, then its first full row as und.
      L.sample_lens.push_back(3);
      L.split_lens.insert(L.split_lens.end(), {1, 2});
      L.attn_modes.insert(L.attn_modes.end(), {"causal", "full"});
      list_und_tokens(c);
      L.und_token_indexes.push_back(c.rows + 1);
      c.rows += 3;
      c.expect_error = "und_token_in_full_split";
      break;
    }
    case Fault::length:
      c.rows += *gen::element<std::int64_t>(1, -1);
      if (c.rows < 0) c.rows = 1;
      c.expect_error = "length_mismatch";
      break;
    case Fault::overflow_alignment:
      // A non-empty stream with an alignment past int32.
      L.sample_lens.push_back(1);
      L.split_lens.push_back(1);
      L.attn_modes.push_back("full");
      c.rows += 1;
      c.options.full_seq_alignment = *gen::element<std::int64_t>(2147483648LL, 1LL << 40, INT64_MAX);
      c.expect_error = "overflow";
      break;
    case Fault::overflow_mark:
      c.options.pad_for_cuda_graphs = true;
      c.marks.image_full = c.marks.video_full = *gen::element<std::int64_t>(2147483648LL, INT64_MAX);
      c.expect_error = "overflow";
      break;
    case Fault::pairing: {
      // One sample of two or more [causal, full] pairs, with a pad segment due.
      const int pairs = *gen::inRange(2, 4);
      std::int64_t len = 0;
      L.sample_lens.clear();
      L.split_lens.clear();
      L.attn_modes.clear();
      for (int k = 0; k < pairs; ++k) {
        const std::int64_t a = short_len(5), b = short_len(5);
        L.split_lens.insert(L.split_lens.end(), {a, b});
        L.attn_modes.insert(L.attn_modes.end(), {"causal", "full"});
        len += a + b;
      }
      L.sample_lens.push_back(len);
      list_und_tokens(c);
      c.rows = len;
      c.options.pad_segment_only_when_padded = false;
      c.options.causal_seq_alignment = c.options.full_seq_alignment = 1;
      c.options.cp_world_size = *gen::inRange<std::int64_t>(1, 4);
      c.marks = {};
      c.expect_error = "pad_segment_pairing";
      break;
    }
  }
  return c;
}

}  // namespace

rc::Gen<Case> gen_packer_case() { return gen::exec(packer_case); }

rc::Gen<Case> gen_strict_case() {
  return gen::weightedOneOf<Case>(
      {{2, gen::exec(packer_case)}, {1, gen::exec(unusual_case)}, {5, gen::exec(planted_case)}});
}

rc::Gen<Case> gen_valid_case(Profile profile) {
  if (profile == Profile::packer) return gen_packer_case();
  return gen::weightedOneOf<Case>({{1, gen::exec(packer_case)}, {1, gen::exec(unusual_case)}});
}

rc::Gen<Case> gen_case(Profile profile) { return profile == Profile::packer ? gen_packer_case() : gen_strict_case(); }

std::vector<std::string> classify(const Case& c) {
  std::vector<std::string> tags;
  if (!c.expect_error.empty()) {
    tags.push_back("error:" + c.expect_error);
    return tags;
  }
  const auto& L = c.layout;
  std::int64_t causal = 0, full = 0, causal_splits = 0, full_splits = 0;
  bool empty_causal = false, empty_full = false;
  for (std::size_t j = 0; j < L.split_lens.size(); ++j) {
    const bool is_causal = L.attn_modes[j] == "causal";
    (is_causal ? causal : full) += L.split_lens[j];
    (is_causal ? causal_splits : full_splits) += 1;
    if (L.split_lens[j] == 0) (is_causal ? empty_causal : empty_full) = true;
  }
  const std::int64_t reserve = causal_splits == full_splits && causal_splits > 0 ? 1 : 0;
  for (const std::int64_t need : {causal + reserve, full + reserve}) {
    for (const std::int64_t b : kBoundaries) {
      if (need == b) tags.push_back("bucket_boundary:on");
      if (need == b + 1 || need == b - 1) tags.push_back("bucket_boundary:off_by_one");
    }
    if (need > 0 && need % 128 == 0) tags.push_back("multiple_of_128");
  }
  const auto& o = c.options;
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
  if (o.pad_segment_only_when_padded && causal % o.causal_seq_alignment == 0 && full % o.full_seq_alignment == 0 &&
      o.cp_world_size == 1 && !o.pad_for_cuda_graphs) {
    tags.push_back("only_when_padded_already_aligned");
  }
  if (empty_causal) tags.push_back("empty_causal_split");
  if (empty_full) tags.push_back("empty_full_split");
  if (causal_splits == 0) tags.push_back("full_only");
  if (L.sample_lens.size() == 1) tags.push_back("samples:1");
  if (L.sample_lens.size() >= 64) tags.push_back("samples:64+");
  if (causal > 20000 || full > 20000) tags.push_back("stream>20000");
  tags.push_back("row_bytes:" + std::to_string(c.row_bytes));
  return tags;
}

const std::vector<std::string>& required_classes(Profile profile) {
  static const std::vector<std::string> packer = {"bucket_boundary:on",
                                                  "bucket_boundary:off_by_one",
                                                  "multiple_of_128",
                                                  "alignment:odd",
                                                  "alignment:large",
                                                  "cp>1",
                                                  "cp_shares_factor_with_alignment",
                                                  "cuda_graphs",
                                                  "marks_from_earlier_calls",
                                                  "only_when_padded_already_aligned",
                                                  "empty_causal_split",
                                                  "empty_full_split",
                                                  "full_only",
                                                  "samples:1",
                                                  "samples:64+",
                                                  "stream>20000",
                                                  "row_bytes:1",
                                                  "row_bytes:2",
                                                  "row_bytes:4",
                                                  "row_bytes:8",
                                                  "row_bytes:16"};
  // The strict profile spends most cases on faults; its valid edges are the
  // packer's, checked there.
  static const std::vector<std::string> strict = [] {
    std::vector<std::string> all = {"full_only", "cp>1", "cuda_graphs", "marks_from_earlier_calls"};
    for (const char* e : {"invalid_option", "empty_batch", "invalid_layout", "und_token_in_full_split",
                          "length_mismatch", "overflow", "pad_segment_pairing"}) {
      all.push_back(std::string("error:") + e);
    }
    return all;
  }();
  return profile == Profile::packer ? packer : strict;
}

}  // namespace seqpack::properties
