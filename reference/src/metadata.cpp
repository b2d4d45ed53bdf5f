// Layout validation and metadata building.
#include "seqpack/reference/metadata.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>

#include "seqpack/common/index_math.hpp"
#include "seqpack/reference/errors.hpp"

namespace seqpack::reference {
namespace {

// Sums of many int64 lengths are exact in 128 bits (at most 2^63 * 2^40).
__extension__ typedef __int128 Wide;

std::string str(Wide v) {
  if (v >= INT64_MIN && v <= INT64_MAX) return std::to_string(static_cast<std::int64_t>(v));
  std::string digits;
  const bool negative = v < 0;
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  return negative ? "-" + digits : digits;
}

std::string indexed(const char* name, std::size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

void check_at_least(std::int64_t value, std::int64_t least, const char* field) {
  if (value < least) {
    throw Error(Errc::invalid_option, field, "must be >= " + std::to_string(least) + ", got " + std::to_string(value));
  }
}

[[noreturn]] void bad_layout(std::string field, const std::string& detail) {
  throw Error(Errc::invalid_layout, std::move(field), detail);
}

Wide total(const std::vector<std::int64_t>& lens) {
  Wide sum = 0;
  for (const std::int64_t v : lens) sum += v;
  return sum;
}

// Every sample boundary must also be a split boundary, and both must end at the
// same row: each split then lies inside one sample. The original checks neither
// (NOTES.md section 6); the reference rejects both.
void check_tiling(const Layout& layout) {
  const auto& samples = layout.sample_lens;
  const auto& splits = layout.split_lens;
  Wide split_end = 0;  // end of split j - 1
  std::size_t j = 0;
  Wide boundary = 0;  // start of sample k
  for (std::size_t k = 0; k <= samples.size(); ++k) {
    while (j < splits.size() && split_end < boundary) split_end += splits[j++];
    if (split_end < boundary) {
      bad_layout("split_lens", "splits sum to " + str(total(splits)) + " rows but samples to " + str(total(samples)));
    }
    if (split_end != boundary) {
      bad_layout(indexed("split_lens", j - 1),
                 "split " + std::to_string(j - 1) + " covers rows [" + str(split_end - splits[j - 1]) + ", " +
                     str(split_end) + "), across the boundary at row " + str(boundary) + " where sample " +
                     std::to_string(k) + (k == samples.size() ? " would start (the samples end there)" : " starts"));
    }
    if (k < samples.size()) boundary += samples[k];
  }
  if (total(splits) != boundary) {
    bad_layout("split_lens", "splits sum to " + str(total(splits)) + " rows but samples to " + str(boundary));
  }
}

// Returns the und indexes in ascending order after checking range and repeats.
std::vector<std::int64_t> sorted_und_indexes(const Layout& layout, Wide num_tokens) {
  const auto& und = layout.und_token_indexes;
  bool ascending = true;
  for (std::size_t i = 0; i < und.size(); ++i) {
    if (und[i] < 0 || und[i] >= num_tokens) {
      bad_layout(indexed("und_token_indexes", i),
                 "index " + std::to_string(und[i]) + " is outside [0, " + str(num_tokens) + ")");
    }
    if (i > 0 && und[i] <= und[i - 1]) ascending = false;
  }
  if (ascending) return und;
  // Callers mostly send ascending indexes. A list that descends, or that is
  // two ascending runs (the protocol's odd-positions-first order), is put in
  // order in linear time; anything else is sorted.
  std::vector<std::int64_t> sorted = und;
  const auto descent = std::is_sorted_until(sorted.begin(), sorted.end());
  if (std::is_sorted(sorted.begin(), sorted.end(), std::greater<>())) {
    std::reverse(sorted.begin(), sorted.end());
  } else if (std::is_sorted(descent, sorted.end())) {
    std::inplace_merge(sorted.begin(), descent, sorted.end());
  } else {
    std::sort(sorted.begin(), sorted.end());
  }
  const auto repeat = std::adjacent_find(sorted.begin(), sorted.end());
  if (repeat != sorted.end()) {
    bad_layout("und_token_indexes", "index " + std::to_string(*repeat) + " appears more than once");
  }
  return sorted;
}

void check_und_in_causal_splits(const Layout& layout, const std::vector<std::int64_t>& sorted_und) {
  const auto& splits = layout.split_lens;
  Wide start = 0;
  std::size_t j = 0;
  const auto is_full = [&](std::size_t k) {
    return k < splits.size() && std::string_view(layout.attn_modes[k]) == "full";
  };
  bool full = is_full(0);  // split j's mode, compared once per split
  for (const std::int64_t u : sorted_und) {
    while (j < splits.size() && start + splits[j] <= u) {
      start += splits[j++];
      full = is_full(j);
    }
    // u < num_tokens, so split j exists and holds u.
    if (full) {
      throw Error(Errc::und_token_in_full_split, "und_token_indexes",
                  "und token at packed row " + std::to_string(u) + " lies in full split " + std::to_string(j) +
                      " (rows [" + str(start) + ", " + str(start + splits[j]) + "))");
    }
  }
}

}  // namespace

void validate_options(const Options& options, const GraphMarks& marks) {
  check_at_least(options.cp_world_size, 1, "options.cp_world_size");
  check_at_least(options.full_seq_alignment, 1, "options.full_seq_alignment");
  check_at_least(options.causal_seq_alignment, 1, "options.causal_seq_alignment");
  check_at_least(marks.image_causal, 0, "graph_bounds.image.causal");
  check_at_least(marks.image_full, 0, "graph_bounds.image.full");
  check_at_least(marks.video_causal, 0, "graph_bounds.video.causal");
  check_at_least(marks.video_full, 0, "graph_bounds.video.full");
}

void validate_layout(const Layout& layout) {
  // The original fails here only by accident (max() of an empty list).
  if (layout.sample_lens.empty()) throw Error(Errc::empty_batch, "sample_lens", "the batch has no samples");
  if (layout.split_lens.size() != layout.attn_modes.size()) {
    bad_layout("attn_modes", std::to_string(layout.attn_modes.size()) + " modes for " +
                                 std::to_string(layout.split_lens.size()) + " splits");
  }
  for (std::size_t i = 0; i < layout.sample_lens.size(); ++i) {
    if (layout.sample_lens[i] < 0) {
      bad_layout(indexed("sample_lens", i), "length must be >= 0, got " + std::to_string(layout.sample_lens[i]));
    }
  }
  for (std::size_t i = 0; i < layout.split_lens.size(); ++i) {
    if (layout.split_lens[i] < 0) {
      bad_layout(indexed("split_lens", i), "length must be >= 0, got " + std::to_string(layout.split_lens[i]));
    }
  }
  // The original silently drops the tokens of any other mode from both streams.
  for (std::size_t i = 0; i < layout.attn_modes.size(); ++i) {
    if (std::string_view(layout.attn_modes[i]) != "causal" && std::string_view(layout.attn_modes[i]) != "full") {
      bad_layout(indexed("attn_modes", i), "mode must be \"causal\" or \"full\", got \"" + layout.attn_modes[i] + "\"");
    }
  }
  check_tiling(layout);
  check_und_in_causal_splits(layout, sorted_und_indexes(layout, total(layout.sample_lens)));
}

Metadata prepare_metadata(const Layout& layout) {
  validate_layout(layout);
  const Wide num_tokens = total(layout.sample_lens);
  // The original's int32 offsets wrap here; the reference refuses.
  if (num_tokens > common::kInt32Max) {
    throw Error(Errc::overflow, "sample_lens", "the batch has " + str(num_tokens) + " tokens, past int32");
  }

  Metadata meta;
  meta.sample_lens = layout.sample_lens;
  meta.split_lens = layout.split_lens;
  meta.attn_modes.reserve(layout.attn_modes.size());
  std::int64_t causal_count = 0;
  for (std::size_t j = 0; j < layout.attn_modes.size(); ++j) {
    const AttnMode mode = std::string_view(layout.attn_modes[j]) == "causal" ? AttnMode::causal : AttnMode::full;
    meta.attn_modes.push_back(mode);
    if (mode == AttnMode::causal) causal_count += layout.split_lens[j];
  }
  const auto n = static_cast<std::int64_t>(num_tokens);

  meta.sample_offsets.reserve(layout.sample_lens.size() + 1);
  meta.sample_offsets.push_back(0);
  for (const std::int64_t len : layout.sample_lens) {
    meta.sample_offsets.push_back(static_cast<std::int32_t>(meta.sample_offsets.back() + len));
    meta.max_sample_len = std::max(meta.max_sample_len, static_cast<std::int32_t>(len));
  }

  meta.causal_indices.reserve(static_cast<std::size_t>(causal_count));
  meta.causal_sample_ids.reserve(static_cast<std::size_t>(causal_count));
  meta.full_indices.reserve(static_cast<std::size_t>(n - causal_count));
  meta.full_only_sample_ids.reserve(static_cast<std::size_t>(n - causal_count));
  meta.causal_seq_offsets.push_back(0);
  meta.full_only_seq_offsets.push_back(0);

  std::int32_t pos = 0;
  std::size_t sample = 0;
  for (std::size_t j = 0; j < meta.split_lens.size(); ++j) {
    const auto len = static_cast<std::int32_t>(meta.split_lens[j]);
    const bool causal = meta.attn_modes[j] == AttnMode::causal;
    auto& indices = causal ? meta.causal_indices : meta.full_indices;
    auto& ids = causal ? meta.causal_sample_ids : meta.full_only_sample_ids;
    auto& offsets = causal ? meta.causal_seq_offsets : meta.full_only_seq_offsets;
    auto& max_len = causal ? meta.max_causal_len : meta.max_full_len;
    // Splits tile the samples, so a non-empty split lies inside one sample:
    // the first whose end is past the split's start.
    if (len > 0) {
      while (meta.sample_offsets[sample + 1] <= pos) ++sample;
    }
    for (std::int32_t r = 0; r < len; ++r) {
      indices.push_back(pos + r);
      ids.push_back(static_cast<std::int64_t>(sample));
    }
    offsets.push_back(offsets.back() + len);
    max_len = std::max(max_len, len);
    pos += len;
  }
  meta.num_causal_tokens = static_cast<std::int64_t>(meta.causal_indices.size());
  meta.num_full_tokens = static_cast<std::int64_t>(meta.full_indices.size());
  return meta;
}

}  // namespace seqpack::reference
