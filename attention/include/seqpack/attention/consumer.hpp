// The consumers a pack is judged against, each modelled call for call and
// branch for branch: `spec` (the consumer the original's text describes) and
// `cosmos-5eee9ed` (NVIDIA/cosmos-framework at 5eee9ed, the public framework
// that reads these packs). CONSUMERS.md in this folder derives every call,
// offset, maximum, mask, LSE use and refusal with the line it rests on. What
// a branch does with the rows is judged by consumer_judge.hpp; the layer
// around attention is layer.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seqpack/attention/pack_meta.hpp"
#include "seqpack/attention/passes.hpp"
#include "seqpack/attention/varlen.hpp"

namespace seqpack::attention {

/// A consumer profile.
enum class ConsumerId : std::uint8_t { spec, cosmos_5eee9ed };
/// "spec", "cosmos-5eee9ed".
const char* consumer_name(ConsumerId id) noexcept;
/// The profile named `name`, or nullopt.
std::optional<ConsumerId> parse_consumer(std::string_view name) noexcept;

/// The attention kernel behind every varlen call, a parameter of both
/// profiles: what a query row with no key gets as its LSE (+inf in FA2, -inf
/// in FA3), how the grid covers a segment (FA2: blocks from max_seqlen_*; FA3:
/// from cu_seqlens), and what the kernel refuses (VARLEN.md points 3-4, 8-9).
enum class Kernel : std::uint8_t { fa2, fa3 };
/// "fa2", "fa3".
const char* kernel_name(Kernel kernel) noexcept;
std::optional<Kernel> parse_kernel(std::string_view name) noexcept;

/// Rows of one block of FA2's grid on the worst build (64; 128 on others):
/// a row past max_seqlen_* is dropped only when the shortfall crosses a block.
inline constexpr std::int64_t kFa2GridBlock = 64;

/// Which consumer, on which kernel. The default is the real consumer on the
/// kernel it selects on Hopper (flash3; its flash2 refuses varlen calls):
/// CONSUMERS.md, "Which profile is the default".
struct ConsumerOptions {
  ConsumerId consumer = ConsumerId::cosmos_5eee9ed;
  Kernel kernel = Kernel::fa3;
};
/// "cosmos-5eee9ed on fa3".
std::string describe(const ConsumerOptions& options);

/// A stream as a getter returns it: rows (packed row or -1), offsets, maximum.
struct StreamView {
  RowIds rows;
  std::vector<std::int64_t> offsets;
  std::int64_t max_len = 0;
};

/// One rank's shard as the `cp_shards` view gives it.
struct ShardView {
  RowIds causal_rows;
  RowIds full_only_rows;
  std::int64_t num_causal_local = 0;
  std::int64_t num_full_local = 0;
};

/// What a consumer reads of one answer: the pack's fields and, where the port
/// declared them, the views it returned (a view left out is computed from the
/// pack's fields as the spec's getter would, so only what the port returned is
/// judged). Field names are the wire's (protocol/PROTOCOL.md).
struct ConsumerInput {
  PackMeta meta;
  std::int64_t cp_world_size = 1;
  std::optional<StreamView> all_seq_padded;                    ///< view all_seq_padded
  std::optional<RowIds> all_seq_rows;                          ///< view getters.all_seq_rows (get_all_seq)
  std::optional<StreamView> causal_padded, full_only_padded;   ///< view getters
  std::optional<std::array<std::int64_t, 2>> num_real_tokens;  ///< view getters.num_real_tokens
  bool has_cp_shards = false;                                  ///< view cp_shards returned
  std::string cp_shards_error;                                 ///< "not_divisible", or ""
  std::vector<ShardView> cp_shards;
  std::map<std::string, std::string> dtypes;  ///< view dtypes: field -> "int32"/"int64"; empty when absent
};

/// The dtype the spec gives each pack field a consumer reads as a tensor
/// (NOTES.md section 1: offsets and indices int32, sample ids int64).
std::optional<std::string> spec_dtype(std::string_view field) noexcept;

/// What a call means for a real query row: the keys it should see.
enum class Intent : std::uint8_t {
  causal_self,  ///< its own causal split, up to itself
  gen_self,     ///< its own full split
  gen_to_und,   ///< its sample's causal rows
  gen_to_all,   ///< its sample's rows in packed order
  gen_fused,    ///< its sample's causal rows, then its full rows
};

/// How a call runs.
enum class Route : std::uint8_t { varlen, flex, natten };

/// The two streams of a pack (the layer's und and gen towers).
enum class StreamId : std::uint8_t { causal, full };

/// Where a key/value row of a call comes from: a row of a stream, or a row the
/// consumer made itself (get_all_seq_padded's zero tail): `stream` -1, and
/// no gradient flows back from it.
struct Source {
  std::int8_t stream = -1;  ///< 0 causal, 1 full, -1 made
  std::int64_t row = -1;
};

/// One attention call of a branch.
struct Call {
  std::string id;    ///< "causal", "gen_dense", "full_sa", "full_ca", "flex_gen"
  std::string cite;  ///< where the consumer makes it, e.g. "attention.py:306-311"
  Intent intent = Intent::causal_self;
  Route route = Route::varlen;
  StreamId q_stream = StreamId::causal;
  RowIds q_rows;                                                 ///< the query rows' identities
  RowIds kv_rows;                                                ///< the key/value rows' identities
  std::vector<Source> kv_src;                                    ///< where each key/value row comes from
  VarlenArgs args;                                               ///< varlen and natten
  std::string cu_q_field, cu_k_field, max_q_field, max_k_field;  ///< wire names, for messages
  std::vector<std::int64_t> q_ids, kv_ids;                       ///< flex: same id attends
  std::int64_t q_block = 0, kv_block = 0;  ///< flex: the block the route refuses to misalign (0: not checked)
  bool frontend_checks = false;            ///< cosmos's attention/checks.py runs before the kernel
  bool merge = false;                      ///< merged by LSE with the branch's other merge call
};

/// A token mask and the sample ids of one stream as the layer reads them.
struct StreamTokens {
  std::vector<bool> real;                ///< the MLP's token mask: true where the row is taken as real
  std::vector<std::int64_t> sample_ids;  ///< the MoE per-sample statistics' ids
  std::string mask_field, ids_field;     ///< wire names, for messages
};

/// One path a training step can take through the consumer.
struct Branch {
  std::string name;     ///< "two_way", "two_way_flex", "three_way", "three_way_natten"
  std::string refusal;  ///< refused before any call (a CP assertion, a dtype check), with its line
  std::vector<Call> calls;
  RowIds causal_rows, full_rows;  ///< the streams the layer runs on (gathered under CP)
  StreamTokens causal_tokens, full_tokens;
  bool rope_pads_identity = false;  ///< padding rows' RoPE is cos 1, sin 0 (CP); else cos = sin = 0
  /// Rows of each stream that RoPE's cos/sin cover (from_all_seq gathers them by
  /// *_indices and zero-pads the rest): the rest rotate by 0 unless rope_pads_identity.
  std::int64_t rope_causal_rows = 0, rope_full_rows = 0;
  std::int64_t num_samples = 0;
};

/// The branches of `options.consumer` over `input`, each call built from the
/// fields and views that consumer reads. `truth` (the reference's answer for
/// the same case) supplies what a consumer takes from elsewhere than the pack
/// (the NATTEN metadata's token counts). Never throws for a malformed pack: a
/// branch that cannot be built carries its refusal.
std::vector<Branch> derive_branches(const ConsumerInput& input, const ConsumerInput& truth,
                                    const ConsumerOptions& options);

}  // namespace seqpack::attention
