// What the source files of the GPU implementation share: the execution policy,
// output buffers, row moves, the OMP build's serial path for small inputs, and
// the host-side validation and planning (the gpu's own; nothing here calls the
// reference's checks). Included by every src/*.cu; one copy per backend, in
// its inline namespace.
#pragma once

#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#ifdef SEQPACK_GPU_CUDA
#include <thrust/system/cuda/execution_policy.h>
#endif
#ifdef SEQPACK_GPU_OMP
#include <thrust/system/omp/execution_policy.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#if defined(__SSE2__) && !defined(SEQPACK_GPU_CUDA) && !defined(SEQPACK_GPU_OMP)
#include <emmintrin.h>
#define SEQPACK_STREAMING_STORES 1  // the sequential host backend on x86: non-temporal row stores
#else
#define SEQPACK_STREAMING_STORES 0
#endif

#include "seqpack/common/index_math.hpp"
#include "seqpack/gpu/pack.hpp"
#include "seqpack/reference/errors.hpp"

namespace seqpack::gpu {
inline namespace SEQPACK_GPU_BACKEND {

namespace ref = ::seqpack::reference;

namespace detail {

using common::kInt32Max;

// ---------------------------------------------------------------------------
// Test hooks (testing.hpp).

inline int g_poison = -1;

// Which expansion builds the metadata arrays: the scan (the CUDA build's) or
// whole splits (the host backends'). Tests switch it to run both everywhere.
#ifdef SEQPACK_GPU_CUDA
inline bool g_scan_expansion = true;
#else
inline bool g_scan_expansion = false;
#endif

// Which row copy moves rows: the device's chunked one (row_copy.cuh; the CUDA
// build's, the only one there) or one memcpy per row (the host backends').
// Tests switch it on the host backends to run the device's copy there too.
#ifdef SEQPACK_GPU_CUDA
inline bool g_chunked_rows = true;
#else
inline bool g_chunked_rows = false;
#endif

// The synchronising check at the end of each entry point (check_device): on in
// debug builds or with SEQPACK_GPU_SYNC_CHECK=1 in the environment, or through
// testing.hpp's set_sync_check.
bool sync_check_from_environment();
inline bool g_sync_check = sync_check_from_environment();

// An entry point whose check_device reports a device error (testing.hpp).
inline std::string g_injected_error;

// On the CPP build, row copies of at least this many bytes take non-temporal stores.
inline constexpr std::size_t kStreamingBytes = std::size_t{16} << 20;

// ---------------------------------------------------------------------------
// Execution.

// Below this many bytes of data an OMP entry point runs its Thrust calls on the
// calling thread: a parallel region costs about a microsecond to open even
// for a team of one (libgomp), more than small work. Measured in
// gpu/README.md ("OMP: the serial path for small inputs").
inline constexpr std::size_t kSerialBelowBytes = std::size_t{512} << 10;
inline std::size_t g_serial_below = kSerialBelowBytes;

// The execution policy of an entry point: the caller's stream on CUDA, without
// the synchronisation Thrust would otherwise add after each algorithm; the
// host backends' own system otherwise. On the OMP build, a policy of our own
// (Thrust's OMP policy by inheritance) whose for_each and for_each_n, which
// Thrust's fills, copies and transforms run through, take the sequential path
// inside a SerialWhenSmall scope of small work.
#if defined(SEQPACK_GPU_CUDA)
// Thrust's temporary storage (the scan's) through this allocator: allocated
// and freed on the entry point's stream, as every buffer here.
template <typename T>
struct StreamAllocator {
  using value_type = T;
  Stream stream;
  StreamAllocator(Stream s) : stream(s) {}  // NOLINT(google-explicit-constructor): Thrust rebinds it
  template <typename U>
  StreamAllocator(const StreamAllocator<U>& o) : stream(o.stream) {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_bytes(n, sizeof(T), stream)); }
  void deallocate(T* p, std::size_t) noexcept { free_bytes(p, stream); }
};

inline auto exec(Stream stream) { return thrust::cuda::par_nosync(StreamAllocator<char>(stream)).on(stream); }
#elif defined(SEQPACK_GPU_OMP)
inline thread_local bool t_serial = false;

// Derives from Thrust's OMP policy in thrust::system::omp::detail, an internal
// name: checked against CCCL 3.0.1 (CUDA 13's); a CCCL update that moves it
// breaks the OMP build at compile time, not silently.
struct OmpPolicy : thrust::system::omp::detail::execution_policy<OmpPolicy> {};

inline OmpPolicy exec(Stream) { return {}; }

// Found by Thrust's dispatch (argument-dependent lookup on the policy).
template <typename Iterator, typename Size, typename Function>
Iterator for_each_n(OmpPolicy&, Iterator first, Size n, Function f) {
  if (t_serial) return thrust::for_each_n(thrust::seq, first, n, f);
  return thrust::for_each_n(thrust::omp::par, first, n, f);
}

template <typename Iterator, typename Function>
Iterator for_each(OmpPolicy& policy, Iterator first, Iterator last, Function f) {
  return detail::for_each_n(policy, first, last - first, f);
}
#else
inline auto exec(Stream) { return thrust::device; }
#endif

// Scope of an entry point that touches `bytes` bytes. On the OMP build, the
// Thrust calls made while it lives run on the calling thread when `bytes` is
// under the threshold (OpenMP's `if` clause, for the regions Thrust opens).
// Nothing on the other builds.
#ifdef SEQPACK_GPU_OMP
class SerialWhenSmall {
 public:
  explicit SerialWhenSmall(std::size_t bytes) : saved_(t_serial) { t_serial = t_serial || bytes < g_serial_below; }
  ~SerialWhenSmall() { t_serial = saved_; }
  SerialWhenSmall(const SerialWhenSmall&) = delete;
  SerialWhenSmall& operator=(const SerialWhenSmall&) = delete;

 private:
  bool saved_;
};
#else
struct SerialWhenSmall {
  explicit SerialWhenSmall(std::size_t) {}
};
#endif

// ---------------------------------------------------------------------------
// Buffers.

// Output buffers, allocated on the entry point's stream: filled with the test
// poison when one is set, so that a row the implementation forgets to write
// shows; the padding is always written explicitly.
template <typename T>
DeviceBuffer<T> output_ids(std::size_t n, Stream s) {
  DeviceBuffer<T> out(n, s);
  if (g_poison >= 0 && n) {
    const T poison = sizeof(T) == 1 ? static_cast<T>(g_poison) : static_cast<T>(0x5A5A5A5A5A5A5A5Aull);
#ifdef SEQPACK_GPU_CUDA
    thrust::fill(exec(s), out.begin(), out.end(), poison);
#else
    // Host memory: filled on the calling thread (no OpenMP region per test buffer).
    std::fill_n(thrust::raw_pointer_cast(out.data()), n, poison);
#endif
  }
  return out;
}

inline DeviceRows output_rows(std::size_t rows, std::size_t width, Stream s) {
  return DeviceRows{rows, width, output_ids<unsigned char>(rows * width, s)};
}

// A copy of `v` made on the stream.
template <typename T>
DeviceBuffer<T> copy_of(const DeviceBuffer<T>& v, Stream s) {
  DeviceBuffer<T> out = output_ids<T>(v.size(), s);
  if (!v.empty()) thrust::copy(exec(s), v.begin(), v.end(), out.begin());
  return out;
}

// Uploads an O(splits) host table, ordered on the stream (the runtime stages
// pageable memory before it returns).
template <typename T>
DeviceBuffer<T> upload(const std::vector<T>& v, Stream s, const char* entry) {
  DeviceBuffer<T> out(v.size(), s);
  copy_to_device(thrust::raw_pointer_cast(out.data()), v.data(), v.size() * sizeof(T), s, entry);
  return out;
}

// Copies rows: dst row i <- src row map[i] (gather, scatter false) or dst row
// map[i] <- src row i (scatter true). Defined in types.cu.
void move_rows(const DeviceRows& src, DeviceRows& dst, const DeviceBuffer<std::int32_t>& map, bool scatter, Stream s);

// Zeroes rows [from, rows) of a stream.
void zero_tail(DeviceRows& rows, std::size_t from, Stream s);

// The end of every entry point: DeviceError naming `entry` when the device has
// reported an error (cudaGetLastError), or, with the synchronising check on,
// when the work enqueued on `s` faulted. Nothing to check on the host backends
// but an injected error (testing.hpp).
void check_device(const char* entry, Stream s);

#ifdef SEQPACK_GPU_CUDA
// DeviceError naming `entry` unless `e` is cudaSuccess.
void cuda_check(cudaError_t e, const char* entry);
#endif

// ---------------------------------------------------------------------------
// Errors (the reference's classes; the field names follow reference/README.md).

[[noreturn]] inline void fail(ref::Errc code, std::string field, const std::string& detail) {
  throw ref::Error(code, std::move(field), detail);
}

inline std::string at(const char* name, std::size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

inline void require_unsharded(const DevicePack& pack, const char* operation) {
  if (pack.is_sharded) {
    fail(ref::Errc::sharded_pack, "pack.is_sharded",
         std::string(operation) + " cannot run on a context-parallel shard; it needs the unsharded pack");
  }
}

// ---------------------------------------------------------------------------
// Validation and planning on the host (metadata.cu, padding.cu, pack.cu).

/// invalid_option unless the cp size and both alignments are >= 1 and the
/// graph marks >= 0 (checked in that order).
void validate_options(const ref::Options& options, const ref::GraphMarks& marks);

/// PROTOCOL.md's layout checks in order: empty_batch, invalid_layout,
/// und_token_in_full_split. Lengths past int32 are left to summarize_layout.
void validate_layout(const ref::Layout& layout);

/// Whether prepared metadata describes `layout`: the same sample and split
/// lengths and modes (und indexes are not compared, as in the spec).
bool describes(const ref::Metadata& meta, const ref::Layout& layout);

/// sum(sample_lens) of a layout with non-negative lengths, saturated at the
/// largest uint64 (int64 lengths can add up past int64).
std::uint64_t total_rows(const std::vector<std::int64_t>& lens);

/// The host half of a layout's metadata: the O(samples + splits) summary and,
/// per stream, each split's first packed position and its sample.
struct LayoutSummary {
  ref::Metadata summary;  // O(tokens) vectors left empty
  std::vector<std::int32_t> causal_starts, full_starts;
  std::vector<std::int64_t> causal_samples, full_samples;
};

/// Summarises a validated layout; overflow when its token count passes int32.
LayoutSummary summarize_layout(const ref::Layout& layout);

/// Builds the O(tokens) arrays of `summary` on the device.
DeviceMetadata expand_metadata(LayoutSummary summary, Stream s);

/// The least multiple >= n of the combined step (the alignment, the CUDA-graph
/// bucket of n when `graphs`, and cp when > 1), or overflow naming `n_field`
/// (a length past int32) or `alignment_field` (a step past int32). Needs
/// n >= 0 and options already validated.
std::int64_t padded_size(std::int64_t n, std::int64_t cp, bool graphs, std::int64_t alignment, const char* n_field,
                         const char* alignment_field);

/// What a build decides before any row moves (the reference's PackShape).
struct PackShape {
  std::int64_t causal_len = 0;
  std::int64_t full_len = 0;
  std::optional<ref::PadSegment> pad_segment;
  ref::GraphMarks marks_after;
};

/// The padded lengths, pad segment and marks of a build of `rows` rows;
/// length_mismatch, overflow, pad_segment_pairing in that order.
PackShape plan_pack(const ref::Metadata& meta, std::int64_t rows, const ref::Options& options,
                    const ref::GraphMarks& marks);

/// invalid_option / invalid_argument unless world_size >= 1 and 0 <= rank < world_size.
void check_world(std::int64_t rank, std::int64_t world_size);

/// Rows per shard of a stream of `rows` rows; not_divisible naming `field`.
std::size_t shard_len(std::size_t rows, std::int64_t world_size, const char* field);

/// invalid_argument / sharded_pack unless `ids` fit `pack` (one id per packed
/// token on each axis, an unsharded pack).
void check_position_ids(const DevicePositionIds& ids, const DevicePack& pack, const char* operation);

/// out[a][i] = ids[a][index[first + i]] for i < count, 0 past the index array.
DevicePositionIds gather_ids(const DevicePositionIds& ids, const DeviceBuffer<std::int32_t>& index, std::size_t first,
                             std::size_t count, Stream s);

}  // namespace detail
}  // namespace SEQPACK_GPU_BACKEND
}  // namespace seqpack::gpu
