// Benchmarks of the data path and the metadata building: the reference, this
// build's GPU backend (Thrust CPP or OMP), and memcpy of the same bytes as the
// baseline, in one run. bench/run.sh turns the results into ratios. Built by
// nvcc as pack_bench_cuda.cu for the CUDA build: there every GPU iteration
// waits for the device, and the baseline is a device-to-device copy.
#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "seqpack/gpu/pack.hpp"
#include "seqpack/gpu/testing.hpp"
#include "seqpack/reference/reference.hpp"

namespace {

namespace ref = seqpack::reference;
namespace gpu = seqpack::gpu;

// Waits for the device work of an iteration (the entry points are stream
// ordered); nothing to wait for on the host backends. Every GPU iteration
// waits before its result is destroyed.
void sync() {
#ifdef SEQPACK_GPU_CUDA
  if (cudaDeviceSynchronize() != cudaSuccess) std::abort();
#endif
}

struct Config {
  const char* name;
  int samples;
  std::int64_t causal, full;  // per sample
  std::size_t row_bytes;
};

// The shapes: rows of 256, 64 and 8 float32.
const Config kConfigs[] = {
    {"8x(300+4000)x1024B", 8, 300, 4000, 1024},
    {"64x(200+2000)x256B", 64, 200, 2000, 256},
    {"1x(12+100)x32B", 1, 12, 100, 32},
};

// One sample of growing size (64-byte rows, 9 KB to 2.4 MB): where the OMP
// build's serial path for small inputs should end (bench/run.sh, gpu/README.md).
const Config kSweep[] = {
    {"1x(16+128)x64B", 1, 16, 128, 64},         {"1x(64+512)x64B", 1, 64, 512, 64},
    {"1x(128+1024)x64B", 1, 128, 1024, 64},     {"1x(256+2048)x64B", 1, 256, 2048, 64},
    {"1x(512+4096)x64B", 1, 512, 4096, 64},     {"1x(1024+8192)x64B", 1, 1024, 8192, 64},
    {"1x(2048+16384)x64B", 1, 2048, 16384, 64}, {"1x(4096+32768)x64B", 1, 4096, 32768, 64},
};

ref::Layout layout_of(const Config& c) {
  ref::Layout l;
  for (int s = 0; s < c.samples; ++s) {
    l.sample_lens.push_back(c.causal + c.full);
    l.split_lens.insert(l.split_lens.end(), {c.causal, c.full});
    l.attn_modes.insert(l.attn_modes.end(), {"causal", "full"});
  }
  l.und_token_indexes = ref::packer_und_tokens(l);
  return l;
}

ref::Rows rows_of(const Config& c) {
  ref::Rows r(static_cast<std::size_t>(c.samples * (c.causal + c.full)), c.row_bytes);
  for (std::size_t i = 0; i < r.size_bytes(); ++i) r.data()[i] = static_cast<std::byte>(i * 131 + 7);
  return r;
}

ref::Options options() {
  ref::Options o;
  o.full_seq_alignment = o.causal_seq_alignment = 128;
  return o;
}

#ifdef SEQPACK_GPU_CUDA
// The baseline is timed as the operations are: each iteration allocates its
// output from the stream-ordered pool (main keeps the pool's memory, as a
// caching allocator would), copies device to device, waits, and frees it.
void Memcpy(benchmark::State& state, const Config& c) {
  const gpu::DeviceRows in = gpu::to_device(rows_of(c));
  for (auto _ : state) {
    gpu::DeviceBuffer<unsigned char> out(in.bytes.size());
    cudaMemcpyAsync(thrust::raw_pointer_cast(out.data()), thrust::raw_pointer_cast(in.bytes.data()), in.bytes.size(),
                    cudaMemcpyDeviceToDevice);
    sync();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.bytes.size()));
}
#else
void Memcpy(benchmark::State& state, const Config& c) {
  const ref::Rows in = rows_of(c);
  ref::Rows out(in.rows(), in.row_bytes());
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size_bytes());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size_bytes()));
}
#endif

void PackReference(benchmark::State& state, const Config& c) {
  const ref::Rows in = rows_of(c);
  const auto meta = std::make_shared<const ref::Metadata>(ref::prepare_metadata(layout_of(c)));
  const ref::Layout l = layout_of(c);
  for (auto _ : state) {
    ref::GraphMarks m;
    benchmark::DoNotOptimize(ref::build_pack(in, l, options(), m, meta));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.size_bytes()));
}

void PackGpu(benchmark::State& state, const Config& c) {
  const gpu::DeviceRows in = gpu::to_device(rows_of(c));
  const ref::Layout l = layout_of(c);
  const auto meta = std::make_shared<const gpu::DeviceMetadata>(gpu::prepare_metadata(l));
  for (auto _ : state) {
    ref::GraphMarks m;
    gpu::DevicePack out = gpu::build_pack(in, l, options(), m, meta);
    sync();
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.bytes.size()));
}

#if defined(_OPENMP) && !defined(SEQPACK_GPU_CUDA)
// PackGpu with the OMP build's serial-path threshold forced (0: always the
// OpenMP team; SIZE_MAX: always the calling thread), restored afterwards.
void PackGpuThreshold(benchmark::State& state, const Config& c, std::size_t threshold) {
  const std::size_t saved = gpu::serial_threshold();
  gpu::set_serial_threshold(threshold);
  PackGpu(state, c);
  gpu::set_serial_threshold(saved);
}
#endif

void GetAllSeqReference(benchmark::State& state, const Config& c) {
  ref::GraphMarks m;
  const ref::Pack p = ref::build_pack(rows_of(c), layout_of(c), options(), m);
  for (auto _ : state) benchmark::DoNotOptimize(ref::get_all_seq(p));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * rows_of(c).size_bytes()));
}

void GetAllSeqGpu(benchmark::State& state, const Config& c) {
  ref::GraphMarks m;
  const gpu::DevicePack p = gpu::build_pack(gpu::to_device(rows_of(c)), layout_of(c), options(), m);
  for (auto _ : state) {
    gpu::DeviceRows out = gpu::get_all_seq(p);
    sync();
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * rows_of(c).size_bytes()));
}

void MetadataReference(benchmark::State& state, const Config& c) {
  const ref::Layout l = layout_of(c);
  for (auto _ : state) benchmark::DoNotOptimize(ref::prepare_metadata(l));
}

void MetadataGpu(benchmark::State& state, const Config& c) {
  const ref::Layout l = layout_of(c);
  for (auto _ : state) {
    gpu::DeviceMetadata out = gpu::prepare_metadata(l);
    sync();
    benchmark::DoNotOptimize(out);
  }
}

const bool registered = [] {
  for (const Config& c : kConfigs) {
    const std::string n = c.name;
    benchmark::RegisterBenchmark(("memcpy/" + n).c_str(), Memcpy, c)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("pack/reference/" + n).c_str(), PackReference, c)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("pack/gpu/" + n).c_str(), PackGpu, c)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("get_all_seq/reference/" + n).c_str(), GetAllSeqReference, c)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("get_all_seq/gpu/" + n).c_str(), GetAllSeqGpu, c)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("metadata/reference/" + n).c_str(), MetadataReference, c)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("metadata/gpu/" + n).c_str(), MetadataGpu, c)->Unit(benchmark::kMicrosecond);
  }
  for (const Config& c : kSweep) {
    const std::string n = c.name;
    benchmark::RegisterBenchmark(("sweep/pack/gpu/" + n).c_str(), PackGpu, c)->Unit(benchmark::kMicrosecond);
#if defined(_OPENMP) && !defined(SEQPACK_GPU_CUDA)
    benchmark::RegisterBenchmark(("sweep/pack/gpu-serial/" + n).c_str(), PackGpuThreshold, c, SIZE_MAX)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("sweep/pack/gpu-parallel/" + n).c_str(), PackGpuThreshold, c, std::size_t{0})
        ->Unit(benchmark::kMicrosecond);
#endif
  }
  return true;
}();

}  // namespace

int main(int argc, char** argv) {
  // Freed buffers stay in the heap, as a caching allocator keeps them in
  // training: otherwise every call's fresh mmap'd pages (page faults and
  // kernel zeroing, slow in this VM) dominate the data path.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#ifdef SEQPACK_GPU_CUDA
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "pack_bench_cuda: no CUDA device on this machine; nothing measured\n");
    return 77;
  }
  // The stream-ordered pool keeps freed memory (a caching allocator's
  // behaviour), so the timed loops pay a pool hit per allocation, not cudaMalloc.
  cudaMemPool_t pool = nullptr;
  std::uint64_t keep = UINT64_MAX;
  if (cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess ||
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
    std::fprintf(stderr, "pack_bench_cuda: cannot keep the memory pool's memory\n");
    return 1;
  }
#endif
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
