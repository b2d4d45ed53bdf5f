// Fuzz target: context-parallel sharding on decoded packs. For the case's cp
// size and a world size taken from the last input byte: every rank's shard
// (its slice of each stream and sample-id vector, its local real-token
// counts), gather back to the whole pack, from_all_seq on a shard, sharded
// position ids 1-D and 3-D against their definition, and the GPU
// implementation's shards and position ids against the reference's.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "seqpack/fuzz/decode.hpp"
#include "seqpack/gpu/pack.hpp"
#include "seqpack/reference/reference.hpp"

namespace {

namespace sf = seqpack::fuzz;
namespace ref = seqpack::reference;
namespace gpu = seqpack::gpu;
using seqpack::protocol::Case;

bool same_rows(const ref::Rows& part, const ref::Rows& whole, std::size_t first) {
  return part.row_bytes() == whole.row_bytes() && first + part.rows() <= whole.rows() &&
         (part.size_bytes() == 0 || std::memcmp(part.data(), whole.row(first), part.size_bytes()) == 0);
}

template <typename T>
bool same_slice(const std::vector<T>& part, const std::vector<T>& whole, std::size_t first) {
  return first + part.size() <= whole.size() &&
         std::equal(part.begin(), part.end(), whole.begin() + static_cast<std::ptrdiff_t>(first));
}

// The error class that f throws, or "" when it returns.
template <typename F>
std::string error_class(F&& f) {
  try {
    f();
  } catch (const ref::Error& e) {
    return ref::to_string(e.code());
  }
  return "";
}

void check_world(const Case& c, const ref::Pack& pack, const gpu::DevicePack& device, std::int64_t world) {
  const std::string w = " (world " + std::to_string(world) + ")";
  std::vector<ref::Pack> shards;
  try {
    shards = ref::shard_pack_all(pack, world);
  } catch (const ref::Error& e) {
    // Only an indivisible stream may refuse; the GPU implementation must agree.
    if (e.code() != ref::Errc::not_divisible)
      sf::report("cp: shard_pack_all failed with " + std::string(ref::to_string(e.code())) + w, c);
    if (pack.causal_seq.rows() % static_cast<std::size_t>(world) == 0 &&
        pack.full_only_seq.rows() % static_cast<std::size_t>(world) == 0) {
      sf::report("cp: not_divisible on divisible streams" + w, c);
    }
    try {
      gpu::shard_pack(device, 0, world);
      sf::report("cp: gpu shard_pack accepted an indivisible world" + w, c);
    } catch (const ref::Error& g) {
      if (g.code() != e.code()) sf::report("cp: gpu shard_pack error class differs" + w, c);
    }
    return;
  }
  const std::size_t lc = pack.causal_seq.rows() / static_cast<std::size_t>(world);
  const std::size_t lf = pack.full_only_seq.rows() / static_cast<std::size_t>(world);
  std::int64_t real_c = 0, real_f = 0;
  // Position ids with distinct values: axis a, position p -> a * 2^32 + p + 1.
  ref::PositionIds ids1{false, 1, static_cast<std::size_t>(c.rows), {}},
      ids3{true, 3, static_cast<std::size_t>(c.rows), {}};
  for (std::int64_t p = 0; p < c.rows; ++p) ids1.values.push_back(p + 1);
  for (std::int64_t a = 0; a < 3; ++a) {
    for (std::int64_t p = 0; p < c.rows; ++p) ids3.values.push_back((a << 32) + p + 1);
  }
  const ref::Metadata& m = *pack.meta;
  for (std::int64_t rank = 0; rank < world; ++rank) {
    const ref::Pack& s = shards[static_cast<std::size_t>(rank)];
    const std::string at = " at rank " + std::to_string(rank) + w;
    const auto r = static_cast<std::size_t>(rank);
    if (!s.is_sharded || s.causal_seq.rows() != lc || s.full_only_seq.rows() != lf)
      sf::report("cp: shard shape" + at, c);
    if (!same_rows(s.causal_seq, pack.causal_seq, r * lc) || !same_rows(s.full_only_seq, pack.full_only_seq, r * lf)) {
      sf::report("cp: shard rows are not the rank's slice" + at, c);
    }
    if (!same_slice(s.causal_sample_ids, pack.causal_sample_ids, r * lc) ||
        !same_slice(s.full_only_sample_ids, pack.full_only_sample_ids, r * lf)) {
      sf::report("cp: shard sample ids are not the rank's slice" + at, c);
    }
    const auto [nc, nf] = ref::get_num_real_tokens(s);
    const auto clamp = [](std::int64_t n, std::size_t first, std::size_t len) {
      return std::max<std::int64_t>(
          0, std::min<std::int64_t>(static_cast<std::int64_t>(len), n - static_cast<std::int64_t>(first)));
    };
    if (nc != clamp(m.num_causal_tokens, r * lc, lc) || nf != clamp(m.num_full_tokens, r * lf, lf)) {
      sf::report("cp: local real-token counts" + at, c);
    }
    real_c += nc;
    real_f += nf;
    // from_all_seq on a shard: [local causal ; local full] back into the shard.
    ref::Rows joined(lc + lf, s.causal_seq.row_bytes());
    if (s.causal_seq.size_bytes()) std::memcpy(joined.data(), s.causal_seq.data(), s.causal_seq.size_bytes());
    if (s.full_only_seq.size_bytes()) std::memcpy(joined.row(lc), s.full_only_seq.data(), s.full_only_seq.size_bytes());
    const ref::Pack back = ref::from_all_seq(joined, s);
    if (back.causal_seq != s.causal_seq || back.full_only_seq != s.full_only_seq)
      sf::report("cp: from_all_seq on a shard" + at, c);
    // Sharded position ids against their definition.
    for (const ref::PositionIds* ids : {&ids1, &ids3}) {
      const ref::PositionIds got = ref::shard_position_ids(*ids, pack, rank, world);
      ref::PositionIds want{ids->two_dimensional, ids->axes, lc + lf, {}};
      for (std::size_t a = 0; a < ids->axes; ++a) {
        const auto id = [&](const std::vector<std::int32_t>& index, std::size_t i) -> std::int64_t {
          return i < index.size() ? ids->values[a * ids->len + static_cast<std::size_t>(index[i])] : 0;
        };
        for (std::size_t i = r * lc; i < (r + 1) * lc; ++i) want.values.push_back(id(m.causal_indices, i));
        for (std::size_t i = r * lf; i < (r + 1) * lf; ++i) want.values.push_back(id(m.full_indices, i));
      }
      if (!(got == want)) sf::report("cp: shard_position_ids" + at, c);
      if (!(gpu::to_host(gpu::shard_position_ids(gpu::to_device(*ids), device, rank, world)) == want)) {
        sf::report("cp: gpu shard_position_ids" + at, c);
      }
    }
    const gpu::DevicePack gs = gpu::shard_pack(device, rank, world);
    if (gpu::to_host(gs.causal_seq) != s.causal_seq || gpu::to_host(gs.full_only_seq) != s.full_only_seq ||
        gpu::to_host_vector(gs.causal_sample_ids) != s.causal_sample_ids ||
        gs.num_causal_tokens_local != s.num_causal_tokens_local ||
        gs.num_full_tokens_local != s.num_full_tokens_local) {
      sf::report("cp: gpu shard differs" + at, c);
    }
  }
  if (real_c != m.num_causal_tokens || real_f != m.num_full_tokens)
    sf::report("cp: local counts do not sum to the real tokens" + w, c);
  const ref::Pack whole = ref::gather_shards(shards);
  if (whole.causal_seq != pack.causal_seq || whole.full_only_seq != pack.full_only_seq ||
      whole.causal_sample_ids != pack.causal_sample_ids || whole.full_only_sample_ids != pack.full_only_sample_ids ||
      whole.is_sharded || !(whole.pad_segment == pack.pad_segment)) {
    sf::report("cp: gather_shards is not the whole pack" + w, c);
  }
  try {
    ref::get_all_seq(shards.front());
    sf::report("cp: get_all_seq accepted a shard" + w, c);
  } catch (const ref::Error& e) {
    if (e.code() != ref::Errc::sharded_pack) sf::report("cp: get_all_seq on a shard: wrong class" + w, c);
  }
  // Position ids need the whole pack, and one id per packed token: the
  // refusals, in the reference and the GPU implementation alike.
  const gpu::DevicePack gshard = gpu::shard_pack(device, 0, world);
  ref::PositionIds short_ids = ids1;
  short_ids.values.push_back(0);
  ++short_ids.len;
  ref::PositionIds flat3 = ids3;
  flat3.two_dimensional = false;
  const struct {
    const char* what;
    const ref::PositionIds& ids;
    bool sharded;
    ref::Errc want;
  } misuse[] = {{"on a shard", ids1, true, ref::Errc::sharded_pack},
                {"with one id too many", short_ids, false, ref::Errc::invalid_argument},
                {"1-D with three axes", flat3, false, ref::Errc::invalid_argument}};
  for (const auto& m : misuse) {
    for (const bool und : {true, false}) {
      const std::string at = std::string(und ? "get_und_position_ids " : "get_gen_position_ids ") + m.what + w;
      const ref::Pack& target = m.sharded ? shards.front() : pack;
      const gpu::DevicePack& gtarget = m.sharded ? gshard : device;
      const auto r_class = error_class(
          [&] { und ? ref::get_und_position_ids(m.ids, target) : ref::get_gen_position_ids(m.ids, target); });
      const auto g_class = error_class([&] {
        const gpu::DevicePositionIds d = gpu::to_device(m.ids);
        und ? gpu::get_und_position_ids(d, gtarget) : gpu::get_gen_position_ids(d, gtarget);
      });
      if (r_class != ref::to_string(m.want)) sf::report("cp: " + at + ": got '" + r_class + "'", c);
      if (g_class != r_class)
        sf::report("cp: gpu " + at + ": got '" + g_class + "', the reference '" + r_class + "'", c);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Case c = sf::decode_case(data, size, sf::kShardBudget);
  if (!sf::small_enough(c, sf::kShardBudget)) return 0;
  const ref::Rows rows = seqpack::protocol::case_rows(c);
  ref::GraphMarks marks = c.marks, gmarks = c.marks;
  std::optional<ref::Pack> pack;
  try {
    pack = ref::build_pack(rows, c.layout, c.options, marks);
  } catch (const ref::Error&) {
    return 0;  // the other targets check the errors
  }
  const gpu::DevicePack device = gpu::build_pack(gpu::to_device(rows), c.layout, c.options, gmarks);
  check_world(c, *pack, device, c.options.cp_world_size);
  const std::int64_t other = size > 1 ? 1 + data[size - 1] % 12 : 2;
  if (other != c.options.cp_world_size) check_world(c, *pack, device, other);
  return 0;
}
