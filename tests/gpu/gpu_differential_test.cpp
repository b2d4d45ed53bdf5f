// Differential properties: the GPU implementation (this build's Thrust
// backend) against the reference, bit for bit, on the property suite's
// generators. Output buffers are poisoned before each call, so a row the
// implementation forgets to write shows as a difference.
#include <gtest/gtest.h>

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <cstring>

#include "seqpack/gpu/pack.hpp"
#include "seqpack/gpu/testing.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/reference/reference.hpp"

namespace {

namespace ref = seqpack::reference;
namespace gpu = seqpack::gpu;
namespace sp = seqpack::properties;


// Poisons the next outputs and picks the metadata expansion (both are checked).
void poison() {
  gpu::set_poison(*rc::gen::inRange(0, 256));
  gpu::set_scan_expansion(*rc::gen::arbitrary<bool>());
}

void expect_same_pack(const ref::Pack& r, const gpu::DevicePack& g) {
  const ref::Metadata& m = *r.meta;
  const ref::Metadata& s = g.meta->summary;
  RC_ASSERT(gpu::to_host_vector(g.meta->causal_indices) == m.causal_indices);
  RC_ASSERT(gpu::to_host_vector(g.meta->full_indices) == m.full_indices);
  RC_ASSERT(gpu::to_host_vector(g.meta->causal_sample_ids) == m.causal_sample_ids);
  RC_ASSERT(gpu::to_host_vector(g.meta->full_only_sample_ids) == m.full_only_sample_ids);
  RC_ASSERT(s.sample_offsets == m.sample_offsets);
  RC_ASSERT(s.causal_seq_offsets == m.causal_seq_offsets);
  RC_ASSERT(s.full_only_seq_offsets == m.full_only_seq_offsets);
  RC_ASSERT(s.max_sample_len == m.max_sample_len);
  RC_ASSERT(s.max_causal_len == m.max_causal_len);
  RC_ASSERT(s.max_full_len == m.max_full_len);
  RC_ASSERT(s.num_causal_tokens == m.num_causal_tokens);
  RC_ASSERT(s.num_full_tokens == m.num_full_tokens);
  RC_ASSERT(g.max_num_tokens == r.max_num_tokens);
  RC_ASSERT(gpu::to_host(g.causal_seq) == r.causal_seq);
  RC_ASSERT(gpu::to_host(g.full_only_seq) == r.full_only_seq);
  RC_ASSERT(gpu::to_host_vector(g.causal_sample_ids) == r.causal_sample_ids);
  RC_ASSERT(gpu::to_host_vector(g.full_only_sample_ids) == r.full_only_sample_ids);
  RC_ASSERT(g.pad_segment == r.pad_segment);
  RC_ASSERT(g.is_sharded == r.is_sharded);
  RC_ASSERT(g.num_causal_tokens_local == r.num_causal_tokens_local);
  RC_ASSERT(g.num_full_tokens_local == r.num_full_tokens_local);
}

// Builds with both; the same error class, or the same pack and marks.
std::optional<std::pair<ref::Pack, gpu::DevicePack>> build_both(const sp::Case& c) {
  const ref::Rows rows = sp::case_rows(c);
  ref::GraphMarks rm = c.marks, gm = c.marks;
  std::string r_error, g_error;
  std::optional<ref::Pack> r;
  std::optional<gpu::DevicePack> g;
  try {
    r = ref::build_pack(rows, c.layout, c.options, rm);
  } catch (const ref::Error& e) {
    r_error = ref::to_string(e.code());
  }
  poison();
  try {
    g = gpu::build_pack(gpu::to_device(rows), c.layout, c.options, gm);
  } catch (const ref::Error& e) {
    g_error = ref::to_string(e.code());
  }
  RC_ASSERT(g_error == r_error);
  RC_ASSERT(gm == rm);
  if (!r) return std::nullopt;
  expect_same_pack(*r, *g);
  return std::make_pair(std::move(*r), std::move(*g));
}

sp::Case any_case() {
  return *rc::gen::weightedOneOf<sp::Case>({{3, sp::gen_packer_case()}, {1, sp::gen_strict_case()}});
}

RC_GTEST_PROP(GpuDifferential, BuildPackMatchesTheReference, ()) {
  const sp::Case c = any_case();
  RC_TAG(c.expect_error.empty() ? "valid" : c.expect_error);
  build_both(c);
}

RC_GTEST_PROP(GpuDifferential, ViewsMatchTheReference, ()) {
  const sp::Case c = *sp::gen_packer_case();
  auto both = build_both(c);
  RC_ASSERT(both.has_value());
  auto& [r, g] = *both;
  poison();
  RC_ASSERT(gpu::to_host(gpu::get_all_seq(g)) == ref::get_all_seq(r));
  poison();
  const auto gp = gpu::get_all_seq_padded(g);
  const auto rp = ref::get_all_seq_padded(r);
  RC_ASSERT(gpu::to_host(gp.seq) == rp.seq);
  RC_ASSERT(gp.offsets == rp.offsets);
  RC_ASSERT(gp.max_len == rp.max_len);
  sp::Case other = c;
  other.data_seed = c.data_seed + 1;
  const ref::Rows value = sp::case_rows(other);
  ref::set_all_seq(r, value);
  gpu::set_all_seq(g, gpu::to_device(value));
  RC_ASSERT(gpu::to_host(g.causal_seq) == r.causal_seq);
  RC_ASSERT(gpu::to_host(g.full_only_seq) == r.full_only_seq);
  poison();
  const ref::Pack rz = ref::zeros_like(r, 3);
  const gpu::DevicePack gz = gpu::zeros_like(g, 3);
  RC_ASSERT(gpu::to_host(gz.causal_seq) == rz.causal_seq);
  RC_ASSERT(gpu::to_host(gz.full_only_seq) == rz.full_only_seq);
  poison();
  const ref::Pack rf = ref::from_all_seq(value, r);
  const gpu::DevicePack gf = gpu::from_all_seq(gpu::to_device(value), g);
  RC_ASSERT(gpu::to_host(gf.causal_seq) == rf.causal_seq);
  RC_ASSERT(gpu::to_host(gf.full_only_seq) == rf.full_only_seq);
}

RC_GTEST_PROP(GpuDifferential, ShardsAndGatherMatchTheReference, ()) {
  const sp::Case c = *sp::gen_packer_case();
  auto both = build_both(c);
  RC_ASSERT(both.has_value());
  auto& [r, g] = *both;
  const std::int64_t world = c.options.cp_world_size;
  std::vector<gpu::DevicePack> shards;
  for (std::int64_t rank = 0; rank < world; ++rank) {
    std::string r_error, g_error;
    std::optional<ref::Pack> rs;
    try {
      rs = ref::shard_pack(r, rank, world);
    } catch (const ref::Error& e) {
      r_error = ref::to_string(e.code());
    }
    poison();
    try {
      shards.push_back(gpu::shard_pack(g, rank, world));
    } catch (const ref::Error& e) {
      g_error = ref::to_string(e.code());
    }
    RC_ASSERT(g_error == r_error);
    if (!rs) return;
    expect_same_pack(*rs, shards.back());
  }
  poison();
  const gpu::DevicePack whole = gpu::gather_shards(shards);
  expect_same_pack(r, whole);
  // from_all_seq on a shard: [local causal ; local full] split at the causal length.
  const ref::Pack r0 = ref::shard_pack(r, 0, world);
  ref::Rows joined = ref::Rows(r0.causal_seq.rows() + r0.full_only_seq.rows(), r0.causal_seq.row_bytes());
  if (r0.causal_seq.size_bytes()) std::memcpy(joined.data(), r0.causal_seq.data(), r0.causal_seq.size_bytes());
  if (r0.full_only_seq.size_bytes()) {
    std::memcpy(joined.data() + r0.causal_seq.size_bytes(), r0.full_only_seq.data(), r0.full_only_seq.size_bytes());
  }
  poison();
  const gpu::DevicePack g0 = gpu::from_all_seq(gpu::to_device(joined), shards[0]);
  const ref::Pack rf0 = ref::from_all_seq(joined, r0);
  RC_ASSERT(gpu::to_host(g0.causal_seq) == rf0.causal_seq);
  RC_ASSERT(gpu::to_host(g0.full_only_seq) == rf0.full_only_seq);
}

RC_GTEST_PROP(GpuDifferential, PositionIdsMatchTheReference, ()) {
  const sp::Case c = *sp::gen_packer_case();
  auto both = build_both(c);
  RC_ASSERT(both.has_value());
  auto& [r, g] = *both;
  const bool mrope = *rc::gen::arbitrary<bool>();
  ref::PositionIds ids{mrope, mrope ? 3u : 1u, static_cast<std::size_t>(c.rows), {}};
  ids.values = *rc::gen::container<std::vector<std::int64_t>>(ids.axes * ids.len, rc::gen::arbitrary<std::int64_t>());
  const gpu::DevicePositionIds d = gpu::to_device(ids);
  poison();
  RC_ASSERT(gpu::to_host(gpu::get_und_position_ids(d, g)) == ref::get_und_position_ids(ids, r));
  poison();
  RC_ASSERT(gpu::to_host(gpu::get_gen_position_ids(d, g)) == ref::get_gen_position_ids(ids, r));
  const std::int64_t world = c.options.cp_world_size;
  for (std::int64_t rank = 0; rank < world; ++rank) {
    std::string r_error, g_error;
    std::optional<ref::PositionIds> rs;
    try {
      rs = ref::shard_position_ids(ids, r, rank, world);
    } catch (const ref::Error& e) {
      r_error = ref::to_string(e.code());
    }
    poison();
    try {
      const auto gs = gpu::to_host(gpu::shard_position_ids(d, g, rank, world));
      if (rs) RC_ASSERT(gs == *rs);
    } catch (const ref::Error& e) {
      g_error = ref::to_string(e.code());
    }
    RC_ASSERT(g_error == r_error);
  }
}

#ifdef SEQPACK_GPU_CUDA
// Why this machine cannot run the CUDA build, or empty when it can.
std::string no_device_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return cudaGetErrorString(e);
  return count == 0 ? "0 devices" : "";
}

// Without a device every test of this binary runs as this one, which skips
// with the reason (CTest reports the test as skipped, not passed).
TEST(Device, IsPresent) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no CUDA device on this machine (" << reason << "); the CUDA build did not run";
  EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  setenv("RC_PARAMS", "max_success=300 max_size=100", 0);
  ::testing::InitGoogleTest(&argc, argv);
#ifdef SEQPACK_GPU_CUDA
  if (!no_device_reason().empty()) ::testing::GTEST_FLAG(filter) = "Device.IsPresent";
#endif
  return RUN_ALL_TESTS();
}
