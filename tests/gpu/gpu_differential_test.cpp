// Differential properties: the GPU implementation (this build's Thrust
// backend) against the reference, bit for bit, on the property suite's
// generators. Output buffers are poisoned before each call, so a row the
// implementation forgets to write shows as a difference. The gpu validates
// and plans on its own, so refusals are compared too: the same error class
// naming the same field, on the strict generator's planted faults and on
// misuse after a build.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "seqpack/attention/consequences.hpp"
#include "seqpack/gpu/pack.hpp"
#include "seqpack/gpu/testing.hpp"
#include "seqpack/properties/catalogue.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/properties/verdict.hpp"
#include "seqpack/reference/reference.hpp"

namespace {

namespace ref = seqpack::reference;
namespace gpu = seqpack::gpu;
namespace sp = seqpack::properties;

// The OMP build's default size threshold of its serial path (read before any test sets it).
const std::size_t kSerialThreshold = gpu::serial_threshold();

// Poisons the next outputs and picks the metadata expansion, the row copy
// (the device's chunked one or the host's memcpy per row; CUDA has only the
// first) and, on the OMP build, the serial or the parallel path (every choice
// is checked).
void poison() {
  gpu::set_poison(*rc::gen::inRange(0, 256));
  gpu::set_scan_expansion(*rc::gen::arbitrary<bool>());
#ifndef SEQPACK_GPU_CUDA
  gpu::set_chunked_row_copy(*rc::gen::arbitrary<bool>());
#endif
  gpu::set_serial_threshold(*rc::gen::element<std::size_t>(0, kSerialThreshold, SIZE_MAX));
}

// The generators' row widths are 1-16 bytes; a sixth of the cases here take
// a width the device copies in 16-byte vectors (32, 256, 1024: the model's
// rows) or in narrower ones (4, 12, 20, 1000), when their rows stay small.
sp::Case widen(sp::Case c) {
  if (*rc::gen::element(0, 1, 2, 3, 4, 5) == 0) {  // uniform (inRange grows with the size)
    const std::size_t width = *rc::gen::element<std::size_t>(32, 256, 1024, 4, 12, 20, 1000);
    // At most 1 MiB of packed rows, so that the OMP build's share stays
    // seconds (row_copy_test.cpp covers the large copies).
    if (c.rows >= 0 && static_cast<std::uint64_t>(c.rows) * width <= (std::uint64_t{1} << 20)) {
      c.row_bytes = width;
      RC_TAG("row_bytes:" + std::to_string(c.row_bytes));
    }
  }
  return c;
}

// A device error (a failed allocation, launch or copy, or a fault the
// synchronising check saw) may leave the CUDA context unusable, so shrinking
// would only repeat it: the test prints the case it ran and ends the binary.
[[noreturn]] void device_error(const sp::Case& c, const char* what) {
  std::fflush(stdout);
  std::fprintf(
      stderr,
      "\ngpu_differential: device error: %s\n  on the case: %s\n  (no shrinking: the device context may be lost)\n",
      what, sp::to_json(c).c_str());
  std::fflush(stderr);
  std::_Exit(3);
}

template <typename Body>
void on_device(const sp::Case& c, Body&& body) {
  sp::track(c);
  try {
    body();
  } catch (const gpu::DeviceError& e) {
    device_error(c, e.what());
#ifdef SEQPACK_GPU_CUDA
  } catch (const thrust::system_error& e) {
    device_error(c, e.what());
#endif
  }
}

// What a refusal says: "<class> at <field>", or "" when the call succeeds.
std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const ref::Error& e) {
    return std::string(ref::to_string(e.code())) + " at " + e.field();
  }
  return {};
}

// Both streams, byte for byte.
void expect_same_streams(const ref::Pack& r, const gpu::DevicePack& g) {
  sp::same("pack.causal_seq", gpu::to_host(g.causal_seq), r.causal_seq);
  sp::same("pack.full_only_seq", gpu::to_host(g.full_only_seq), r.full_only_seq);
}

void expect_same_pack(const ref::Pack& r, const gpu::DevicePack& g) {
  const ref::Metadata& m = *r.meta;
  const ref::Metadata& s = g.meta->summary;
  sp::same("meta.causal_indices", gpu::to_host_vector(g.meta->causal_indices), m.causal_indices);
  sp::same("meta.full_indices", gpu::to_host_vector(g.meta->full_indices), m.full_indices);
  sp::same("meta.causal_sample_ids", gpu::to_host_vector(g.meta->causal_sample_ids), m.causal_sample_ids);
  sp::same("meta.full_only_sample_ids", gpu::to_host_vector(g.meta->full_only_sample_ids), m.full_only_sample_ids);
  sp::same("meta.sample_offsets", s.sample_offsets, m.sample_offsets);
  sp::same("meta.causal_seq_offsets", s.causal_seq_offsets, m.causal_seq_offsets);
  sp::same("meta.full_only_seq_offsets", s.full_only_seq_offsets, m.full_only_seq_offsets);
  sp::same("meta.max_sample_len", s.max_sample_len, m.max_sample_len);
  sp::same("meta.max_causal_len", s.max_causal_len, m.max_causal_len);
  sp::same("meta.max_full_len", s.max_full_len, m.max_full_len);
  sp::same("meta.num_causal_tokens", s.num_causal_tokens, m.num_causal_tokens);
  sp::same("meta.num_full_tokens", s.num_full_tokens, m.num_full_tokens);
  sp::same("pack.max_num_tokens", g.max_num_tokens, r.max_num_tokens);
  expect_same_streams(r, g);
  sp::same("pack.causal_sample_ids", gpu::to_host_vector(g.causal_sample_ids), r.causal_sample_ids);
  sp::same("pack.full_only_sample_ids", gpu::to_host_vector(g.full_only_sample_ids), r.full_only_sample_ids);
  sp::same("pack.pad_segment", g.pad_segment, r.pad_segment);
  sp::same("pack.is_sharded", g.is_sharded, r.is_sharded);
  sp::same("pack.num_causal_tokens_local", g.num_causal_tokens_local, r.num_causal_tokens_local);
  sp::same("pack.num_full_tokens_local", g.num_full_tokens_local, r.num_full_tokens_local);
}

// Whether the reference would accept the case with padded streams past what
// a test allocates (marks or alignments near int32 that a second planted fault
// made valid; 256 MiB of rows counted as at least 16 bytes each): decided from
// the plan, before anything is allocated.
bool too_large_to_build(const sp::Case& c) {
  const auto limit = static_cast<std::int64_t>((std::size_t{256} << 20) / std::max<std::size_t>(c.row_bytes, 16));
  try {
    ref::validate_options(c.options, c.marks);
    ref::validate_layout(c.layout);
    const ref::PackShape s = ref::plan_pack(ref::prepare_metadata(c.layout), c.rows, c.options, c.marks);
    return s.causal_len + s.full_len > limit;
  } catch (const ref::Error&) {
    return c.rows > limit;
  }
}

// Builds with both; the same error class, or the same pack and marks. Half
// the time both sides build with metadata each prepared beforehand (when the
// layout's metadata can be prepared).

std::optional<std::pair<ref::Pack, gpu::DevicePack>> build_both(const sp::Case& c) {
  if (too_large_to_build(c)) {
    RC_TAG("too large to build");
    return std::nullopt;
  }
  const ref::Rows rows = sp::case_rows(c);
  ref::GraphMarks rm = c.marks, gm = c.marks;
  std::optional<ref::Pack> r;
  std::optional<gpu::DevicePack> g;
  std::shared_ptr<const ref::Metadata> r_meta;
  std::shared_ptr<const gpu::DeviceMetadata> g_meta;
  if (*rc::gen::arbitrary<bool>()) {
    poison();
    const std::string r_prep =
        refusal([&] { r_meta = std::make_shared<const ref::Metadata>(ref::prepare_metadata(c.layout)); });
    const std::string g_prep =
        refusal([&] { g_meta = std::make_shared<const gpu::DeviceMetadata>(gpu::prepare_metadata(c.layout)); });
    sp::same("prepare_metadata refusal", g_prep, r_prep);
    RC_TAG(r_meta ? "prepared metadata" : "metadata refused");
  }
  const std::string r_error = refusal([&] { r = ref::build_pack(rows, c.layout, c.options, rm, r_meta); });
  poison();
  const gpu::DeviceRows d = gpu::to_device(rows);
  const std::string g_error = refusal([&] { g = gpu::build_pack(d, c.layout, c.options, gm, g_meta); });
  sp::same("refusal", g_error, r_error);
  sp::same("graph marks after the call", gm, rm);
  if (!r) return std::nullopt;
  expect_same_pack(*r, *g);
  return std::make_pair(std::move(*r), std::move(*g));
}

sp::Case any_case() {
  return widen(*rc::gen::weightedOneOf<sp::Case>({{3, sp::gen_packer_case()}, {1, sp::gen_strict_case()}}));
}

SEQPACK_PROPERTY(GpuDifferential, BuildPackMatchesTheReference) {
  const sp::Case c = any_case();
  RC_TAG(c.expect_error.empty() ? "valid" : c.expect_error);
  on_device(c, [&] { build_both(c); });
}

// The gpu pack copied into the reference's Pack type: its metadata summary
// with the device's index and sample-id vectors, its streams and sample ids.
ref::Pack host_pack(const gpu::DevicePack& g) {
  auto m = std::make_shared<ref::Metadata>(g.meta->summary);
  m->causal_indices = gpu::to_host_vector(g.meta->causal_indices);
  m->full_indices = gpu::to_host_vector(g.meta->full_indices);
  m->causal_sample_ids = gpu::to_host_vector(g.meta->causal_sample_ids);
  m->full_only_sample_ids = gpu::to_host_vector(g.meta->full_only_sample_ids);
  ref::Pack p;
  p.meta = m;
  ref::copy_pack_scalars(g, p);
  p.causal_seq = gpu::to_host(g.causal_seq);
  p.full_only_seq = gpu::to_host(g.full_only_seq);
  p.causal_sample_ids = gpu::to_host_vector(g.causal_sample_ids);
  p.full_only_sample_ids = gpu::to_host_vector(g.full_only_sample_ids);
  return p;
}

// Issue 27: the gpu pack, run through every attention pass it feeds
// (seqpack::attention, NaN-poisoned buffers), does exactly what the
// reference's does: the same report, finding for finding.
SEQPACK_PROPERTY(GpuDifferential, ConsequencesMatchTheReference) {
  const sp::Case c = *sp::gen_valid_case(*rc::gen::element(sp::Profile::packer, sp::Profile::strict));
  on_device(c, [&] {
    const auto both = build_both(c);
    if (!both) return;
    seqpack::attention::EvaluateOptions o;
    o.max_pairs = sp::Subject::kConsequencePairs;
    const auto want = seqpack::attention::evaluate(seqpack::attention::from_reference(both->first, c.options), o);
    const auto got =
        seqpack::attention::evaluate(seqpack::attention::from_reference(host_pack(both->second), c.options), o);
    RC_TAG(seqpack::attention::to_string(want.severity));
    sp::same("consequences", seqpack::attention::format_report(got), seqpack::attention::format_report(want));
  });
}

// Layout faults the strict generator does not plant, added to its case:
// negative sample lengths, empty samples, lengths that sum past int64 (tiled,
// crossing or short), splits past the samples' end or short of it, und
// indexes out of order, repeated out of order, or far past the rows. Returns
// what it planted.
std::string plant_more(sp::Case& c) {
  ref::Layout& l = c.layout;
  if (l.sample_lens.empty()) return "none";
  const std::size_t k = *rc::gen::inRange<std::size_t>(0, l.sample_lens.size());
  switch (*rc::gen::element(0, 1, 2, 3, 4, 5, 6, 7)) {
    case 0:
      l.sample_lens[k] = -*rc::gen::element<std::int64_t>(1, 2, INT64_MAX);
      return "negative sample";
    case 1: {
      const std::int64_t a = *rc::gen::element<std::int64_t>(INT64_MAX - 1, std::int64_t{1} << 62, 2147483648LL);
      const std::int64_t b = *rc::gen::element<std::int64_t>(INT64_MAX - 1, std::int64_t{1} << 62, 5);
      const auto splits =
          *rc::gen::element(std::vector<std::int64_t>{a, b}, std::vector<std::int64_t>{a + 1, b - 1},
                            std::vector<std::int64_t>{a - 1, b + 1}, std::vector<std::int64_t>{a, b - 1});
      l.sample_lens.insert(l.sample_lens.end(), {a, b});
      l.split_lens.insert(l.split_lens.end(), splits.begin(), splits.end());
      l.attn_modes.insert(l.attn_modes.end(), {"full", *rc::gen::element<std::string>("causal", "full")});
      return "huge lengths";
    }
    case 2:
      l.sample_lens.insert(l.sample_lens.begin() + static_cast<std::ptrdiff_t>(k), 0);
      return "empty sample";
    case 3:
      l.split_lens.push_back(*rc::gen::element<std::int64_t>(1, 5));
      l.attn_modes.push_back(*rc::gen::element<std::string>("causal", "full"));
      return "split past the end";
    case 4:
      // (A strict case may already have fewer modes than splits.)
      if (l.split_lens.empty() || l.attn_modes.empty()) return "none";
      l.split_lens.pop_back();
      l.attn_modes.pop_back();
      return "last split dropped";
    case 5:
      std::reverse(l.und_token_indexes.begin(), l.und_token_indexes.end());
      return "und reversed";
    case 6:
      if (l.und_token_indexes.empty()) return "none";
      l.und_token_indexes.push_back(l.und_token_indexes.front());
      std::reverse(l.und_token_indexes.begin(), l.und_token_indexes.end());
      return "und repeated, reversed";
    default:
      l.und_token_indexes.push_back(*rc::gen::element<std::int64_t>(INT64_MAX, std::int64_t{1} << 62, INT64_MIN));
      return "und far out";
  }
}

// The strict generator plants one fault of a PROTOCOL.md class in most cases,
// plant_more one more in half. Every refusal must match the reference's in
// class and field: build_pack's, prepare_metadata's, and that of a build with
// prepared metadata (made for the case's layout, or for another one:
// metadata_mismatch).
void refusals_match(const sp::Case& c);

SEQPACK_PROPERTY(GpuDifferential, RefusalsMatchTheReference) {
  sp::Case c = *sp::gen_strict_case();
  RC_TAG(c.expect_error.empty() ? "valid" : c.expect_error);
  if (*rc::gen::arbitrary<bool>()) RC_TAG(plant_more(c));
  if (too_large_to_build(c)) return;
  on_device(c, [&] { refusals_match(c); });
}

void refusals_match(const sp::Case& c) {
  build_both(c);
  std::shared_ptr<const ref::Metadata> r_meta;
  std::shared_ptr<const gpu::DeviceMetadata> g_meta;
  const std::string r_error =
      refusal([&] { r_meta = std::make_shared<const ref::Metadata>(ref::prepare_metadata(c.layout)); });
  poison();
  const std::string g_error =
      refusal([&] { g_meta = std::make_shared<const gpu::DeviceMetadata>(gpu::prepare_metadata(c.layout)); });
  sp::same("refusal", g_error, r_error);
  if (!r_meta) return;
  ref::Layout layout = c.layout;
  if (*rc::gen::arbitrary<bool>()) {
    if (!layout.attn_modes.empty() && *rc::gen::arbitrary<bool>()) {
      std::string& mode = layout.attn_modes[*rc::gen::inRange<std::size_t>(0, layout.attn_modes.size())];
      mode = mode == "causal" ? "full" : "causal";
    } else {
      layout.sample_lens.push_back(0);
    }
  }
  const ref::Rows rows = sp::case_rows(c);
  ref::GraphMarks rm = c.marks, gm = c.marks;
  std::optional<ref::Pack> r;
  std::optional<gpu::DevicePack> g;
  const std::string r_prepared = refusal([&] { r = ref::build_pack(rows, layout, c.options, rm, r_meta); });
  poison();
  const gpu::DeviceRows d = gpu::to_device(rows);
  const std::string g_prepared = refusal([&] { g = gpu::build_pack(d, layout, c.options, gm, g_meta); });
  sp::same("refusal with prepared metadata", g_prepared, r_prepared);
  sp::same("graph marks after the call", gm, rm);
  if (r) expect_same_pack(*r, *g);
}

// Misuse after a build: the checks of the operations that take a pack.
SEQPACK_PROPERTY(GpuDifferential, MisuseIsRefusedAlike) {
  const sp::Case c = widen(*sp::gen_packer_case());
  on_device(c, [&] {
    auto both = build_both(c);
    RC_ASSERT(both.has_value());
    ref::Pack& r = both->first;  // named, not bound: lambdas capture them (C++17)
    gpu::DevicePack& g = both->second;
    const std::int64_t world = c.options.cp_world_size;
    const auto n = static_cast<std::size_t>(r.meta->num_tokens());
    const std::size_t width = r.causal_seq.row_bytes();
    const auto ids_of = [](bool mrope, std::size_t axes, std::size_t len, std::size_t values) {
      return ref::PositionIds{mrope, axes, len, std::vector<std::int64_t>(values, 7)};
    };
    std::string r_error, g_error;
    const int misuse = *rc::gen::element(0, 1, 2, 3, 4, 5, 6, 7, 8);  // uniform (inRange grows with the size)
    poison();
    switch (misuse) {
      case 0: {
        RC_TAG("rank outside the world");
        const std::int64_t rank = *rc::gen::element<std::int64_t>(-1, world, world + 5, INT64_MIN, INT64_MAX);
        r_error = refusal([&] { ref::shard_pack(r, rank, world); });
        g_error = refusal([&] { gpu::shard_pack(g, rank, world); });
        break;
      }
      case 1: {
        RC_TAG("world size below 1");
        const std::int64_t w = *rc::gen::element<std::int64_t>(0, -1, INT64_MIN);
        const ref::PositionIds ids = ids_of(false, 1, n, n);
        r_error = refusal([&] { ref::shard_position_ids(ids, r, 0, w); });
        g_error = refusal([&] { gpu::shard_position_ids(gpu::to_device(ids), g, 0, w); });
        break;
      }
      case 2: {
        RC_TAG("an operation on a shard");
        std::optional<ref::Pack> rs;
        std::optional<gpu::DevicePack> gs;
        r_error = refusal([&] { rs = ref::shard_pack(r, 0, world); });
        g_error = refusal([&] { gs = gpu::shard_pack(g, 0, world); });
        if (!rs || !gs) break;
        const ref::PositionIds ids = ids_of(false, 1, n, n);
        switch (*rc::gen::element(0, 1, 2, 3, 4)) {
          case 0:
            r_error = refusal([&] { ref::shard_pack(*rs, 0, world); });
            g_error = refusal([&] { gpu::shard_pack(*gs, 0, world); });
            break;
          case 1:
            r_error = refusal([&] { ref::get_all_seq(*rs); });
            g_error = refusal([&] { gpu::get_all_seq(*gs); });
            break;
          case 2:
            r_error = refusal([&] { ref::get_all_seq_padded(*rs); });
            g_error = refusal([&] { gpu::get_all_seq_padded(*gs); });
            break;
          case 3:
            r_error = refusal([&] { ref::set_all_seq(*rs, ref::Rows(n, width)); });
            g_error = refusal([&] { gpu::set_all_seq(*gs, gpu::to_device(ref::Rows(n, width))); });
            break;
          default:
            r_error = refusal([&] { ref::get_und_position_ids(ids, *rs); });
            g_error = refusal([&] { gpu::get_und_position_ids(gpu::to_device(ids), *gs); });
            break;
        }
        break;
      }
      case 3: {
        RC_TAG("set_all_seq of the wrong shape");
        const bool wider = *rc::gen::arbitrary<bool>();
        const ref::Rows value(wider ? n : n + 1, wider ? width + 1 : width);
        r_error = refusal([&] { ref::set_all_seq(r, value); });
        g_error = refusal([&] { gpu::set_all_seq(g, gpu::to_device(value)); });
        break;
      }
      case 4: {
        RC_TAG("from_all_seq of the wrong length");
        const ref::Rows value(n + *rc::gen::inRange<std::size_t>(1, 4), width);
        r_error = refusal([&] { ref::from_all_seq(value, r); });
        g_error = refusal([&] { gpu::from_all_seq(gpu::to_device(value), g); });
        break;
      }
      case 5:
      case 6:
      case 7: {
        RC_TAG("position ids of the wrong shape");
        const ref::PositionIds ids = misuse == 5   ? ids_of(true, 3, n + 1, 3 * (n + 1))  // one id too many per axis
                                     : misuse == 6 ? ids_of(false, 3, n, 3 * n)           // 1-D with three axes
                                                   : ids_of(true, 3, n, 3 * n + 1);  // values do not fill the shape
        if (*rc::gen::arbitrary<bool>()) {
          r_error = refusal([&] { ref::get_gen_position_ids(ids, r); });
          g_error = refusal([&] { gpu::get_gen_position_ids(gpu::to_device(ids), g); });
        } else {
          const std::int64_t rank = *rc::gen::inRange<std::int64_t>(0, world);
          r_error = refusal([&] { ref::shard_position_ids(ids, r, rank, world); });
          g_error = refusal([&] { gpu::shard_position_ids(gpu::to_device(ids), g, rank, world); });
        }
        break;
      }
      default: {
        RC_TAG("gather_shards of the wrong shards");
        std::vector<ref::Pack> rs;
        std::vector<gpu::DevicePack> gs;
        const std::string r_shard = refusal([&] {
          for (std::int64_t rank = 0; rank < world; ++rank) rs.push_back(ref::shard_pack(r, rank, world));
        });
        const std::string g_shard = refusal([&] {
          for (std::int64_t rank = 0; rank < world; ++rank) gs.push_back(gpu::shard_pack(g, rank, world));
        });
        sp::same("shard_pack refusal", g_shard, r_shard);
        if (!r_shard.empty()) break;
        switch (*rc::gen::element(0, 1, 2)) {
          case 0:  // none
            rs.clear();
            gs.clear();
            break;
          case 1: {  // the whole pack in place of one shard
            const auto k = *rc::gen::inRange<std::size_t>(0, rs.size());
            rs[k] = r;
            gs[k] = gpu::zeros_like(g);
            gs[k].is_sharded = false;
            break;
          }
          default:  // one rank twice, another missing
            if (rs.size() > 1) {
              rs.back() = rs.front();
              gs.back() = gpu::shard_pack(g, 0, world);
            }
            break;
        }
        r_error = refusal([&] { ref::gather_shards(rs); });
        g_error = refusal([&] { gpu::gather_shards(gs); });
        break;
      }
    }
    sp::same("refusal", g_error, r_error);
  });
}

SEQPACK_PROPERTY(GpuDifferential, ViewsMatchTheReference) {
  const sp::Case c = widen(*sp::gen_packer_case());
  on_device(c, [&] {
    auto both = build_both(c);
    RC_ASSERT(both.has_value());
    ref::Pack& r = both->first;
    gpu::DevicePack& g = both->second;
    poison();
    sp::same("get_all_seq(pack)", gpu::to_host(gpu::get_all_seq(g)), ref::get_all_seq(r));
    poison();
    const auto gp = gpu::get_all_seq_padded(g);
    const auto rp = ref::get_all_seq_padded(r);
    sp::same("all_seq_padded.seq", gpu::to_host(gp.seq), rp.seq);
    sp::same("all_seq_padded.offsets", gp.offsets, rp.offsets);
    sp::same("all_seq_padded.max_len", gp.max_len, rp.max_len);
    sp::Case other = c;
    other.data_seed = c.data_seed + 1;
    const ref::Rows value = sp::case_rows(other);
    ref::set_all_seq(r, value);
    gpu::set_all_seq(g, gpu::to_device(value));
    expect_same_streams(r, g);
    poison();
    const ref::Pack rz = ref::zeros_like(r, 3);
    const gpu::DevicePack gz = gpu::zeros_like(g, 3);
    expect_same_streams(rz, gz);
    poison();
    const ref::Pack rf = ref::from_all_seq(value, r);
    const gpu::DevicePack gf = gpu::from_all_seq(gpu::to_device(value), g);
    expect_same_streams(rf, gf);
  });
}

SEQPACK_PROPERTY(GpuDifferential, ShardsAndGatherMatchTheReference) {
  const sp::Case c = widen(*sp::gen_packer_case());
  on_device(c, [&] {
    auto both = build_both(c);
    RC_ASSERT(both.has_value());
    ref::Pack& r = both->first;
    gpu::DevicePack& g = both->second;
    const std::int64_t world = c.options.cp_world_size;
    std::vector<gpu::DevicePack> shards;
    for (std::int64_t rank = 0; rank < world; ++rank) {
      std::optional<ref::Pack> rs;
      const std::string r_error = refusal([&] { rs = ref::shard_pack(r, rank, world); });
      poison();
      const std::string g_error = refusal([&] { shards.push_back(gpu::shard_pack(g, rank, world)); });
      sp::same("refusal", g_error, r_error);
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
    expect_same_streams(rf0, g0);
  });
}

SEQPACK_PROPERTY(GpuDifferential, PositionIdsMatchTheReference) {
  const sp::Case c = widen(*sp::gen_packer_case());
  on_device(c, [&] {
    auto both = build_both(c);
    RC_ASSERT(both.has_value());
    ref::Pack& r = both->first;
    gpu::DevicePack& g = both->second;
    const bool mrope = *rc::gen::arbitrary<bool>();
    ref::PositionIds ids{mrope, mrope ? 3u : 1u, static_cast<std::size_t>(c.rows), {}};
    ids.values = sp::seeded_values(ids.axes * ids.len);
    const gpu::DevicePositionIds d = gpu::to_device(ids);
    poison();
    sp::same("get_und_position_ids(ids, pack)", gpu::to_host(gpu::get_und_position_ids(d, g)),
             ref::get_und_position_ids(ids, r));
    poison();
    sp::same("get_gen_position_ids(ids, pack)", gpu::to_host(gpu::get_gen_position_ids(d, g)),
             ref::get_gen_position_ids(ids, r));
    const std::int64_t world = c.options.cp_world_size;
    for (std::int64_t rank = 0; rank < world; ++rank) {
      std::optional<ref::PositionIds> rs;
      std::optional<ref::PositionIds> gs;
      const std::string r_error = refusal([&] { rs = ref::shard_position_ids(ids, r, rank, world); });
      poison();
      const std::string g_error = refusal([&] { gs = gpu::to_host(gpu::shard_position_ids(d, g, rank, world)); });
      sp::same("refusal", g_error, r_error);
      if (rs) sp::same("shard_position_ids(ids, pack, rank, world)", *gs, *rs);
    }
  });
}

// A stream of the property's own: on CUDA a non-blocking one (as PyTorch's
// side streams: no implicit order with the legacy default stream), waited for
// and destroyed after every buffer allocated on it (declare it first); the
// empty tag on the host backends.
class OwnStream {
 public:
#ifdef SEQPACK_GPU_CUDA
  OwnStream() {
    const cudaError_t e = cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking);
    if (e != cudaSuccess) throw gpu::DeviceError(std::string("cudaStreamCreateWithFlags: ") + cudaGetErrorName(e));
  }
  ~OwnStream() {
    cudaStreamSynchronize(s_);
    cudaStreamDestroy(s_);
  }
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
#endif
  gpu::Stream get() const { return s_; }

 private:
  gpu::Stream s_{};
};

// Every entry point with the stream argument, on a stream of its own: the
// copies to and from the host are ordered on it and wait for it, and inputs
// destroyed right after a call are freed after the work that reads them.
SEQPACK_PROPERTY(GpuDifferential, EveryEntryPointRunsOnTheCallersStream) {
#ifndef SEQPACK_GPU_CUDA
  // On the host backends the stream is a tag and the other properties run the
  // same code: a quarter of the cases keep the test to seconds.
  RC_SUCCEED_IF(*rc::gen::element(0, 1, 2, 3) != 0);
#endif
  const sp::Case c = widen(*sp::gen_packer_case());
  if (too_large_to_build(c)) return;
  on_device(c, [&] {
    const OwnStream stream;  // outlives every buffer below
    const gpu::Stream s = stream.get();
    const ref::Rows rows = sp::case_rows(c);
    ref::GraphMarks rm = c.marks, gm = c.marks;
    ref::Pack r = ref::build_pack(rows, c.layout, c.options, rm);
    poison();
    const auto meta = std::make_shared<const gpu::DeviceMetadata>(gpu::prepare_metadata(c.layout, s));
    sp::same("meta.causal_indices", gpu::to_host_vector(meta->causal_indices, s), r.meta->causal_indices);
    sp::same("meta.full_only_sample_ids", gpu::to_host_vector(meta->full_only_sample_ids, s),
             r.meta->full_only_sample_ids);
    poison();
    // The input rows die as build_pack returns: freed on s after its work.
    gpu::DevicePack g = gpu::build_pack(gpu::to_device(rows, s), c.layout, c.options, gm, meta, s);
    sp::same("graph marks after the call", gm, rm);
    sp::same("pack.causal_seq", gpu::to_host(g.causal_seq, s), r.causal_seq);
    sp::same("pack.full_only_seq", gpu::to_host(g.full_only_seq, s), r.full_only_seq);
    sp::same("pack.causal_sample_ids", gpu::to_host_vector(g.causal_sample_ids, s), r.causal_sample_ids);
    sp::same("pack.full_only_sample_ids", gpu::to_host_vector(g.full_only_sample_ids, s), r.full_only_sample_ids);
    poison();
    sp::same("get_all_seq(pack)", gpu::to_host(gpu::get_all_seq(g, s), s), ref::get_all_seq(r));
    poison();
    sp::same("all_seq_padded.seq", gpu::to_host(gpu::get_all_seq_padded(g, s).seq, s), ref::get_all_seq_padded(r).seq);
    sp::Case other = c;
    other.data_seed = c.data_seed + 1;
    const ref::Rows value = sp::case_rows(other);
    ref::set_all_seq(r, value);
    gpu::set_all_seq(g, gpu::to_device(value, s), s);
    sp::same("pack.causal_seq", gpu::to_host(g.causal_seq, s), r.causal_seq);
    sp::same("pack.full_only_seq", gpu::to_host(g.full_only_seq, s), r.full_only_seq);
    poison();
    const gpu::DevicePack gf = gpu::from_all_seq(gpu::to_device(value, s), g, s);
    sp::same("from_all_seq(value, pack).full_only_seq", gpu::to_host(gf.full_only_seq, s),
             ref::from_all_seq(value, r).full_only_seq);
    poison();
    sp::same("zeros_like(pack, 5).causal_seq", gpu::to_host(gpu::zeros_like(g, 5, s).causal_seq, s),
             ref::zeros_like(r, 5).causal_seq);
    const std::int64_t world = c.options.cp_world_size;
    ref::PositionIds ids{true, 3, static_cast<std::size_t>(c.rows), {}};
    ids.values = sp::seeded_values(ids.axes * ids.len);
    const gpu::DevicePositionIds d = gpu::to_device(ids, s);
    sp::same("position ids through the device", gpu::to_host(d, s), ids);
    poison();
    sp::same("get_und_position_ids(ids, pack)", gpu::to_host(gpu::get_und_position_ids(d, g, s), s),
             ref::get_und_position_ids(ids, r));
    poison();
    sp::same("get_gen_position_ids(ids, pack)", gpu::to_host(gpu::get_gen_position_ids(d, g, s), s),
             ref::get_gen_position_ids(ids, r));
    std::vector<gpu::DevicePack> shards;
    for (std::int64_t rank = 0; rank < world; ++rank) {
      std::optional<ref::Pack> rs;
      const std::string r_error = refusal([&] { rs = ref::shard_pack(r, rank, world); });
      poison();
      const std::string g_error = refusal([&] { shards.push_back(gpu::shard_pack(g, rank, world, s)); });
      sp::same("refusal", g_error, r_error);
      if (!rs) return;
      sp::same("shard.causal_seq", gpu::to_host(shards.back().causal_seq, s), rs->causal_seq);
      sp::same("shard_position_ids(ids, pack, rank, world)",
               gpu::to_host(gpu::shard_position_ids(d, g, rank, world, s), s),
               ref::shard_position_ids(ids, r, rank, world));
    }
    poison();
    const gpu::DevicePack whole = gpu::gather_shards(shards, s);
    sp::same("gather_shards.causal_seq", gpu::to_host(whole.causal_seq, s), r.causal_seq);
    sp::same("gather_shards.full_only_seq", gpu::to_host(whole.full_only_seq, s), r.full_only_seq);
    sp::same("pack.full_only_sample_ids", gpu::to_host_vector(whole.full_only_sample_ids, s), r.full_only_sample_ids);
  });
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
  // CTest's check of the device-error path (tests/gpu/CMakeLists.txt): the
  // named entry point reports a device error on every backend.
  if (const char* entry = std::getenv("SEQPACK_TEST_INJECT_DEVICE_ERROR")) gpu::inject_device_error(entry);
  ::testing::InitGoogleTest(&argc, argv);
#ifdef SEQPACK_GPU_CUDA
  if (!no_device_reason().empty()) ::testing::GTEST_FLAG(filter) = "Device.IsPresent";
#endif
  return RUN_ALL_TESTS();
}
