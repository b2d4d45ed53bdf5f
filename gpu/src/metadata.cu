// Layout validation and metadata: the checks of PROTOCOL.md and
// reference/README.md ("Validation") made by the gpu itself on the host, the
// O(splits) summary on the host, and the O(tokens) arrays on the device.
// Mirrors reference/src/metadata.cpp.
#include <algorithm>

#include <thrust/scan.h>
#include <thrust/scatter.h>

#include "detail.cuh"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace detail {
namespace {

void require_at_least(std::int64_t value, std::int64_t least, const char* field) {
  if (value < least) {
    fail(ref::Errc::invalid_option, field,
         std::to_string(value) + " is below the least allowed value, " + std::to_string(least));
  }
}

[[noreturn]] void invalid_layout(std::string field, const std::string& detail) {
  fail(ref::Errc::invalid_layout, std::move(field), detail);
}

void require_non_negative(const std::vector<std::int64_t>& lens, const char* name) {
  for (std::size_t i = 0; i < lens.size(); ++i) {
    if (lens[i] < 0) invalid_layout(at(name, i), "negative length " + std::to_string(lens[i]));
  }
}

std::string rows_text(std::uint64_t n) {
  return n == UINT64_MAX ? std::string("more than 2^64 - 1") : std::to_string(n);
}

// Splits tile the samples: each split lies inside one sample, and the splits
// end where the samples end. Walked with the rows still uncovered in the
// current sample, so no sum of lengths is formed (any int64 length passes).
void check_tiling(const ref::Layout& layout) {
  const std::vector<std::int64_t>& sample_lens = layout.sample_lens;
  const std::vector<std::int64_t>& split_lens = layout.split_lens;
  std::size_t sample = 0;
  std::int64_t left = sample_lens[0];
  for (std::size_t j = 0; j < split_lens.size(); ++j) {
    const std::int64_t len = split_lens[j];
    if (len == 0) continue;  // an empty split lies anywhere
    while (left == 0 && sample + 1 < sample_lens.size()) left = sample_lens[++sample];
    if (len <= left) {
      left -= len;
      continue;
    }
    if (left == 0) {  // every sample is covered already
      invalid_layout("split_lens",
                     "split " + std::to_string(j) + " (" + std::to_string(len) +
                         " rows) starts where the last sample ends: the splits have more rows than the samples");
    }
    invalid_layout(at("split_lens", j), "split " + std::to_string(j) + " has " + std::to_string(len) +
                                            " rows but only " + std::to_string(left) + " rows of sample " +
                                            std::to_string(sample) + " are left: it crosses the sample's end");
  }
  std::size_t open = sample;
  while (left == 0 && open + 1 < sample_lens.size()) left = sample_lens[++open];
  if (left != 0) {
    invalid_layout("split_lens", "the splits end with " + std::to_string(left) + " rows of sample " +
                                     std::to_string(open) + " uncovered: the samples have more rows than the splits");
  }
}

// Und indexes: each in [0, rows) (first offender by position), then no index
// twice, then none inside a full split.
void check_und_tokens(const ref::Layout& layout) {
  const std::vector<std::int64_t>& und = layout.und_token_indexes;
  if (und.empty()) return;
  const std::uint64_t rows = total_rows(layout.sample_lens);
  for (std::size_t i = 0; i < und.size(); ++i) {
    if (und[i] < 0 || static_cast<std::uint64_t>(und[i]) >= rows) {
      invalid_layout(
          at("und_token_indexes", i),
          "token " + std::to_string(und[i]) + " is not a row of the packed sequence [0, " + rows_text(rows) + ")");
    }
  }
  std::vector<std::int64_t> sorted = und;
  if (!std::is_sorted(sorted.begin(), sorted.end())) std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1]) {
      invalid_layout("und_token_indexes", "token " + std::to_string(sorted[i]) + " is listed more than once");
    }
  }
  // The end row of each split (saturated: an end past uint64 is past every token).
  std::vector<std::uint64_t> split_end(layout.split_lens.size());
  std::uint64_t end = 0;
  for (std::size_t j = 0; j < split_end.size(); ++j) {
    const auto len = static_cast<std::uint64_t>(layout.split_lens[j]);
    end = len > UINT64_MAX - end ? UINT64_MAX : end + len;
    split_end[j] = end;
  }
  for (const std::int64_t token : sorted) {
    // The split holding the token: the first to end after it (tiling holds, so one does).
    const auto j = static_cast<std::size_t>(
        std::upper_bound(split_end.begin(), split_end.end(), static_cast<std::uint64_t>(token)) - split_end.begin());
    if (layout.attn_modes[j] == "full") {
      fail(ref::Errc::und_token_in_full_split, "und_token_indexes",
           "token " + std::to_string(token) + " is in split " + std::to_string(j) + ", whose mode is full");
    }
  }
}

// The larger of two split numbers: the max-scan that carries each split's
// number from its first row over the rest of its rows.
struct LaterSplit {
  SEQPACK_HOST_DEVICE std::int32_t operator()(std::int32_t a, std::int32_t b) const { return a > b ? a : b; }
};

// Turns stream row i's split number (in indices[i]) into its packed position
// and sample. Per split, `offsets` holds its first stream row, `starts` the
// packed position of that row, `samples` the sample it lies in. Each work item
// reads and writes row i alone.
struct RowOfSplit {
  const std::int64_t* offsets;
  const std::int64_t* starts;
  const std::int64_t* samples;
  std::int32_t* indices;
  std::int64_t* sample_ids;
  SEQPACK_HOST_DEVICE void operator()(std::int32_t i) const {
    const std::int32_t k = indices[i];
    indices[i] = static_cast<std::int32_t>(starts[k] + (i - offsets[k]));
    sample_ids[i] = samples[k];
  }
};

// Writes the rows of whole splits: one work item per split, a plain loop over
// its rows. The host backends' expansion: sequential loops with no carried
// dependency (on a GPU, one thread per split would serialise long splits).
struct SplitRows {
  const std::int64_t* offsets;
  const std::int64_t* starts;
  const std::int64_t* samples;
  std::int32_t* indices;
  std::int64_t* sample_ids;
  SEQPACK_HOST_DEVICE void operator()(std::size_t k) const {
    const auto first = static_cast<std::int32_t>(offsets[k]), last = static_cast<std::int32_t>(offsets[k + 1]);
    const auto start = static_cast<std::int32_t>(starts[k]);
    const std::int64_t sample = samples[k];
    for (std::int32_t i = first; i < last; ++i) {
      indices[i] = start + (i - first);
      sample_ids[i] = sample;
    }
  }
};

// Builds one stream's indices and sample ids on the device from its O(splits)
// tables. On the CUDA build, linear passes over the output itself: each non-empty split's
// number is scattered to its first row, a max-scan in place carries it over the
// split's rows, and a pass turns (split, row) into the packed position and the
// sample. On the host backends, SplitRows. The tables go up in one upload.
void expand_stream(const std::vector<std::int32_t>& offsets, const std::vector<std::int32_t>& starts,
                   const std::vector<std::int64_t>& samples, DeviceBuffer<std::int32_t>& indices,
                   DeviceBuffer<std::int64_t>& sample_ids, Stream s) {
  const std::int32_t n = offsets.back();
  indices = output_ids<std::int32_t>(static_cast<std::size_t>(n), s);
  sample_ids = output_ids<std::int64_t>(static_cast<std::size_t>(n), s);
  if (n == 0) return;
  const std::size_t splits = starts.size();
  // [offsets (splits + 1) | starts | samples | first row of each non-empty split | its number]
  std::vector<std::int64_t> table(offsets.begin(), offsets.end());
  table.insert(table.end(), starts.begin(), starts.end());
  table.insert(table.end(), samples.begin(), samples.end());
  std::size_t non_empty = 0;
  for (std::size_t k = 0; k < splits; ++k) non_empty += offsets[k + 1] > offsets[k] ? 1 : 0;
  for (std::size_t k = 0; k < splits; ++k) {
    if (offsets[k + 1] > offsets[k]) table.push_back(offsets[k]);
  }
  for (std::size_t k = 0; k < splits; ++k) {
    if (offsets[k + 1] > offsets[k]) table.push_back(static_cast<std::int64_t>(k));
  }
  // Freed on s when this returns, after the passes below (stream-ordered).
  const DeviceBuffer<std::int64_t> d_table = upload(table, s, "prepare_metadata");
  const std::int64_t* t = thrust::raw_pointer_cast(d_table.data());
  if (!g_scan_expansion) {
    thrust::for_each(exec(s), thrust::counting_iterator<std::size_t>(0), thrust::counting_iterator<std::size_t>(splits),
                     SplitRows{t, t + splits + 1, t + 2 * splits + 1, thrust::raw_pointer_cast(indices.data()),
                               thrust::raw_pointer_cast(sample_ids.data())});
    return;
  }
  const auto from = [&](std::size_t i) { return d_table.begin() + static_cast<std::ptrdiff_t>(i); };
  const std::size_t firsts = 3 * splits + 1, numbers = firsts + non_empty;
  thrust::fill(exec(s), indices.begin(), indices.end(), 0);
  thrust::scatter(exec(s), from(numbers), from(numbers + non_empty), from(firsts), indices.begin());
  // In place with the input and output ranges starting at the same place, the
  // one overlap Thrust's scan allows; the transform to (index, sample id) is a
  // separate pass, in which each row reads and writes itself alone.
  thrust::inclusive_scan(exec(s), indices.begin(), indices.end(), indices.begin(), LaterSplit{});
  thrust::for_each_n(exec(s), thrust::counting_iterator<std::int32_t>(0), n,
                     RowOfSplit{t, t + splits + 1, t + 2 * splits + 1, thrust::raw_pointer_cast(indices.data()),
                                thrust::raw_pointer_cast(sample_ids.data())});
}

}  // namespace

void validate_options(const ref::Options& options, const ref::GraphMarks& marks) {
  // Stricter than the spec, which reads values below 1 as 1 (reference/README.md, item 1).
  require_at_least(options.cp_world_size, 1, "options.cp_world_size");
  require_at_least(options.full_seq_alignment, 1, "options.full_seq_alignment");
  require_at_least(options.causal_seq_alignment, 1, "options.causal_seq_alignment");
  require_at_least(marks.image_causal, 0, "graph_bounds.image.causal");
  require_at_least(marks.image_full, 0, "graph_bounds.image.full");
  require_at_least(marks.video_causal, 0, "graph_bounds.video.causal");
  require_at_least(marks.video_full, 0, "graph_bounds.video.full");
}

void validate_layout(const ref::Layout& layout) {
  // The spec fails here only by accident, in max() of no samples.
  if (layout.sample_lens.empty()) fail(ref::Errc::empty_batch, "sample_lens", "a batch needs at least one sample");
  if (layout.attn_modes.size() != layout.split_lens.size()) {
    invalid_layout("attn_modes", "one mode per split is needed: " + std::to_string(layout.split_lens.size()) +
                                     " splits, " + std::to_string(layout.attn_modes.size()) + " modes");
  }
  require_non_negative(layout.sample_lens, "sample_lens");
  require_non_negative(layout.split_lens, "split_lens");
  // The spec drops the rows of any other mode from both streams without a word.
  for (std::size_t j = 0; j < layout.attn_modes.size(); ++j) {
    const std::string& mode = layout.attn_modes[j];
    if (mode != "causal" && mode != "full") invalid_layout(at("attn_modes", j), "unknown mode \"" + mode + "\"");
  }
  check_tiling(layout);
  check_und_tokens(layout);
}

bool describes(const ref::Metadata& meta, const ref::Layout& layout) {
  if (meta.sample_lens != layout.sample_lens || meta.split_lens != layout.split_lens) return false;
  if (meta.attn_modes.size() != layout.attn_modes.size()) return false;
  for (std::size_t j = 0; j < meta.attn_modes.size(); ++j) {
    const char* mode = meta.attn_modes[j] == ref::AttnMode::causal ? "causal" : "full";
    if (layout.attn_modes[j] != mode) return false;
  }
  return true;
}

std::uint64_t total_rows(const std::vector<std::int64_t>& lens) {
  std::uint64_t sum = 0;
  for (const std::int64_t len : lens) {
    const auto l = static_cast<std::uint64_t>(len);
    sum = l > UINT64_MAX - sum ? UINT64_MAX : sum + l;
  }
  return sum;
}

LayoutSummary summarize_layout(const ref::Layout& layout) {
  const std::uint64_t rows = total_rows(layout.sample_lens);
  // The spec's int32 offsets would wrap (reference/README.md, item 6).
  if (rows > static_cast<std::uint64_t>(kInt32Max)) {
    fail(ref::Errc::overflow, "sample_lens", "the samples hold " + rows_text(rows) + " rows, past int32");
  }
  LayoutSummary out;
  ref::Metadata& m = out.summary;
  m.sample_lens = layout.sample_lens;
  m.split_lens = layout.split_lens;
  m.sample_offsets.reserve(layout.sample_lens.size() + 1);
  m.sample_offsets.push_back(0);
  for (const std::int64_t len : layout.sample_lens) {
    m.sample_offsets.push_back(static_cast<std::int32_t>(m.sample_offsets.back() + len));
    m.max_sample_len = std::max(m.max_sample_len, static_cast<std::int32_t>(len));
  }
  // Per stream: offsets, and each split's packed start and sample (a
  // non-empty split lies inside one sample: tiling holds).
  m.causal_seq_offsets.push_back(0);
  m.full_only_seq_offsets.push_back(0);
  std::size_t sample = 0;
  std::int32_t pos = 0;
  for (std::size_t j = 0; j < layout.split_lens.size(); ++j) {
    const auto len = static_cast<std::int32_t>(layout.split_lens[j]);
    const bool causal = layout.attn_modes[j] == "causal";
    m.attn_modes.push_back(causal ? ref::AttnMode::causal : ref::AttnMode::full);
    if (len > 0) {
      while (m.sample_offsets[sample + 1] <= pos) ++sample;
    }
    (causal ? out.causal_starts : out.full_starts).push_back(pos);
    (causal ? out.causal_samples : out.full_samples).push_back(static_cast<std::int64_t>(sample));
    std::vector<std::int32_t>& offsets = causal ? m.causal_seq_offsets : m.full_only_seq_offsets;
    offsets.push_back(offsets.back() + len);
    std::int32_t& max_len = causal ? m.max_causal_len : m.max_full_len;
    max_len = std::max(max_len, len);
    pos += len;
  }
  m.num_causal_tokens = m.causal_seq_offsets.back();
  m.num_full_tokens = m.full_only_seq_offsets.back();
  return out;
}

DeviceMetadata expand_metadata(LayoutSummary layout, Stream s) {
  DeviceMetadata d;
  d.summary = std::move(layout.summary);
  const ref::Metadata& m = d.summary;
  expand_stream(m.causal_seq_offsets, layout.causal_starts, layout.causal_samples, d.causal_indices,
                d.causal_sample_ids, s);
  expand_stream(m.full_only_seq_offsets, layout.full_starts, layout.full_samples, d.full_indices,
                d.full_only_sample_ids, s);
  return d;
}

}  // namespace detail

DeviceMetadata prepare_metadata(const reference::Layout& layout, Stream s) {
  detail::validate_layout(layout);
  detail::LayoutSummary summary = detail::summarize_layout(layout);
  // Four int32/int64 arrays per token: 12 bytes each.
  const detail::SerialWhenSmall scope(static_cast<std::size_t>(summary.summary.num_tokens()) * 12);
  DeviceMetadata out = detail::expand_metadata(std::move(summary), s);
  detail::check_device("prepare_metadata", s);
  return out;
}

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
