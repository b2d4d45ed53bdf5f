// The conformance port of the GPU implementation (this build's backend):
// `seqpack oracle`'s protocol loop with the GPU implementation building each
// case; results are copied back to the host and written like the reference's.
#include <iostream>
#include <string>

#include "seqpack/conformance/protocol.hpp"
#include "seqpack/gpu/pack.hpp"

namespace {

namespace ref = seqpack::reference;
namespace gpu = seqpack::gpu;
namespace sc = seqpack::conformance;

ref::Pack to_host_pack(const gpu::DevicePack& d, std::shared_ptr<const ref::Metadata> meta) {
  ref::Pack p;
  p.meta = std::move(meta);
  ref::copy_pack_scalars(d, p);
  p.causal_seq = gpu::to_host(d.causal_seq);
  p.full_only_seq = gpu::to_host(d.full_only_seq);
  p.causal_sample_ids = gpu::to_host_vector(d.causal_sample_ids);
  p.full_only_sample_ids = gpu::to_host_vector(d.full_only_sample_ids);
  return p;
}

class GpuBuilt : public sc::Built {
 public:
  explicit GpuBuilt(gpu::DevicePack d) : device_(std::move(d)) {
    auto meta = std::make_shared<ref::Metadata>(device_.meta->summary);
    meta->causal_indices = gpu::to_host_vector(device_.meta->causal_indices);
    meta->full_indices = gpu::to_host_vector(device_.meta->full_indices);
    meta->causal_sample_ids = gpu::to_host_vector(device_.meta->causal_sample_ids);
    meta->full_only_sample_ids = gpu::to_host_vector(device_.meta->full_only_sample_ids);
    meta_ = std::move(meta);
    host_ = to_host_pack(device_, meta_);
  }
  const ref::Pack& pack() const override { return host_; }
  ref::AllSeqPadded all_seq_padded() const override {
    gpu::DeviceAllSeqPadded a = gpu::get_all_seq_padded(device_);
    return {gpu::to_host(a.seq), std::move(a.offsets), a.max_len};
  }
  ref::Pack shard(std::int64_t rank, std::int64_t world) const override {
    return to_host_pack(gpu::shard_pack(device_, rank, world), meta_);
  }

 private:
  gpu::DevicePack device_;
  std::shared_ptr<const ref::Metadata> meta_;
  ref::Pack host_;
};

class GpuImplementation : public sc::Implementation {
 public:
  std::string name() const override { return std::string("seqpack gpu (thrust ") + SEQPACK_GPU_BACKEND_NAME + ")"; }
  std::unique_ptr<sc::Built> build(const ref::Rows& rows, const seqpack::conformance::Case& c,
                                   ref::GraphMarks& marks) const override {
    return std::make_unique<GpuBuilt>(gpu::build_pack(gpu::to_device(rows), c.layout, c.options, marks));
  }
};

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  const GpuImplementation impl;
  return sc::serve(std::cin, std::cout, true, impl);
}
