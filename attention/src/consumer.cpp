// derive_branches (consumer.hpp): each profile's branches, call for call, built
// from the fields and views that profile reads. CONSUMERS.md derives them;
// the line references in the comments below are the original's
// (../shared/spec/000_a9109b401b6808be.txt, "000:") and cosmos-framework's
// at 5eee9ed (paths under cosmos_framework/model/).
#include "seqpack/attention/consumer.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace seqpack::attention {

const char* consumer_name(ConsumerId id) noexcept {
  switch (id) {
    case ConsumerId::spec:
      return "spec";
    case ConsumerId::cosmos_5eee9ed:
      return "cosmos-5eee9ed";
  }
  return "?";
}

std::optional<ConsumerId> parse_consumer(std::string_view name) noexcept {
  if (name == "spec") return ConsumerId::spec;
  if (name == "cosmos-5eee9ed" || name == "cosmos") return ConsumerId::cosmos_5eee9ed;
  return std::nullopt;
}

const char* kernel_name(Kernel kernel) noexcept { return kernel == Kernel::fa2 ? "fa2" : "fa3"; }

std::optional<Kernel> parse_kernel(std::string_view name) noexcept {
  if (name == "fa2") return Kernel::fa2;
  if (name == "fa3") return Kernel::fa3;
  return std::nullopt;
}

std::string describe(const ConsumerOptions& options) {
  return std::string(consumer_name(options.consumer)) + " on " + kernel_name(options.kernel);
}

std::optional<std::string> spec_dtype(std::string_view field) noexcept {
  static const std::pair<const char*, const char*> kTable[] = {
      {"sample_offsets", "int32"},
      {"causal_seq_offsets", "int32"},
      {"full_only_seq_offsets", "int32"},
      {"pad_segment.causal_seq_offsets", "int32"},
      {"pad_segment.full_only_seq_offsets", "int32"},
      {"pad_segment.sample_offsets", "int32"},
      {"causal_sample_ids", "int64"},
      {"full_only_sample_ids", "int64"},
  };
  for (const auto& [name, dtype] : kTable)
    if (field == name) return std::string(dtype);
  return std::nullopt;
}

namespace {

using I64 = std::vector<std::int64_t>;

// The streams a consumer's attention runs on, and the real-token counts per
// stream position, after context parallelism has sharded and gathered them.
struct Streams {
  RowIds causal, full;
  std::vector<bool> causal_real, full_real;
  std::string refusal;
};

std::vector<bool> prefix_mask(std::size_t n, std::int64_t count) {
  std::vector<bool> m(n, false);
  for (std::size_t i = 0; i < n && static_cast<std::int64_t>(i) < count; ++i) m[i] = true;
  return m;
}

// A stream sharded by context parallelism and gathered back by the
// all-to-all: the ranks' shards concatenated in rank order, each rank's
// token mask its first `local count` rows (unified_mot.py:1087-1095 over
// get_num_real_tokens of the local pack, context_parallel_utils.py:186-192).
bool gather(const ConsumerInput& in, std::int64_t cp, Streams& s) {
  if (static_cast<std::int64_t>(in.cp_shards.size()) != cp) {
    s.refusal = "the cp_shards view has " + std::to_string(in.cp_shards.size()) + " ranks for cp_world_size " +
                std::to_string(cp) + ": the all-to-all cannot gather them";
    return false;
  }
  const std::size_t lc = in.cp_shards.front().causal_rows.size(), lf = in.cp_shards.front().full_only_rows.size();
  s.causal.clear();
  s.full.clear();
  s.causal_real.clear();
  s.full_real.clear();
  for (std::size_t r = 0; r < in.cp_shards.size(); ++r) {
    const ShardView& sh = in.cp_shards[r];
    if (sh.causal_rows.size() != lc || sh.full_only_rows.size() != lf) {
      s.refusal = "rank " + std::to_string(r) + "'s shard holds " + std::to_string(sh.causal_rows.size()) +
                  " causal and " + std::to_string(sh.full_only_rows.size()) + " full rows, rank 0's " +
                  std::to_string(lc) + " and " + std::to_string(lf) +
                  ": the all-to-all needs equal shards (context_parallel_utils.py:427-443)";
      return false;
    }
    s.causal.insert(s.causal.end(), sh.causal_rows.begin(), sh.causal_rows.end());
    s.full.insert(s.full.end(), sh.full_only_rows.begin(), sh.full_only_rows.end());
    const auto cm = prefix_mask(lc, sh.num_causal_local), fm = prefix_mask(lf, sh.num_full_local);
    s.causal_real.insert(s.causal_real.end(), cm.begin(), cm.end());
    s.full_real.insert(s.full_real.end(), fm.begin(), fm.end());
  }
  return true;
}

Streams streams_of(const ConsumerInput& in) {
  Streams s;
  const PackMeta& m = in.meta;
  s.causal = m.causal_rows;
  s.full = m.full_only_rows;
  // get_num_real_tokens (000:843-865): the batch-wide counts on a whole pack;
  // under CP each rank's local count (num_local_real_tokens, 000:826-840),
  // which over the gathered stream is the same prefix.
  const std::int64_t nc = in.num_real_tokens ? (*in.num_real_tokens)[0] : m.num_causal_tokens;
  const std::int64_t nf = in.num_real_tokens ? (*in.num_real_tokens)[1] : m.num_full_tokens;
  s.causal_real = prefix_mask(s.causal.size(), nc);
  s.full_real = prefix_mask(s.full.size(), nf);
  const std::int64_t cp = in.cp_world_size;
  if (cp <= 1) return s;
  // The framework shards only streams that divide (context_parallel_utils.py:147-148, NOTES.md 8).
  if (static_cast<std::int64_t>(s.causal.size()) % cp != 0 || static_cast<std::int64_t>(s.full.size()) % cp != 0) {
    s.refusal = "a padded stream does not divide by cp_world_size " + std::to_string(cp) + " (causal " +
                std::to_string(s.causal.size()) + ", full " + std::to_string(s.full.size()) +
                " rows): the CP sharding asserts (context_parallel_utils.py:147-148)";
    return s;
  }
  if (!in.has_cp_shards) return s;
  if (!in.cp_shards_error.empty()) {
    s.refusal = "the port's CP sharding answers " + in.cp_shards_error + " where the streams divide";
    return s;
  }
  gather(in, cp, s);
  return s;
}

std::vector<Source> stream_sources(StreamId id, std::size_t n) {
  std::vector<Source> src(n);
  for (std::size_t i = 0; i < n; ++i)
    src[i] = {static_cast<std::int8_t>(id == StreamId::causal ? 0 : 1), static_cast<std::int64_t>(i)};
  return src;
}

// get_all_seq (000:639-657) and the padded variant's buffer (000:660-708): a
// new zeroed buffer of `len` rows into which row i of each stream is
// scattered at *_indices[i]; the rows nobody scatters into stay zero and send
// no gradient back. Returns false (with `refusal`) where an index is outside.
bool scatter_streams(const PackMeta& m, const Streams& s, std::size_t len, RowIds& rows, std::vector<Source>& src,
                     std::string& refusal) {
  rows.assign(len, -1);
  src.assign(len, Source{});
  const auto put = [&](const I64& indices, const RowIds& stream, StreamId id, const char* name) {
    for (std::size_t i = 0; i < indices.size() && i < stream.size(); ++i) {
      const std::int64_t pos = indices[i];
      if (pos < 0 || static_cast<std::size_t>(pos) >= len) {
        refusal = std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(pos) + " is outside the " +
                  std::to_string(len) + "-row buffer get_all_seq scatters into (an index error)";
        return false;
      }
      rows[static_cast<std::size_t>(pos)] = stream[i];
      src[static_cast<std::size_t>(pos)] = {static_cast<std::int8_t>(id == StreamId::causal ? 0 : 1),
                                            static_cast<std::int64_t>(i)};
    }
    return true;
  };
  return put(m.causal_indices, s.causal, StreamId::causal, "causal_indices") &&
         put(m.full_indices, s.full, StreamId::full, "full_indices");
}

// Where the rows of a buffer a port's getter returned come from: the stream
// row that holds the same packed row; a padding row (or one no stream holds)
// is a row the getter made.
std::vector<Source> sources_by_identity(const Streams& s, const RowIds& rows) {
  std::map<std::int64_t, Source> at;
  for (std::size_t i = 0; i < s.causal.size(); ++i)
    if (s.causal[i] >= 0) at.emplace(s.causal[i], Source{0, static_cast<std::int64_t>(i)});
  for (std::size_t i = 0; i < s.full.size(); ++i)
    if (s.full[i] >= 0) at.emplace(s.full[i], Source{1, static_cast<std::int64_t>(i)});
  std::vector<Source> src(rows.size());
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const auto it = rows[j] >= 0 ? at.find(rows[j]) : at.end();
    if (it != at.end()) src[j] = it->second;
  }
  return src;
}

Call varlen_call(std::string id, std::string cite, Intent intent, StreamId q_stream, const RowIds& q_rows,
                 RowIds kv_rows, std::vector<Source> kv_src, bool causal) {
  Call c;
  c.id = std::move(id);
  c.cite = std::move(cite);
  c.intent = intent;
  c.q_stream = q_stream;
  c.q_rows = q_rows;
  c.kv_rows = std::move(kv_rows);
  c.kv_src = std::move(kv_src);
  c.args.causal = causal;
  return c;
}

void set_q(Call& c, const I64& cu, std::int64_t max, std::string cu_field, std::string max_field) {
  c.args.cu_seqlens_q = cu;
  c.args.max_seqlen_q = max;
  c.cu_q_field = std::move(cu_field);
  c.max_q_field = std::move(max_field);
}

void set_k(Call& c, const I64& cu, std::int64_t max, std::string cu_field, std::string max_field) {
  c.args.cu_seqlens_k = cu;
  c.args.max_seqlen_k = max;
  c.cu_k_field = std::move(cu_field);
  c.max_k_field = std::move(max_field);
}

// One stream's offsets and maximum as a getter hands them over: the port's
// view where it returned one, else the pad-segment variant when `pad`, else
// the plain fields.
struct Offsets {
  I64 cu;
  std::int64_t max = 0;
  std::string cu_field, max_field;
};

Offsets causal_offsets(const ConsumerInput& in, bool pad, bool use_view) {
  const PackMeta& m = in.meta;
  if (use_view && in.causal_padded)
    return {in.causal_padded->offsets, in.causal_padded->max_len, "views.getters.causal_padded.offsets",
            "views.getters.causal_padded.max_len"};
  if (pad && m.pad_segment)
    return {m.pad_segment->causal_seq_offsets, m.pad_segment->max_causal_len, "pad_segment.causal_seq_offsets",
            "pad_segment.max_causal_len"};
  return {m.causal_seq_offsets, m.max_causal_len, "causal_seq_offsets", "max_causal_len"};
}

Offsets full_offsets(const ConsumerInput& in, bool pad, bool use_view) {
  const PackMeta& m = in.meta;
  if (use_view && in.full_only_padded)
    return {in.full_only_padded->offsets, in.full_only_padded->max_len, "views.getters.full_only_padded.offsets",
            "views.getters.full_only_padded.max_len"};
  if (pad && m.pad_segment)
    return {m.pad_segment->full_only_seq_offsets, m.pad_segment->max_full_len, "pad_segment.full_only_seq_offsets",
            "pad_segment.max_full_len"};
  return {m.full_only_seq_offsets, m.max_full_len, "full_only_seq_offsets", "max_full_len"};
}

Call causal_call(const ConsumerInput& in, const Streams& s, const Offsets& o, std::string cite) {
  Call c = varlen_call("causal", std::move(cite), Intent::causal_self, StreamId::causal, s.causal, s.causal,
                       stream_sources(StreamId::causal, s.causal.size()), true);
  set_q(c, o.cu, o.max, o.cu_field, o.max_field);
  set_k(c, o.cu, o.max, o.cu_field, o.max_field);
  (void)in;
  return c;
}

Call self_call(std::string id, std::string cite, Intent intent, const Streams& s, const Offsets& o) {
  Call c = varlen_call(std::move(id), std::move(cite), intent, StreamId::full, s.full, s.full,
                       stream_sources(StreamId::full, s.full.size()), false);
  set_q(c, o.cu, o.max, o.cu_field, o.max_field);
  set_k(c, o.cu, o.max, o.cu_field, o.max_field);
  return c;
}

Call cross_call(std::string cite, const Streams& s, const Offsets& q, const Offsets& k) {
  Call c = varlen_call("full_ca", std::move(cite), Intent::gen_to_und, StreamId::full, s.full, s.causal,
                       stream_sources(StreamId::causal, s.causal.size()), false);
  set_q(c, q.cu, q.max, q.cu_field, q.max_field);
  set_k(c, k.cu, k.max, k.cu_field, k.max_field);
  c.merge = true;
  return c;
}

// The fused key stream [UND | GEN] of the FlexAttention route: the causal
// stream, then the full stream, each padded (attention.py:286-296; 000:356-362).
Call flex_call(std::string cite, const Streams& s, I64 q_ids, I64 kv_ids) {
  Call c;
  c.id = "flex_gen";
  c.cite = std::move(cite);
  c.intent = Intent::gen_fused;
  c.route = Route::flex;
  c.q_stream = StreamId::full;
  c.q_rows = s.full;
  c.kv_rows = s.causal;
  c.kv_rows.insert(c.kv_rows.end(), s.full.begin(), s.full.end());
  c.kv_src = stream_sources(StreamId::causal, s.causal.size());
  const auto f = stream_sources(StreamId::full, s.full.size());
  c.kv_src.insert(c.kv_src.end(), f.begin(), f.end());
  c.q_ids = std::move(q_ids);
  c.kv_ids = std::move(kv_ids);
  return c;
}

I64 ids_for(const I64& ids, std::size_t n, std::int64_t fill) {
  I64 out(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(std::min(n, ids.size())));
  out.resize(n, fill);
  return out;
}

// cosmos flex_attention.py:199-221 (_build_stream_sample_ids): a position's id
// is the segment of `offsets` it falls in, -1 at or past offsets[-1].
I64 ids_from_offsets(const I64& offsets, std::size_t n) {
  I64 ids(n, -1);
  if (offsets.empty()) return ids;
  const std::int64_t real = offsets.back();
  for (std::size_t p = 0; p < n; ++p) {
    const auto pos = static_cast<std::int64_t>(p);
    if (pos >= real) break;
    // searchsorted(offsets[1:], p, right=True)
    ids[p] =
        static_cast<std::int64_t>(std::upper_bound(offsets.begin() + 1, offsets.end(), pos) - (offsets.begin() + 1));
  }
  return ids;
}

Branch base_branch(std::string name, const ConsumerInput& in, const Streams& s) {
  Branch b;
  b.name = std::move(name);
  b.refusal = s.refusal;
  b.causal_rows = s.causal;
  b.full_rows = s.full;
  b.causal_tokens.real = s.causal_real;
  b.full_tokens.real = s.full_real;
  b.causal_tokens.sample_ids = ids_for(in.meta.causal_sample_ids, s.causal.size(), -2);
  b.full_tokens.sample_ids = ids_for(in.meta.full_only_sample_ids, s.full.size(), -2);
  const bool local = in.cp_world_size > 1 && in.has_cp_shards;
  b.causal_tokens.mask_field = local                ? "views.cp_shards[].num_causal_tokens_local"
                               : in.num_real_tokens ? "views.getters.num_real_tokens[0]"
                                                    : "num_causal_tokens";
  b.full_tokens.mask_field = local                ? "views.cp_shards[].num_full_tokens_local"
                             : in.num_real_tokens ? "views.getters.num_real_tokens[1]"
                                                  : "num_full_tokens";
  b.causal_tokens.ids_field = "causal_sample_ids";
  b.full_tokens.ids_field = "full_only_sample_ids";
  b.num_samples = in.meta.num_samples();
  b.rope_causal_rows = static_cast<std::int64_t>(in.meta.causal_indices.size());
  b.rope_full_rows = static_cast<std::int64_t>(in.meta.full_indices.size());
  return b;
}

// A refusal before any kernel: the dtypes a consumer's calls check
// (FlashAttention's cu_seqlens int32 CHECK_DTYPE; cosmos attention/checks.py:366-370).
std::string dtype_refusal(const ConsumerInput& in) {
  for (const auto& [field, dtype] : in.dtypes) {
    if (field.find("offsets") == std::string::npos) continue;
    const auto want = spec_dtype(field);
    if (want && *want != dtype)
      return field + " is " + dtype +
             ": varlen attention takes int32 cu_seqlens only (FlashAttention's CHECK_DTYPE; cosmos "
             "attention/checks.py:366-370)";
  }
  return {};
}

std::vector<Branch> spec_branches(const ConsumerInput& in, const Streams& s) {
  const PackMeta& m = in.meta;
  const bool pad = m.pad_segment.has_value();
  const Offsets co = causal_offsets(in, true, true), fo = full_offsets(in, true, true);
  std::vector<Branch> out;
  // Two-way, dense: the causal tower's own pass over get_causal_seq_padded
  // (000:770-795), and GEN queries keyed against the interleaved stream
  // (000:474-481, 660-708), a GEN segment paired with its own sample's keys
  // (the assertion at 000:488-494).
  {
    Branch b = base_branch("two_way", in, s);
    b.calls.push_back(causal_call(in, s, co, "000:770-795 get_causal_seq_padded"));
    Call g = varlen_call("gen_dense", "000:474-494, 660-708 get_all_seq_padded", Intent::gen_to_all, StreamId::full,
                         s.full, {}, {}, false);
    set_q(g, fo.cu, fo.max, fo.cu_field, fo.max_field);
    if (in.all_seq_padded) {
      // The port's getter: each row's data comes from the stream row that holds its identity.
      g.kv_rows = in.all_seq_padded->rows;
      g.kv_src = sources_by_identity(s, g.kv_rows);
      set_k(g, in.all_seq_padded->offsets, in.all_seq_padded->max_len, "views.all_seq_padded.offsets",
            "views.all_seq_padded.max_len");
    } else {
      const std::size_t len = pad ? s.causal.size() + s.full.size() : m.causal_indices.size() + m.full_indices.size();
      std::string refusal;
      if (!scatter_streams(m, s, len, g.kv_rows, g.kv_src, refusal) && b.refusal.empty()) b.refusal = refusal;
      if (pad)
        set_k(g, m.pad_segment->sample_offsets, m.pad_segment->max_sample_len, "pad_segment.sample_offsets",
              "pad_segment.max_sample_len");
      else
        set_k(g, m.sample_offsets, m.max_sample_len, "sample_offsets", "max_sample_len");
    }
    b.calls.push_back(std::move(g));
    out.push_back(std::move(b));
  }
  // Two-way through FlexAttention: GEN queries against [UND | GEN] by the
  // padded sample ids (000:356-362; padding carries num_samples, 000:426-438).
  {
    Branch b = base_branch("two_way_flex", in, s);
    b.calls.push_back(causal_call(in, s, co, "000:770-795 get_causal_seq_padded"));
    I64 kv = ids_for(m.causal_sample_ids, s.causal.size(), -2);
    const I64 q = ids_for(m.full_only_sample_ids, s.full.size(), -2);
    kv.insert(kv.end(), q.begin(), q.end());
    b.calls.push_back(flex_call("000:356-362 (the fused FlexAttention path)", s, q, kv));
    out.push_back(std::move(b));
  }
  // Three-way: the GEN tower's own pass over get_full_only_seq_padded
  // (000:798-823) and the gen->und pass pairing GEN and und segments
  // (000:398-402, 454-457), merged by their LSEs.
  {
    Branch b = base_branch("three_way", in, s);
    b.calls.push_back(causal_call(in, s, co, "000:770-795 get_causal_seq_padded"));
    Call sa = self_call("full_sa", "000:798-823 get_full_only_seq_padded", Intent::gen_self, s, fo);
    sa.merge = true;
    b.calls.push_back(std::move(sa));
    b.calls.push_back(cross_call("000:398-402, 454-457 (the gen->und pass)", s, fo, co));
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<Branch> cosmos_branches(const ConsumerInput& in, const ConsumerInput& truth, const Streams& s) {
  const PackMeta& m = in.meta;
  const bool pad = m.pad_segment.has_value();
  // two_way_attention switches its causal pass to the pad-segment offsets when
  // the pack has them (attention.py:228-238); three_way_attention switches
  // every pass (attention.py:397-419). The wire's pad segment is one object.
  const Offsets co = causal_offsets(in, pad, false), fo_pad = full_offsets(in, pad, false);
  const Offsets fo_plain = full_offsets(in, false, false);
  std::vector<Branch> out;
  const auto causal = [&](const Offsets& o, const char* cite) {
    Call c = causal_call(in, s, o, cite);
    c.frontend_checks = true;
    return c;
  };
  // Two-way, dense (the default joint attention): GEN queries with the plain
  // full offsets against get_all_seq's real rows and the plain sample_offsets
  // (attention.py:298-311). Training always takes the varlen call
  // (_varlen_kwargs, attention.py:169-176).
  {
    Branch b = base_branch("two_way", in, s);
    b.calls.push_back(causal(co, "attention.py:214-267 two_way_attention"));
    Call g = varlen_call("gen_dense", "attention.py:298-311 two_way_attention", Intent::gen_to_all, StreamId::full,
                         s.full, {}, {}, false);
    set_q(g, fo_plain.cu, fo_plain.max, fo_plain.cu_field, fo_plain.max_field);
    std::string refusal;
    const std::size_t len = m.causal_indices.size() + m.full_indices.size();
    if (!scatter_streams(m, s, len, g.kv_rows, g.kv_src, refusal) && b.refusal.empty()) b.refusal = refusal;
    if (in.all_seq_rows) g.kv_rows = *in.all_seq_rows;
    set_k(g, m.sample_offsets, m.max_sample_len, "sample_offsets", "max_sample_len");
    g.frontend_checks = true;
    b.calls.push_back(std::move(g));
    out.push_back(std::move(b));
  }
  // Two-way through FlexAttention (multiview): ids from the plain offsets,
  // padding -1 (flex_attention.py:199-221, built from get_full_only_seq and
  // get_causal_seq in cosmos3_vfm_network.py:1240-1257); both streams must be
  // multiples of the mask's block (flex_attention.py:1178-1179).
  {
    Branch b = base_branch("two_way_flex", in, s);
    b.calls.push_back(causal(co, "attention.py:214-267 two_way_attention"));
    const I64 q = ids_from_offsets(m.full_only_seq_offsets, s.full.size());
    I64 kv = ids_from_offsets(m.causal_seq_offsets, s.causal.size());
    kv.insert(kv.end(), q.begin(), q.end());
    Call f = flex_call("attention.py:286-296, flex_attention.py:1089-1211", s, q, kv);
    f.q_block = m.full_seq_alignment;
    f.kv_block = m.causal_seq_alignment;
    b.calls.push_back(std::move(f));
    out.push_back(std::move(b));
  }
  // Three-way, dense GEN self-attention (no NATTEN metadata): merged with the
  // gen->und cross-attention by LSE (attention.py:451-476).
  {
    Branch b = base_branch("three_way", in, s);
    b.calls.push_back(causal(co, "attention.py:424-434 three_way_attention"));
    Call sa = self_call("full_sa", "attention.py:451-460 three_way_attention", Intent::gen_self, s, fo_pad);
    sa.frontend_checks = true;
    sa.merge = true;
    b.calls.push_back(std::move(sa));
    Call ca = cross_call("attention.py:462-471 three_way_attention", s, fo_pad, co);
    ca.frontend_checks = true;
    b.calls.push_back(std::move(ca));
    out.push_back(std::move(b));
  }
  // Three-way with NATTEN metadata: the GEN self-attention's segments come from
  // the samples' token shapes, not from the pack (attention.py:440-446,
  // sequence_packing/natten.py:234-437): the real GEN rows of each sample.
  {
    Branch b = base_branch("three_way_natten", in, s);
    b.calls.push_back(causal(co, "attention.py:424-434 three_way_attention"));
    Call sa = self_call("full_sa", "attention.py:440-446 (NATTEN, segments from token shapes)", Intent::gen_self, s,
                        {truth.meta.full_only_seq_offsets, truth.meta.max_full_len, "the samples' token shapes",
                         "the samples' token shapes"});
    sa.route = Route::natten;
    sa.merge = true;
    b.calls.push_back(std::move(sa));
    Call ca = cross_call("attention.py:462-471 three_way_attention", s, fo_pad, co);
    ca.frontend_checks = true;
    b.calls.push_back(std::move(ca));
    out.push_back(std::move(b));
  }
  for (Branch& b : out) b.rope_pads_identity = in.cp_world_size > 1;
  return out;
}

}  // namespace

std::vector<Branch> derive_branches(const ConsumerInput& input, const ConsumerInput& truth,
                                    const ConsumerOptions& options) {
  const Streams s = streams_of(input);
  std::vector<Branch> out =
      options.consumer == ConsumerId::spec ? spec_branches(input, s) : cosmos_branches(input, truth, s);
  const std::string dtype = dtype_refusal(input);
  for (Branch& b : out) {
    if (options.consumer == ConsumerId::spec) {
      // The text's consumer runs a tower's pass only where that tower has rows
      // or segments, and the gen->und pass only where the pack has und
      // segments (PASSES.md, choices 2 and 3).
      const auto empty = [&](const Call& c) {
        if (c.route == Route::flex) return c.q_rows.empty();
        const bool no_q = c.q_rows.empty() && c.args.cu_seqlens_q.segments() == 0;
        const bool no_und = c.id == "full_ca" && input.meta.causal_seq_offsets.size() <= 1;
        return no_q || no_und;
      };
      b.calls.erase(std::remove_if(b.calls.begin(), b.calls.end(), empty), b.calls.end());
    }
    // A merge needs both sides; a lone side is an ordinary call.
    if (std::count_if(b.calls.begin(), b.calls.end(), [](const Call& c) { return c.merge; }) < 2)
      for (Call& c : b.calls) c.merge = false;
    if (b.refusal.empty() && !dtype.empty()) b.refusal = dtype;
    // The spec's own text names no RoPE; its layer has no zero factor on
    // padding rows ("no zero factor to cancel them", 000:450-455, 752-756).
    if (options.consumer == ConsumerId::spec) b.rope_pads_identity = true;
    for (Call& c : b.calls) {
      if (c.route == Route::flex) continue;
      // NATTEN's own kernels compute every row of its segments.
      c.args.grid_block = options.kernel == Kernel::fa2 && c.route == Route::varlen ? kFa2GridBlock : 0;
      c.args.minus_inf_empty_lse = options.kernel == Kernel::fa3;
    }
  }
  return out;
}

}  // namespace seqpack::attention
