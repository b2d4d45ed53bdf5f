// The GPU implementation on Thrust. One source for every backend: nvcc builds
// it for CUDA, g++ for Thrust's CPP and OMP host backends (src/backend_*.cpp
// include this file). Host work is O(splits); every O(tokens) array and every
// row moves on the device.
#include <thrust/scan.h>
#include <thrust/scatter.h>
#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>
#include <thrust/execution_policy.h>
#ifdef SEQPACK_GPU_CUDA
#include <thrust/system/cuda/execution_policy.h>
#endif

#include <algorithm>
#include <cstring>
#if defined(__SSE2__) && !defined(SEQPACK_GPU_CUDA) && !defined(SEQPACK_GPU_OMP)
#include <emmintrin.h>
#define SEQPACK_STREAMING_STORES 1  // the sequential host backend on x86: non-temporal row stores
#else
#define SEQPACK_STREAMING_STORES 0
#endif
#include <string>

#include "seqpack/common/index_math.hpp"
#include "seqpack/gpu/pack.hpp"
#include "seqpack/gpu/testing.hpp"
#include "seqpack/reference/errors.hpp"
#include "seqpack/reference/metadata.hpp"
#include "seqpack/reference/padding.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {
namespace {

namespace ref = seqpack::reference;
using common::kInt32Max;

int g_poison = -1;

// The execution policy of an entry point: the caller's stream on CUDA, without
// the synchronisation Thrust would otherwise add after each algorithm; the
// host backends' own system otherwise.
#ifdef SEQPACK_GPU_CUDA
auto exec(Stream stream) { return thrust::cuda::par_nosync.on(stream); }
#else
auto exec(Stream) { return thrust::device; }
#endif

// Output buffers: filled with the test poison when one is set, so that a row
// the implementation forgets to write shows; the padding is always written
// explicitly.
DeviceBuffer<unsigned char> output_bytes(std::size_t n) {
  return g_poison >= 0 ? DeviceBuffer<unsigned char>(n, static_cast<unsigned char>(g_poison)) : DeviceBuffer<unsigned char>(n);
}

template <typename T>
DeviceBuffer<T> output_ids(std::size_t n) {
  return g_poison >= 0 ? DeviceBuffer<T>(n, static_cast<T>(0x5A5A5A5A5A5A5A5Aull)) : DeviceBuffer<T>(n);
}

// A copy of `v` made on the stream.
template <typename T>
DeviceBuffer<T> copy_of(const DeviceBuffer<T>& v, Stream s) {
  DeviceBuffer<T> out = output_ids<T>(v.size());
  thrust::copy(exec(s), v.begin(), v.end(), out.begin());
  return out;
}

// Uploads an O(splits) host table (a host synchronisation on CUDA: the source
// is pageable memory).
template <typename T>
DeviceBuffer<T> upload(const std::vector<T>& v) {
  return DeviceBuffer<T>(v.begin(), v.end());
}

DeviceRows output_rows(std::size_t rows, std::size_t width) { return DeviceRows{rows, width, output_bytes(rows * width)}; }

// Copies rows: dst row i <- src row map[i] (gather) or dst row map[i] <- src row i (scatter).
// On the device each thread moves 16, 8 or 1 bytes at a time, whichever divides
// the row width; on the host backends the row is one memcpy (which the C
// library vectorises for the machine).
struct RowCopy {
  const unsigned char* src;
  unsigned char* dst;
  const std::int32_t* map;
  std::size_t width;
  bool scatter;
  bool streaming;  // host only: non-temporal stores for outputs larger than the cache

  SEQPACK_HOST_DEVICE void operator()(std::size_t i) const {
    const std::size_t s = scatter ? i : static_cast<std::size_t>(map[i]);
    const std::size_t d = scatter ? static_cast<std::size_t>(map[i]) : i;
    const unsigned char* from = src + s * width;
    unsigned char* to = dst + d * width;
#ifndef __CUDA_ARCH__
#if SEQPACK_STREAMING_STORES
    if (streaming) {  // 16-byte aligned rows of a multiple of 16 bytes (checked by move_rows)
      for (std::size_t k = 0; k < width; k += 16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(to + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + k)));
      }
      return;
    }
#endif
    std::memcpy(to, from, width);
#else
    if (width % 16 == 0) {
      struct alignas(16) V16 {
        std::uint64_t a, b;
      };
      for (std::size_t k = 0; k < width; k += 16) *reinterpret_cast<V16*>(to + k) = *reinterpret_cast<const V16*>(from + k);
    } else if (width % 8 == 0) {
      for (std::size_t k = 0; k < width; k += 8)
        *reinterpret_cast<std::uint64_t*>(to + k) = *reinterpret_cast<const std::uint64_t*>(from + k);
    } else {
      for (std::size_t k = 0; k < width; ++k) to[k] = from[k];
    }
#endif
  }
};

void move_rows(const DeviceRows& src, DeviceRows& dst, const DeviceBuffer<std::int32_t>& map, bool scatter, Stream s) {
  if (src.row_bytes == 0 || map.empty()) return;
  // On the host, a copy much larger than the last-level cache bypasses it, as
  // the C library's memcpy does: the rows would only evict the cache, and
  // non-temporal stores save the read of each destination line.
  bool streaming = false;
#if SEQPACK_STREAMING_STORES
  streaming = src.row_bytes % 16 == 0 && map.size() * src.row_bytes >= (std::size_t{16} << 20) &&
              reinterpret_cast<std::uintptr_t>(thrust::raw_pointer_cast(dst.bytes.data())) % 16 == 0;
#endif
  thrust::for_each(exec(s), thrust::counting_iterator<std::size_t>(0), thrust::counting_iterator<std::size_t>(map.size()),
                   RowCopy{thrust::raw_pointer_cast(src.bytes.data()), thrust::raw_pointer_cast(dst.bytes.data()),
                           thrust::raw_pointer_cast(map.data()), src.row_bytes, scatter, streaming});
#if SEQPACK_STREAMING_STORES
  if (streaming) _mm_sfence();
#endif
}

// Zero rows [from, rows) of a stream.
void zero_tail(DeviceRows& rows, std::size_t from, Stream s) {
  thrust::fill(exec(s), rows.bytes.begin() + static_cast<std::ptrdiff_t>(from * rows.row_bytes), rows.bytes.end(),
               static_cast<unsigned char>(0));
}

// (row i, split k) -> (packed position, sample) of stream row i. Per split,
// `offsets` holds its first stream row, `starts` the packed position of that
// row, `samples` the sample it lies in.
struct StreamRow {
  const std::int64_t* offsets;
  const std::int64_t* starts;
  const std::int64_t* samples;
  SEQPACK_HOST_DEVICE thrust::tuple<std::int32_t, std::int64_t> operator()(
      const thrust::tuple<std::int32_t, std::int32_t>& row) const {
    const std::int32_t i = thrust::get<0>(row), k = thrust::get<1>(row);
    return thrust::make_tuple(static_cast<std::int32_t>(starts[k] + (i - offsets[k])), samples[k]);
  }
};

// Carries the larger split number forward, keeping the later row's number.
struct CarrySplit {
  SEQPACK_HOST_DEVICE thrust::tuple<std::int32_t, std::int32_t> operator()(
      const thrust::tuple<std::int32_t, std::int32_t>& a, const thrust::tuple<std::int32_t, std::int32_t>& b) const {
    const std::int32_t ka = thrust::get<1>(a), kb = thrust::get<1>(b);
    return thrust::make_tuple(thrust::get<0>(b), ka > kb ? ka : kb);
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

// Which expansion builds the metadata arrays: the scan (the CUDA build's) or
// whole splits (the host backends'). Tests switch it to run both everywhere.
#ifdef SEQPACK_GPU_CUDA
bool g_scan_expansion = true;
#else
bool g_scan_expansion = false;
#endif

// Builds one stream's indices and sample ids on the device from its O(splits)
// tables. On the CUDA build, linear passes over the output itself: each non-empty split's
// number is scattered to its first row, a max-scan carries it over the split's
// rows, and a transform turns (split, row) into the packed position and the
// sample (fused into the scan's output). On the host backends, SplitRows. The
// tables go up in one upload.
void expand_stream(const std::vector<std::int32_t>& offsets, const std::vector<std::int32_t>& starts,
                   const std::vector<std::int64_t>& samples, DeviceBuffer<std::int32_t>& indices,
                   DeviceBuffer<std::int64_t>& sample_ids, Stream s) {
  const std::int32_t n = offsets.back();
  indices = output_ids<std::int32_t>(static_cast<std::size_t>(n));
  sample_ids = output_ids<std::int64_t>(static_cast<std::size_t>(n));
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
  const DeviceBuffer<std::int64_t> d_table = upload(table);
  const std::int64_t* t = thrust::raw_pointer_cast(d_table.data());
  if (!g_scan_expansion) {
    thrust::for_each(exec(s), thrust::counting_iterator<std::size_t>(0), thrust::counting_iterator<std::size_t>(splits),
                     SplitRows{t, t + splits + 1, t + 2 * splits + 1, thrust::raw_pointer_cast(indices.data()),
                               thrust::raw_pointer_cast(sample_ids.data())});
    return;
  }
  const auto at = [&](std::size_t from) { return d_table.begin() + static_cast<std::ptrdiff_t>(from); };
  const std::size_t firsts = 3 * splits + 1, numbers = firsts + non_empty;
  thrust::fill(exec(s), indices.begin(), indices.end(), 0);
  thrust::scatter(exec(s), at(numbers), at(numbers + non_empty), at(firsts), indices.begin());
  // One pass: the scan carries (row, split) and its output is transformed
  // straight into (index, sample id); it reads indices[i] before writing it.
  const auto rows = thrust::make_zip_iterator(thrust::make_tuple(thrust::counting_iterator<std::int32_t>(0), indices.begin()));
  const auto out = thrust::make_transform_output_iterator(
      thrust::make_zip_iterator(thrust::make_tuple(indices.begin(), sample_ids.begin())),
      StreamRow{t, t + splits + 1, t + 2 * splits + 1});
  thrust::inclusive_scan(exec(s), rows, rows + n, out, CarrySplit{});
}

std::int64_t padded(std::int64_t n, std::int64_t cp, bool graphs, std::int64_t a, const char* n_field, const char* a_field) {
  return ref::detail::padded_size(n, cp, graphs, a, n_field, a_field);
}

void require_unsharded(const DevicePack& pack, const char* what) {
  if (pack.is_sharded) {
    throw ref::Error(ref::Errc::sharded_pack, "pack.is_sharded",
                     std::string(what) + " needs the whole pack, but this one is a context-parallel shard");
  }
}

}  // namespace

void set_poison(int byte) { g_poison = byte; }
void set_scan_expansion(bool scan) { g_scan_expansion = scan; }

DeviceRows to_device(const reference::Rows& rows, Stream) {
  DeviceRows d{rows.rows(), rows.row_bytes(), DeviceBuffer<unsigned char>(rows.size_bytes())};
  if (rows.size_bytes()) {
    const auto* p = reinterpret_cast<const unsigned char*>(rows.data());
    thrust::copy(p, p + rows.size_bytes(), d.bytes.begin());
  }
  return d;
}

reference::Rows to_host(const DeviceRows& rows, Stream) {
  reference::Rows h(rows.rows, rows.row_bytes);
  if (h.size_bytes()) thrust::copy(rows.bytes.begin(), rows.bytes.end(), reinterpret_cast<unsigned char*>(h.data()));
  return h;
}

DeviceMetadata prepare_metadata(const reference::Layout& layout, Stream s) {
  ref::validate_layout(layout);
  std::int64_t total = 0;
  for (const std::int64_t s : layout.sample_lens) {
    total += s;
    if (total > kInt32Max) {
      throw ref::Error(ref::Errc::overflow, "sample_lens", "the batch has more than 2147483647 tokens, past int32");
    }
  }
  DeviceMetadata d;
  ref::Metadata& m = d.summary;
  m.sample_lens = layout.sample_lens;
  m.split_lens = layout.split_lens;
  m.sample_offsets.push_back(0);
  for (const std::int64_t s : layout.sample_lens) {
    m.sample_offsets.push_back(static_cast<std::int32_t>(m.sample_offsets.back() + s));
    m.max_sample_len = std::max(m.max_sample_len, static_cast<std::int32_t>(s));
  }
  // O(splits): per mode, the stream offsets, each split's packed start and its
  // sample (splits tile the samples, so a non-empty split lies in one).
  std::vector<std::int32_t> causal_starts, full_starts;
  std::vector<std::int64_t> causal_samples, full_samples;
  std::size_t sample = 0;
  m.causal_seq_offsets.push_back(0);
  m.full_only_seq_offsets.push_back(0);
  std::int32_t pos = 0;
  for (std::size_t j = 0; j < layout.split_lens.size(); ++j) {
    const auto len = static_cast<std::int32_t>(layout.split_lens[j]);
    const bool causal = layout.attn_modes[j] == "causal";
    m.attn_modes.push_back(causal ? ref::AttnMode::causal : ref::AttnMode::full);
    (causal ? causal_starts : full_starts).push_back(pos);
    if (len > 0) {
      while (m.sample_offsets[sample + 1] <= pos) ++sample;
    }
    (causal ? causal_samples : full_samples).push_back(static_cast<std::int64_t>(sample));
    auto& offsets = causal ? m.causal_seq_offsets : m.full_only_seq_offsets;
    offsets.push_back(offsets.back() + len);
    auto& max_len = causal ? m.max_causal_len : m.max_full_len;
    max_len = std::max(max_len, len);
    pos += len;
  }
  m.num_causal_tokens = m.causal_seq_offsets.back();
  m.num_full_tokens = m.full_only_seq_offsets.back();
  expand_stream(m.causal_seq_offsets, causal_starts, causal_samples, d.causal_indices, d.causal_sample_ids, s);
  expand_stream(m.full_only_seq_offsets, full_starts, full_samples, d.full_indices, d.full_only_sample_ids, s);
  return d;
}

DevicePack build_pack(const DeviceRows& packed, const reference::Layout& layout, const reference::Options& options,
                      reference::GraphMarks& marks, std::shared_ptr<const DeviceMetadata> prepared, Stream s) {
  ref::validate_options(options, marks);
  std::shared_ptr<const DeviceMetadata> meta;
  if (prepared) {
    if (!prepared->summary.matches_layout(layout)) {
      throw ref::Error(ref::Errc::metadata_mismatch, "prepared_metadata",
                       "the prepared metadata describes another layout than the one given");
    }
    meta = std::move(prepared);
  } else {
    ref::validate_layout(layout);
    std::int64_t sum = 0;
    for (const std::int64_t len : layout.sample_lens) sum = len > INT64_MAX - sum ? INT64_MAX : sum + len;
    if (static_cast<std::uint64_t>(sum) != packed.rows) {
      throw ref::Error(ref::Errc::length_mismatch, "rows",
                       "the packed sequence has " + std::to_string(packed.rows) + " rows but sample_lens sum to " +
                           (sum == INT64_MAX ? std::string("more than int64") : std::to_string(sum)));
    }
    meta = std::make_shared<const DeviceMetadata>(seqpack::gpu::SEQPACK_GPU_BACKEND::prepare_metadata(layout, s));
  }
  const ref::Metadata& m = meta->summary;
  if (static_cast<std::int64_t>(packed.rows) != m.num_tokens()) {
    throw ref::Error(ref::Errc::length_mismatch, "rows",
                     "the packed sequence has " + std::to_string(packed.rows) + " rows but sample_lens sum to " +
                         std::to_string(m.num_tokens()));
  }

  // The lengths (host, O(1)): the same rule as the reference's plan_pack.
  const std::int64_t cp = options.cp_world_size;
  const bool graphs = options.pad_for_cuda_graphs;
  const std::int64_t len_c = m.num_causal_tokens, len_f = m.num_full_tokens;
  const std::size_t causal_splits = m.causal_seq_offsets.size() - 1, full_splits = m.full_only_seq_offsets.size() - 1;
  const auto pad_c = [&](std::int64_t n) {
    return padded(n, cp, graphs, options.causal_seq_alignment, "causal_seq", "options.causal_seq_alignment");
  };
  const auto pad_f = [&](std::int64_t n) {
    return padded(n, cp, graphs, options.full_seq_alignment, "full_only_seq", "options.full_seq_alignment");
  };
  bool segment = causal_splits == full_splits && causal_splits > 0;
  if (segment && options.pad_segment_only_when_padded) segment = graphs || pad_c(len_c) != len_c || pad_f(len_f) != len_f;
  std::int64_t need_c = pad_c(len_c + (segment ? 1 : 0));
  std::int64_t need_f = pad_f(len_f + (segment ? 1 : 0));
  reference::GraphMarks after = marks;
  if (graphs) {
    std::int64_t& mc = options.is_image_batch ? after.image_causal : after.video_causal;
    std::int64_t& mf = options.is_image_batch ? after.image_full : after.video_full;
    mc = std::max(mc, need_c);
    mf = std::max(mf, need_f);
    const char* kind = options.is_image_batch ? "image" : "video";
    if (mc > kInt32Max) throw ref::Error(ref::Errc::overflow, std::string("graph_bounds.") + kind + ".causal", "graph mark " + std::to_string(mc) + " is used as a length, past int32");
    if (mf > kInt32Max) throw ref::Error(ref::Errc::overflow, std::string("graph_bounds.") + kind + ".full", "graph mark " + std::to_string(mf) + " is used as a length, past int32");
    need_c = mc;
    need_f = mf;
  }
  std::optional<reference::PadSegment> seg;
  if (segment) {
    if (need_c + need_f > kInt32Max) {
      throw ref::Error(ref::Errc::overflow, "sample_offsets", "padded streams give a pad-segment sample offset past int32");
    }
    if (m.num_samples() != static_cast<std::int64_t>(full_splits)) {
      throw ref::Error(ref::Errc::pad_segment_pairing, "split_lens",
                       "a pad segment is due but the layout has " + std::to_string(m.num_samples()) + " samples and " +
                           std::to_string(full_splits) + " full splits; it needs one full split per sample");
    }
    reference::PadSegment p;
    p.causal_seq_offsets = m.causal_seq_offsets;
    p.causal_seq_offsets.push_back(static_cast<std::int32_t>(need_c));
    p.max_causal_len = static_cast<std::int32_t>(std::max<std::int64_t>(m.max_causal_len, need_c - len_c));
    p.full_only_seq_offsets = m.full_only_seq_offsets;
    p.full_only_seq_offsets.push_back(static_cast<std::int32_t>(need_f));
    p.max_full_len = static_cast<std::int32_t>(std::max<std::int64_t>(m.max_full_len, need_f - len_f));
    p.sample_offsets = m.sample_offsets;
    p.sample_offsets.push_back(static_cast<std::int32_t>(need_c + need_f));
    p.max_sample_len =
        static_cast<std::int32_t>(std::max<std::int64_t>(m.max_sample_len, need_c - len_c + need_f - len_f));
    seg = std::move(p);
  }

  DevicePack pack;
  pack.max_num_tokens = m.num_tokens();
  pack.causal_seq = output_rows(static_cast<std::size_t>(need_c), packed.row_bytes);
  pack.full_only_seq = output_rows(static_cast<std::size_t>(need_f), packed.row_bytes);
  move_rows(packed, pack.causal_seq, meta->causal_indices, false, s);
  move_rows(packed, pack.full_only_seq, meta->full_indices, false, s);
  zero_tail(pack.causal_seq, static_cast<std::size_t>(len_c), s);
  zero_tail(pack.full_only_seq, static_cast<std::size_t>(len_f), s);
  const std::int64_t pad_id = m.num_samples();
  pack.causal_sample_ids = output_ids<std::int64_t>(static_cast<std::size_t>(need_c));
  pack.full_only_sample_ids = output_ids<std::int64_t>(static_cast<std::size_t>(need_f));
  thrust::copy(exec(s), meta->causal_sample_ids.begin(), meta->causal_sample_ids.end(), pack.causal_sample_ids.begin());
  thrust::fill(exec(s), pack.causal_sample_ids.begin() + len_c, pack.causal_sample_ids.end(), pad_id);
  thrust::copy(exec(s), meta->full_only_sample_ids.begin(), meta->full_only_sample_ids.end(), pack.full_only_sample_ids.begin());
  thrust::fill(exec(s), pack.full_only_sample_ids.begin() + len_f, pack.full_only_sample_ids.end(), pad_id);
  pack.pad_segment = std::move(seg);
  pack.meta = std::move(meta);
  marks = after;
  return pack;
}

DeviceRows get_all_seq(const DevicePack& pack, Stream s) {
  require_unsharded(pack, "get_all_seq");
  DeviceRows out = output_rows(static_cast<std::size_t>(pack.meta->summary.num_tokens()), pack.causal_seq.row_bytes);
  move_rows(pack.causal_seq, out, pack.meta->causal_indices, true, s);
  move_rows(pack.full_only_seq, out, pack.meta->full_indices, true, s);
  return out;
}

DeviceAllSeqPadded get_all_seq_padded(const DevicePack& pack, Stream s) {
  require_unsharded(pack, "get_all_seq_padded");
  const ref::Metadata& m = pack.meta->summary;
  if (!pack.pad_segment) return {get_all_seq(pack, s), m.sample_offsets, m.max_sample_len};
  DeviceRows out = output_rows(pack.causal_seq.rows + pack.full_only_seq.rows, pack.causal_seq.row_bytes);
  move_rows(pack.causal_seq, out, pack.meta->causal_indices, true, s);
  move_rows(pack.full_only_seq, out, pack.meta->full_indices, true, s);
  zero_tail(out, static_cast<std::size_t>(m.num_tokens()), s);
  return {std::move(out), pack.pad_segment->sample_offsets, pack.pad_segment->max_sample_len};
}

void set_all_seq(DevicePack& pack, const DeviceRows& value, Stream s) {
  require_unsharded(pack, "set_all_seq");
  if (value.rows != static_cast<std::size_t>(pack.meta->summary.num_tokens()) || value.row_bytes != pack.causal_seq.row_bytes) {
    throw ref::Error(ref::Errc::invalid_argument, "value",
                     "has " + std::to_string(value.rows) + " rows of " + std::to_string(value.row_bytes) +
                         " bytes, the pack needs " + std::to_string(pack.meta->summary.num_tokens()) + " of " +
                         std::to_string(pack.causal_seq.row_bytes));
  }
  move_rows(value, pack.causal_seq, pack.meta->causal_indices, false, s);
  move_rows(value, pack.full_only_seq, pack.meta->full_indices, false, s);
}

DevicePack from_all_seq(const DeviceRows& packed, const DevicePack& source, Stream s) {
  if (source.is_sharded) {
    // A shard's rows arrive as [local causal ; local full], split at the local causal length.
    if (packed.rows != source.causal_seq.rows + source.full_only_seq.rows) {
      throw ref::Error(ref::Errc::invalid_argument, "packed",
                       "has " + std::to_string(packed.rows) + " rows, the local shard has " +
                           std::to_string(source.causal_seq.rows + source.full_only_seq.rows));
    }
    DevicePack out = zeros_like(source, packed.row_bytes, s);
    const auto split = packed.bytes.begin() + static_cast<std::ptrdiff_t>(source.causal_seq.rows * packed.row_bytes);
    thrust::copy(exec(s), packed.bytes.begin(), split, out.causal_seq.bytes.begin());
    thrust::copy(exec(s), split, packed.bytes.end(), out.full_only_seq.bytes.begin());
    return out;
  }
  if (packed.rows != static_cast<std::size_t>(source.meta->summary.num_tokens())) {
    throw ref::Error(ref::Errc::invalid_argument, "packed",
                     "has " + std::to_string(packed.rows) + " rows, the packed sequence has " +
                         std::to_string(source.meta->summary.num_tokens()));
  }
  DevicePack out = zeros_like(source, packed.row_bytes, s);
  move_rows(packed, out.causal_seq, source.meta->causal_indices, false, s);
  move_rows(packed, out.full_only_seq, source.meta->full_indices, false, s);
  return out;
}

DevicePack shard_pack(const DevicePack& pack, std::int64_t rank, std::int64_t world_size, Stream s) {
  if (world_size < 1) {
    throw ref::Error(ref::Errc::invalid_option, "cp_world_size", "must be >= 1, got " + std::to_string(world_size));
  }
  if (rank < 0 || rank >= world_size) {
    throw ref::Error(ref::Errc::invalid_argument, "rank",
                     "must lie in [0, " + std::to_string(world_size) + "), got " + std::to_string(rank));
  }
  if (pack.is_sharded) throw ref::Error(ref::Errc::sharded_pack, "pack.is_sharded", "the pack is already a shard");
  const auto w = static_cast<std::size_t>(world_size);
  for (const auto& [rows, field] : {std::pair{pack.causal_seq.rows, "causal_seq"}, std::pair{pack.full_only_seq.rows, "full_only_seq"}}) {
    if (rows % w != 0) {
      throw ref::Error(ref::Errc::not_divisible, field,
                       std::to_string(rows) + " padded rows do not split into " + std::to_string(world_size) + " shards");
    }
  }
  const std::size_t lc = pack.causal_seq.rows / w, lf = pack.full_only_seq.rows / w, r = static_cast<std::size_t>(rank);
  DevicePack local;
  local.meta = pack.meta;
  local.max_num_tokens = pack.max_num_tokens;
  local.pad_segment = pack.pad_segment;
  local.is_sharded = true;
  const auto slice = [s](const DeviceRows& rows, std::size_t first, std::size_t count) {
    DeviceRows out = output_rows(count, rows.row_bytes);
    const auto begin = rows.bytes.begin() + static_cast<std::ptrdiff_t>(first * rows.row_bytes);
    thrust::copy(exec(s), begin, begin + static_cast<std::ptrdiff_t>(count * rows.row_bytes), out.bytes.begin());
    return out;
  };
  local.causal_seq = slice(pack.causal_seq, r * lc, lc);
  local.full_only_seq = slice(pack.full_only_seq, r * lf, lf);
  const auto slice_ids = [s](const DeviceBuffer<std::int64_t>& ids, std::size_t first, std::size_t count) {
    DeviceBuffer<std::int64_t> out = output_ids<std::int64_t>(count);
    const auto begin = ids.begin() + static_cast<std::ptrdiff_t>(first);
    thrust::copy(exec(s), begin, begin + static_cast<std::ptrdiff_t>(count), out.begin());
    return out;
  };
  local.causal_sample_ids = slice_ids(pack.causal_sample_ids, r * lc, lc);
  local.full_only_sample_ids = slice_ids(pack.full_only_sample_ids, r * lf, lf);
  local.num_causal_tokens_local = common::num_local_real_tokens(pack.meta->summary.num_causal_tokens, rank, static_cast<std::int64_t>(lc));
  local.num_full_tokens_local = common::num_local_real_tokens(pack.meta->summary.num_full_tokens, rank, static_cast<std::int64_t>(lf));
  return local;
}

DevicePack zeros_like(const DevicePack& source, std::optional<std::size_t> row_bytes, Stream s) {
  DevicePack out;
  out.meta = source.meta;
  out.max_num_tokens = source.max_num_tokens;
  out.causal_sample_ids = copy_of(source.causal_sample_ids, s);
  out.full_only_sample_ids = copy_of(source.full_only_sample_ids, s);
  out.pad_segment = source.pad_segment;
  out.is_sharded = source.is_sharded;
  out.num_causal_tokens_local = source.num_causal_tokens_local;
  out.num_full_tokens_local = source.num_full_tokens_local;
  out.causal_seq = output_rows(source.causal_seq.rows, row_bytes.value_or(source.causal_seq.row_bytes));
  out.full_only_seq = output_rows(source.full_only_seq.rows, row_bytes.value_or(source.full_only_seq.row_bytes));
  zero_tail(out.causal_seq, 0, s);
  zero_tail(out.full_only_seq, 0, s);
  return out;
}

DevicePositionIds to_device(const reference::PositionIds& ids, Stream) {
  return {ids.two_dimensional, ids.axes, ids.len, upload(ids.values)};
}

reference::PositionIds to_host(const DevicePositionIds& ids, Stream) {
  reference::PositionIds h{ids.two_dimensional, ids.axes, ids.len, std::vector<std::int64_t>(ids.values.size())};
  if (!ids.values.empty()) thrust::copy(ids.values.begin(), ids.values.end(), h.values.begin());
  return h;
}

namespace {

// out[a][i] = ids[a][index[first + i]] for i < count, or 0 past the index array
// (the padding of a stream), as position ids are sliced per shard.
struct GatherIds {
  const std::int64_t* ids;
  const std::int32_t* index;
  std::size_t len, index_size, first, count;
  SEQPACK_HOST_DEVICE std::int64_t operator()(std::size_t k) const {
    const std::size_t a = k / count, i = first + k % count;
    return i < index_size ? ids[a * len + static_cast<std::size_t>(index[i])] : 0;
  }
};

DevicePositionIds gather_ids(const DevicePositionIds& ids, const DevicePack& pack,
                             const DeviceBuffer<std::int32_t>& index, std::size_t first, std::size_t count,
                             const char* what, Stream s) {
  require_unsharded(pack, what);
  if (!ids.two_dimensional && ids.axes != 1) {
    throw ref::Error(ref::Errc::invalid_argument, "position_ids.axes", "1-D position ids have one axis, got " + std::to_string(ids.axes));
  }
  if (ids.values.size() != ids.axes * ids.len || ids.len != static_cast<std::size_t>(pack.meta->summary.num_tokens())) {
    throw ref::Error(ref::Errc::invalid_argument, "position_ids.len",
                     "has " + std::to_string(ids.len) + " positions for " + std::to_string(pack.meta->summary.num_tokens()) +
                         " packed tokens");
  }
  DevicePositionIds out{ids.two_dimensional, ids.axes, count, output_ids<std::int64_t>(ids.axes * count)};
  if (!out.values.empty()) {
    thrust::transform(exec(s), thrust::counting_iterator<std::size_t>(0), thrust::counting_iterator<std::size_t>(out.values.size()),
                      out.values.begin(),
                      GatherIds{thrust::raw_pointer_cast(ids.values.data()), thrust::raw_pointer_cast(index.data()), ids.len,
                                index.size(), first, count});
  }
  return out;
}

}  // namespace

DevicePositionIds get_und_position_ids(const DevicePositionIds& ids, const DevicePack& pack, Stream s) {
  return gather_ids(ids, pack, pack.meta->causal_indices, 0, pack.meta->causal_indices.size(), "get_und_position_ids", s);
}

DevicePositionIds get_gen_position_ids(const DevicePositionIds& ids, const DevicePack& pack, Stream s) {
  return gather_ids(ids, pack, pack.meta->full_indices, 0, pack.meta->full_indices.size(), "get_gen_position_ids", s);
}

DevicePositionIds shard_position_ids(const DevicePositionIds& ids, const DevicePack& pack, std::int64_t rank,
                                     std::int64_t world_size, Stream s) {
  if (world_size < 1) {
    throw ref::Error(ref::Errc::invalid_option, "cp_world_size", "must be >= 1, got " + std::to_string(world_size));
  }
  if (rank < 0 || rank >= world_size) {
    throw ref::Error(ref::Errc::invalid_argument, "rank",
                     "must lie in [0, " + std::to_string(world_size) + "), got " + std::to_string(rank));
  }
  const auto w = static_cast<std::size_t>(world_size), r = static_cast<std::size_t>(rank);
  for (const auto& [rows, field] : {std::pair{pack.causal_seq.rows, "causal_seq"}, std::pair{pack.full_only_seq.rows, "full_only_seq"}}) {
    if (rows % w != 0) {
      throw ref::Error(ref::Errc::not_divisible, field,
                       std::to_string(rows) + " padded rows do not split into " + std::to_string(world_size) + " shards");
    }
  }
  const std::size_t lc = pack.causal_seq.rows / w, lf = pack.full_only_seq.rows / w;
  const DevicePositionIds und = gather_ids(ids, pack, pack.meta->causal_indices, r * lc, lc, "shard_position_ids", s);
  const DevicePositionIds gen = gather_ids(ids, pack, pack.meta->full_indices, r * lf, lf, "shard_position_ids", s);
  // [causal shard ; full shard] per axis.
  DevicePositionIds out{ids.two_dimensional, ids.axes, lc + lf, output_ids<std::int64_t>(ids.axes * (lc + lf))};
  for (std::size_t a = 0; a < ids.axes; ++a) {
    thrust::copy(exec(s), und.values.begin() + static_cast<std::ptrdiff_t>(a * lc), und.values.begin() + static_cast<std::ptrdiff_t>((a + 1) * lc),
                 out.values.begin() + static_cast<std::ptrdiff_t>(a * (lc + lf)));
    thrust::copy(exec(s), gen.values.begin() + static_cast<std::ptrdiff_t>(a * lf), gen.values.begin() + static_cast<std::ptrdiff_t>((a + 1) * lf),
                 out.values.begin() + static_cast<std::ptrdiff_t>(a * (lc + lf) + lc));
  }
  return out;
}

DevicePack gather_shards(const std::vector<DevicePack>& shards, Stream s) {
  if (shards.empty()) throw ref::Error(ref::Errc::invalid_argument, "shards", "no shards to gather");
  const DevicePack& first = shards.front();
  for (std::size_t r = 0; r < shards.size(); ++r) {
    const DevicePack& shard = shards[r];
    if (!shard.is_sharded || shard.meta != first.meta || shard.causal_seq.rows != first.causal_seq.rows ||
        shard.full_only_seq.rows != first.full_only_seq.rows) {
      throw ref::Error(ref::Errc::invalid_argument, "shards[" + std::to_string(r) + "]",
                       "is not a shard of the same pack as shards[0]");
    }
  }
  DevicePack whole;
  whole.meta = first.meta;
  whole.max_num_tokens = first.max_num_tokens;
  whole.pad_segment = first.pad_segment;
  whole.causal_seq = output_rows(first.causal_seq.rows * shards.size(), first.causal_seq.row_bytes);
  whole.full_only_seq = output_rows(first.full_only_seq.rows * shards.size(), first.full_only_seq.row_bytes);
  whole.causal_sample_ids = output_ids<std::int64_t>(first.causal_sample_ids.size() * shards.size());
  whole.full_only_sample_ids = output_ids<std::int64_t>(first.full_only_sample_ids.size() * shards.size());
  // Shard r's part of each array goes to [r * part, (r + 1) * part).
  const auto place = [s](const auto& part, auto& whole_array, std::size_t r) {
    thrust::copy(exec(s), part.begin(), part.end(), whole_array.begin() + static_cast<std::ptrdiff_t>(r * part.size()));
  };
  for (std::size_t r = 0; r < shards.size(); ++r) {
    place(shards[r].causal_seq.bytes, whole.causal_seq.bytes, r);
    place(shards[r].full_only_seq.bytes, whole.full_only_seq.bytes, r);
    place(shards[r].causal_sample_ids, whole.causal_sample_ids, r);
    place(shards[r].full_only_sample_ids, whole.full_only_sample_ids, r);
  }
  return whole;
}

}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
