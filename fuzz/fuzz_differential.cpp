// Fuzz target: the reference against the GPU implementation on Thrust's CPP
// host backend (and the LibTorch binding, when this build has it) on a
// decoded case: the same error class, or the same pack field by field, the
// same marks, views and shards; builds with prepared metadata, matching and
// not. A mismatch aborts with the first differing
// field and the case.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "seqpack/fuzz/decode.hpp"
#include "seqpack/gpu/pack.hpp"
#include "seqpack/reference/reference.hpp"
#ifdef SEQPACK_FUZZ_TORCH
#include <cstring>

#include <ATen/ATen.h>

#include "seqpack/torch/sequence_pack.hpp"
#endif

namespace {

namespace sf = seqpack::fuzz;
namespace ref = seqpack::reference;
namespace gpu = seqpack::gpu;
using seqpack::protocol::Case;

// The first field where the packs differ, or empty.
std::string first_difference(const ref::Pack& r, const gpu::DevicePack& g) {
  const ref::Metadata& m = *r.meta;
  const ref::Metadata& s = g.meta->summary;
  if (gpu::to_host_vector(g.meta->causal_indices) != m.causal_indices) return "causal_indices";
  if (gpu::to_host_vector(g.meta->full_indices) != m.full_indices) return "full_indices";
  if (gpu::to_host_vector(g.meta->causal_sample_ids) != m.causal_sample_ids) return "meta.causal_sample_ids";
  if (gpu::to_host_vector(g.meta->full_only_sample_ids) != m.full_only_sample_ids) return "meta.full_only_sample_ids";
  if (s.sample_offsets != m.sample_offsets) return "sample_offsets";
  if (s.causal_seq_offsets != m.causal_seq_offsets) return "causal_seq_offsets";
  if (s.full_only_seq_offsets != m.full_only_seq_offsets) return "full_only_seq_offsets";
  if (s.max_sample_len != m.max_sample_len) return "max_sample_len";
  if (s.max_causal_len != m.max_causal_len) return "max_causal_len";
  if (s.max_full_len != m.max_full_len) return "max_full_len";
  if (s.num_causal_tokens != m.num_causal_tokens || s.num_full_tokens != m.num_full_tokens) return "num_tokens";
  if (g.max_num_tokens != r.max_num_tokens) return "max_num_tokens";
  if (gpu::to_host(g.causal_seq) != r.causal_seq) return "causal_seq";
  if (gpu::to_host(g.full_only_seq) != r.full_only_seq) return "full_only_seq";
  if (gpu::to_host_vector(g.causal_sample_ids) != r.causal_sample_ids) return "causal_sample_ids";
  if (gpu::to_host_vector(g.full_only_sample_ids) != r.full_only_sample_ids) return "full_only_sample_ids";
  if (!(g.pad_segment == r.pad_segment)) return "pad_segment";
  if (g.is_sharded != r.is_sharded) return "is_sharded";
  if (g.num_causal_tokens_local != r.num_causal_tokens_local || g.num_full_tokens_local != r.num_full_tokens_local) {
    return "num_tokens_local";
  }
  return "";
}

template <typename Build>
std::pair<std::string, std::optional<decltype(std::declval<Build>()())>> attempt(Build build) {
  try {
    return {"", build()};
  } catch (const ref::Error& e) {
    return {ref::to_string(e.code()), std::nullopt};
  }
}

#ifdef SEQPACK_FUZZ_TORCH
void check_torch(const Case& c, const ref::Rows& rows, const std::optional<ref::Pack>& r, const std::string& r_error) {
  namespace tb = seqpack::torch_binding;
  at::Tensor input =
      at::empty({static_cast<std::int64_t>(rows.rows()), static_cast<std::int64_t>(rows.row_bytes())}, at::kByte);
  if (rows.size_bytes()) std::memcpy(input.data_ptr(), rows.data(), rows.size_bytes());
  const tb::BuildOptions o = tb::build_options(c.options);
  ref::GraphMarks marks = c.marks;
  const auto [error, t] = attempt([&] {
    const at::Tensor und = at::tensor(at::ArrayRef<std::int64_t>(c.layout.und_token_indexes), at::kLong);
    return tb::sequence_pack_from_packed_sequence(input, c.layout.attn_modes, c.layout.split_lens, c.layout.sample_lens,
                                                  und, at::Tensor(), marks, o);
  });
  if (error != r_error) sf::report("differential (torch): error class " + error + " vs the reference's " + r_error, c);
  if (!r) return;
  const auto same = [](const at::Tensor& t, const ref::Rows& want) {
    const at::Tensor b = t.contiguous();
    return static_cast<std::size_t>(b.numel()) == want.size_bytes() &&
           (want.size_bytes() == 0 || std::memcmp(b.data_ptr(), want.data(), want.size_bytes()) == 0);
  };
  if (!same(t->causal_seq, r->causal_seq)) sf::report("differential (torch): causal_seq", c);
  if (!same(t->full_only_seq, r->full_only_seq)) sf::report("differential (torch): full_only_seq", c);
  if (!same(tb::get_all_seq(*t), ref::get_all_seq(*r))) sf::report("differential (torch): get_all_seq", c);
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Case c = sf::decode_case(data, size);
  if (!sf::small_enough(c)) return 0;
  const ref::Rows rows = seqpack::protocol::case_rows(c);
  ref::GraphMarks rm = c.marks, gm = c.marks;
  auto [r_error, r] = attempt([&] { return ref::build_pack(rows, c.layout, c.options, rm); });
  auto [g_error, g] = attempt([&] { return gpu::build_pack(gpu::to_device(rows), c.layout, c.options, gm); });
  if (g_error != r_error) sf::report("differential: error class " + g_error + " vs the reference's " + r_error, c);
  if (gm != rm) sf::report("differential: graph_bounds", c);
  if (r) {
    if (const std::string d = first_difference(*r, *g); !d.empty()) sf::report("differential: " + d, c);
  }
#ifdef SEQPACK_FUZZ_TORCH
  check_torch(c, rows, r, r_error);
#endif
  if (!r) return 0;
  // Prepared metadata: a build that reuses it equals the plain build, and a
  // layout it does not describe is metadata_mismatch, on both sides.
  {
    const auto rmeta = std::make_shared<const ref::Metadata>(ref::prepare_metadata(c.layout));
    const auto gmeta = std::make_shared<const gpu::DeviceMetadata>(gpu::prepare_metadata(c.layout));
    ref::GraphMarks rm2 = c.marks, gm2 = c.marks;
    const ref::Pack rp = ref::build_pack(rows, c.layout, c.options, rm2, rmeta);
    const gpu::DevicePack gp = gpu::build_pack(gpu::to_device(rows), c.layout, c.options, gm2, gmeta);
    if (!(rp.causal_seq == r->causal_seq) || !(rp.full_only_seq == r->full_only_seq) || !(rm2 == rm)) {
      sf::report("differential: a build with prepared metadata differs from the plain build", c);
    }
    if (const std::string d = first_difference(rp, gp); !d.empty()) sf::report("differential: prepared " + d, c);
    ref::Layout other = c.layout;
    other.sample_lens.push_back(0);  // one more (empty) sample: another layout over the same rows
    ref::GraphMarks rm3 = c.marks, gm3 = c.marks;
    auto [ro_error, ro] = attempt([&] { return ref::build_pack(rows, other, c.options, rm3, rmeta); });
    auto [go_error, go] = attempt([&] { return gpu::build_pack(gpu::to_device(rows), other, c.options, gm3, gmeta); });
    if (ro_error != "metadata_mismatch" || go_error != ro_error) {
      sf::report("differential: mismatching prepared metadata gave '" + ro_error + "' and '" + go_error + "'", c);
    }
  }
  if (gpu::to_host(gpu::get_all_seq(*g)) != ref::get_all_seq(*r)) sf::report("differential: get_all_seq", c);
  const gpu::DeviceAllSeqPadded gp = gpu::get_all_seq_padded(*g);
  const ref::AllSeqPadded rp = ref::get_all_seq_padded(*r);
  if (gpu::to_host(gp.seq) != rp.seq) sf::report("differential: get_all_seq_padded.seq", c);
  if (gp.offsets != rp.offsets || gp.max_len != rp.max_len) sf::report("differential: get_all_seq_padded.offsets", c);
  const std::int64_t world = c.options.cp_world_size;
  const ref::Pack& whole = *r;  // (structured bindings cannot be captured in C++17)
  const gpu::DevicePack& device = *g;
  for (std::int64_t rank = 0; rank < world; ++rank) {
    auto [rs_error, rs] = attempt([&] { return ref::shard_pack(whole, rank, world); });
    auto [gs_error, gs] = attempt([&] { return gpu::shard_pack(device, rank, world); });
    if (gs_error != rs_error) sf::report("differential: shard_pack error class " + gs_error + " vs " + rs_error, c);
    if (!rs) break;
    if (const std::string d = first_difference(*rs, *gs); !d.empty()) {
      sf::report("differential: shard " + std::to_string(rank) + " " + d, c);
    }
  }
  return 0;
}
