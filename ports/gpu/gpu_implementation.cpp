// The GPU implementation (this build's Thrust backend) behind the protocol's
// Implementation interface: what gpu_port serves over a pipe and what
// `seqpack exhaustive` runs in process.
//
// The gpu library keeps the original's plain getters and setters (get_und_seq,
// set_und_seq, the padded getters, has_pad_segment, get_num_real_tokens,
// from_mode_splits) as fields of DevicePack rather than functions, so this
// adapter reads and writes those fields the way the original's functions do;
// everything else (builds, prepared metadata, get_all_seq[_padded],
// set_all_seq, from_all_seq, zeros_like, position ids, sharding) is the gpu
// library's own code.
#include "gpu_implementation.hpp"

#include <string>

#include "seqpack/gpu/pack.hpp"
#include "seqpack/reference/errors.hpp"

namespace {

namespace gpu = seqpack::gpu;
namespace ref = seqpack::reference;
namespace sc = seqpack::protocol;

std::shared_ptr<const ref::Metadata> host_metadata(const gpu::DeviceMetadata& d) {
  auto meta = std::make_shared<ref::Metadata>(d.summary);
  meta->causal_indices = gpu::to_host_vector(d.causal_indices);
  meta->full_indices = gpu::to_host_vector(d.full_indices);
  meta->causal_sample_ids = gpu::to_host_vector(d.causal_sample_ids);
  meta->full_only_sample_ids = gpu::to_host_vector(d.full_only_sample_ids);
  return meta;
}

class GpuBuilt : public sc::Built {
 public:
  GpuBuilt(gpu::DevicePack d, std::shared_ptr<const ref::Metadata> meta)
      : device_(std::move(d)), meta_(std::move(meta)) {
    if (!meta_) meta_ = host_metadata(*device_.meta);
    refresh();
  }
  const ref::Pack& pack() const override { return host_; }
  ref::AllSeqPadded all_seq_padded() const override {
    gpu::DeviceAllSeqPadded a = gpu::get_all_seq_padded(device_);
    return {gpu::to_host(a.seq), std::move(a.offsets), a.max_len};
  }
  std::unique_ptr<sc::Built> shard(std::int64_t rank, std::int64_t world) const override {
    // The shard's metadata as the device holds it (cp_global compares its offsets).
    return std::make_unique<GpuBuilt>(gpu::shard_pack(device_, rank, world), nullptr);
  }
  ref::PositionIds shard_position_ids(const ref::PositionIds& ids, std::int64_t rank,
                                      std::int64_t world) const override {
    return gpu::to_host(gpu::shard_position_ids(gpu::to_device(ids), device_, rank, world));
  }
  std::unique_ptr<sc::Built> gather(const std::vector<const sc::Built*>& shards) const override {
    std::vector<gpu::DevicePack> packs;
    for (const sc::Built* b : shards) packs.push_back(dynamic_cast<const GpuBuilt&>(*b).clone());
    return std::make_unique<GpuBuilt>(gpu::gather_shards(packs), nullptr);
  }
  ref::Rows und_seq() const override { return gpu::to_host(device_.causal_seq); }
  ref::Rows gen_seq() const override { return gpu::to_host(device_.full_only_seq); }
  ref::Rows all_seq() const override { return gpu::to_host(gpu::get_all_seq(device_)); }
  sc::PaddedStream causal_padded() const override {
    const auto& m = device_.meta->summary;
    if (!device_.pad_segment) return {gpu::to_host(device_.causal_seq), m.causal_seq_offsets, m.max_causal_len};
    refuse_sharded("get_causal_seq_padded");
    return {gpu::to_host(device_.causal_seq), device_.pad_segment->causal_seq_offsets,
            device_.pad_segment->max_causal_len};
  }
  sc::PaddedStream full_only_padded() const override {
    const auto& m = device_.meta->summary;
    if (!device_.pad_segment) return {gpu::to_host(device_.full_only_seq), m.full_only_seq_offsets, m.max_full_len};
    refuse_sharded("get_full_only_seq_padded");
    return {gpu::to_host(device_.full_only_seq), device_.pad_segment->full_only_seq_offsets,
            device_.pad_segment->max_full_len};
  }
  bool has_pad_segment() const override { return device_.pad_segment.has_value(); }
  std::pair<std::int64_t, std::int64_t> num_real_tokens() const override {
    if (device_.is_sharded) return {*device_.num_causal_tokens_local, *device_.num_full_tokens_local};
    return {device_.meta->summary.num_causal_tokens, device_.meta->summary.num_full_tokens};
  }
  ref::PositionIds und_position_ids(const ref::PositionIds& ids) const override {
    return gpu::to_host(gpu::get_und_position_ids(gpu::to_device(ids), device_));
  }
  ref::PositionIds gen_position_ids(const ref::PositionIds& ids) const override {
    return gpu::to_host(gpu::get_gen_position_ids(gpu::to_device(ids), device_));
  }
  void set_und_seq(const ref::Rows& v) override {
    device_.causal_seq = gpu::to_device(v);
    refresh();
  }
  void set_gen_seq(const ref::Rows& v) override {
    device_.full_only_seq = gpu::to_device(v);
    refresh();
  }
  void set_all_seq(const ref::Rows& v) override {
    gpu::set_all_seq(device_, gpu::to_device(v));
    refresh();
  }
  std::unique_ptr<sc::Built> from_all_seq(const ref::Rows& packed) const override {
    return wrap(gpu::from_all_seq(gpu::to_device(packed), device_));
  }
  std::unique_ptr<sc::Built> from_mode_splits(const ref::Rows& c, const ref::Rows& f) const override {
    gpu::DevicePack out = copy();
    out.causal_seq = gpu::to_device(c);
    out.full_only_seq = gpu::to_device(f);
    return wrap(std::move(out));
  }
  std::unique_ptr<sc::Built> from_und_gen_splits(const ref::Rows& u, const ref::Rows& g) const override {
    return from_mode_splits(u, g);
  }
  std::unique_ptr<sc::Built> zeros_like(std::optional<std::size_t> row_bytes) const override {
    return wrap(gpu::zeros_like(device_, row_bytes));
  }

 private:
  std::unique_ptr<sc::Built> wrap(gpu::DevicePack d) const { return std::make_unique<GpuBuilt>(std::move(d), meta_); }
  gpu::DevicePack clone() const {
    gpu::DevicePack out = copy();
    out.causal_seq = {device_.causal_seq.rows, device_.causal_seq.row_bytes, gpu::clone(device_.causal_seq.bytes)};
    out.full_only_seq = {device_.full_only_seq.rows, device_.full_only_seq.row_bytes,
                         gpu::clone(device_.full_only_seq.bytes)};
    return out;
  }
  gpu::DevicePack copy() const {
    gpu::DevicePack out;
    out.meta = device_.meta;
    ref::copy_pack_scalars(device_, out);
    out.causal_sample_ids = gpu::clone(device_.causal_sample_ids);
    out.full_only_sample_ids = gpu::clone(device_.full_only_sample_ids);
    return out;
  }
  void refuse_sharded(const char* op) const {
    if (device_.is_sharded) {
      throw ref::Error(ref::Errc::sharded_pack, "pack.is_sharded",
                       std::string(op) + ": the pad-segment offsets describe the unsharded streams");
    }
  }
  void refresh() {
    host_ = ref::Pack{};
    host_.meta = meta_;
    ref::copy_pack_scalars(device_, host_);
    host_.causal_seq = gpu::to_host(device_.causal_seq);
    host_.full_only_seq = gpu::to_host(device_.full_only_seq);
    host_.causal_sample_ids = gpu::to_host_vector(device_.causal_sample_ids);
    host_.full_only_sample_ids = gpu::to_host_vector(device_.full_only_sample_ids);
  }

  gpu::DevicePack device_;
  std::shared_ptr<const ref::Metadata> meta_;
  ref::Pack host_;
};

class GpuImplementation : public sc::Implementation {
 public:
  std::string name() const override { return std::string("seqpack gpu (thrust ") + SEQPACK_GPU_BACKEND_NAME + ")"; }
  std::unique_ptr<sc::Built> build(const ref::Rows& rows, const seqpack::protocol::Case& c,
                                   ref::GraphMarks& marks) const override {
    return std::make_unique<GpuBuilt>(gpu::build_pack(gpu::to_device(rows), c.layout, c.options, marks), nullptr);
  }
  std::unique_ptr<sc::Built> build_prepared(const ref::Rows& rows, const seqpack::protocol::Case& c,
                                            ref::GraphMarks& marks, const ref::Layout& from) const override {
    auto meta = std::make_shared<const gpu::DeviceMetadata>(gpu::prepare_metadata(from));
    return std::make_unique<GpuBuilt>(gpu::build_pack(gpu::to_device(rows), c.layout, c.options, marks, meta), nullptr);
  }
  std::vector<std::string> views() const override { return sc::oracle_views(); }
};

}  // namespace

const seqpack::protocol::Implementation& seqpack::ports::SEQPACK_GPU_ENGINE_FUNCTION() {
  static const GpuImplementation impl;
  return impl;
}
