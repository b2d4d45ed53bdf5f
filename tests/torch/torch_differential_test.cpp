// The LibTorch binding against the reference, bit for bit, for every dtype
// the issue lists and trailing shapes [N], [N, D] and [N, H, D], contiguous
// or not (label torch). The rows are random bytes (NaN payloads included for
// the float types; 0/1 for bool, whose other bytes are not valid values).
#include <cstdlib>
#include <cstring>
#include <functional>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "seqpack/attention/consequences.hpp"
#include "seqpack/properties/catalogue.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/properties/verdict.hpp"
#include "seqpack/reference/reference.hpp"
#include "seqpack/torch/sequence_pack.hpp"

namespace {

namespace ref = seqpack::reference;
namespace sp = seqpack::properties;
namespace tb = seqpack::torch_binding;

const at::ScalarType kDtypes[] = {at::kFloat, at::kDouble, at::kBFloat16, at::kHalf,
                                  at::kLong,  at::kInt,    at::kBool,     at::kByte};

// A tensor of `rows` rows of dtype `type` and trailing shape `trailing`, filled
// from random bytes; non-contiguous when `strided`.
at::Tensor random_rows(std::int64_t rows, at::ScalarType type, const std::vector<std::int64_t>& trailing,
                       bool strided) {
  std::vector<std::int64_t> sizes{rows};
  sizes.insert(sizes.end(), trailing.begin(), trailing.end());
  at::Tensor base = at::empty(sizes, at::TensorOptions().dtype(type));
  const auto n = static_cast<std::size_t>(base.numel()) * base.element_size();
  const auto bytes = sp::seeded_bytes(n);
  auto* p = static_cast<std::uint8_t*>(base.data_ptr());
  for (std::size_t i = 0; i < n; ++i) p[i] = type == at::kBool ? bytes[i] & 1 : bytes[i];
  if (!strided) return base;
  // The same values in a non-contiguous view: every other row of a twice-as-long tensor.
  std::vector<std::int64_t> twice = sizes;
  twice[0] *= 2;
  at::Tensor view = at::empty(twice, base.options()).slice(0, 0, twice[0], 2);
  if (rows > 1 && view.numel() > 1) RC_ASSERT(!view.is_contiguous());
  view.copy_(base);
  return view;
}

std::vector<std::uint8_t> bytes_of(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  const auto* p = static_cast<const std::uint8_t*>(c.data_ptr());
  return std::vector<std::uint8_t>(p, p + static_cast<std::size_t>(c.numel()) * c.element_size());
}

ref::Rows rows_of(const at::Tensor& t) {
  std::size_t rb = t.element_size();
  for (std::int64_t d = 1; d < t.dim(); ++d) rb *= static_cast<std::size_t>(t.size(d));
  ref::Rows r(static_cast<std::size_t>(t.size(0)), rb);
  const auto b = bytes_of(t);
  if (!b.empty()) std::memcpy(r.data(), b.data(), b.size());
  return r;
}

template <typename T>
std::vector<T> values_of(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<T>(c.data_ptr<T>(), c.data_ptr<T>() + c.numel());
}

// `t` holds `rows`' bytes as `like`'s dtype with `rows.rows()` rows and `like`'s trailing shape.
void expect_rows(const std::string& field, const at::Tensor& t, const ref::Rows& rows, const at::Tensor& like) {
  RC_ASSERT(t.scalar_type() == like.scalar_type());
  RC_ASSERT(t.dim() == like.dim());
  RC_ASSERT(t.size(0) == static_cast<std::int64_t>(rows.rows()));
  for (std::int64_t d = 1; d < t.dim(); ++d) RC_ASSERT(t.size(d) == like.size(d));
  sp::same(field, rows_of(t), rows);
}

void expect_same_pack(const tb::SequencePack& t, const ref::Pack& r, const at::Tensor& like) {
  const ref::Metadata& m = *r.meta;
  RC_ASSERT(t.meta.sample_offsets().scalar_type() == at::kInt);
  RC_ASSERT(t.meta.causal_indices().scalar_type() == at::kInt);
  RC_ASSERT(t.meta.causal_sample_ids().scalar_type() == at::kLong);
  sp::same("meta.sample_offsets", values_of<std::int32_t>(t.meta.sample_offsets()), m.sample_offsets);
  sp::same("meta.causal_seq_offsets", values_of<std::int32_t>(t.meta.causal_seq_offsets()), m.causal_seq_offsets);
  sp::same("meta.full_only_seq_offsets", values_of<std::int32_t>(t.meta.full_only_seq_offsets()),
           m.full_only_seq_offsets);
  sp::same("meta.causal_indices", values_of<std::int32_t>(t.meta.causal_indices()), m.causal_indices);
  sp::same("meta.full_indices", values_of<std::int32_t>(t.meta.full_indices()), m.full_indices);
  sp::same("meta.causal_sample_ids", values_of<std::int64_t>(t.meta.causal_sample_ids()), m.causal_sample_ids);
  sp::same("meta.full_only_sample_ids", values_of<std::int64_t>(t.meta.full_only_sample_ids()), m.full_only_sample_ids);
  sp::same("meta.max_sample_len", t.meta.max_sample_len(), m.max_sample_len);
  sp::same("meta.max_causal_len", t.meta.max_causal_len(), m.max_causal_len);
  sp::same("meta.max_full_len", t.meta.max_full_len(), m.max_full_len);
  sp::same("meta.num_causal_tokens", t.meta.num_causal_tokens(), m.num_causal_tokens);
  sp::same("meta.num_full_tokens", t.meta.num_full_tokens(), m.num_full_tokens);
  sp::same("pack.max_num_tokens", t.max_num_tokens, r.max_num_tokens);
  expect_rows("pack.causal_seq", t.causal_seq, r.causal_seq, like);
  expect_rows("pack.full_only_seq", t.full_only_seq, r.full_only_seq, like);
  RC_ASSERT(t.causal_sample_ids.scalar_type() == at::kLong);
  sp::same("pack.causal_sample_ids", values_of<std::int64_t>(t.causal_sample_ids), r.causal_sample_ids);
  sp::same("pack.full_only_sample_ids", values_of<std::int64_t>(t.full_only_sample_ids), r.full_only_sample_ids);
  sp::same("pack.pad_segment", t.pad_segment, r.pad_segment);
  sp::same("pack.is_sharded", t.is_sharded, r.is_sharded);
  sp::same("pack.num_causal_tokens_local", t.num_causal_tokens_local, r.num_causal_tokens_local);
  sp::same("pack.num_full_tokens_local", t.num_full_tokens_local, r.num_full_tokens_local);
}

struct Built {
  sp::Case c;
  at::Tensor input;
  std::optional<ref::Pack> r;
  std::optional<tb::SequencePack> t;
};

// A case, a tensor of a random dtype and shape, and both builds: the same
// error class, or the same pack and marks.
Built build_both(sp::Case c) {
  sp::track(c);
  const at::ScalarType type = *rc::gen::elementOf(std::vector<at::ScalarType>(std::begin(kDtypes), std::end(kDtypes)));
  const auto trailing =
      *rc::gen::oneOf(rc::gen::just(std::vector<std::int64_t>{}),
                      rc::gen::container<std::vector<std::int64_t>>(1, rc::gen::inRange<std::int64_t>(1, 5)),
                      rc::gen::container<std::vector<std::int64_t>>(2, rc::gen::inRange<std::int64_t>(1, 4)));
  RC_TAG(std::string(at::toString(type)) + " rank " + std::to_string(trailing.size() + 1));
  const bool strided = *rc::gen::arbitrary<bool>();
  at::Tensor input = random_rows(c.rows, type, trailing, strided);
  Built b{std::move(c), std::move(input), std::nullopt, std::nullopt};
  const ref::Layout& l = b.c.layout;
  ref::GraphMarks rm = b.c.marks, tm = b.c.marks;
  std::string r_error, t_error;
  try {
    b.r = ref::build_pack(rows_of(b.input), l, b.c.options, rm);
  } catch (const ref::Error& e) {
    r_error = ref::to_string(e.code());
  }
  try {
    const at::Tensor und = at::tensor(at::ArrayRef<std::int64_t>(l.und_token_indexes), at::kLong);
    b.t = tb::sequence_pack_from_packed_sequence(b.input, l.attn_modes, l.split_lens, l.sample_lens, und, at::Tensor(),
                                                 tm, tb::build_options(b.c.options));
  } catch (const ref::Error& e) {
    t_error = ref::to_string(e.code());
  }
  sp::same("refusal", t_error, r_error);
  sp::same("graph marks after the call", tm, rm);
  if (b.r) expect_same_pack(*b.t, *b.r, b.input);
  return b;
}

// The binding's pack as the attention passes read it (attention::PackMeta):
// its metadata tensors, its streams' lengths and the pad segment.
seqpack::attention::PackMeta attention_meta(const tb::SequencePack& t, const ref::Options& options) {
  const auto widen = [](const at::Tensor& v) {
    const auto n = values_of<std::int32_t>(v);
    return std::vector<std::int64_t>(n.begin(), n.end());
  };
  const auto rows = [&](const at::Tensor& indices, const at::Tensor& stream) {
    std::vector<std::int64_t> r = widen(indices);
    r.resize(static_cast<std::size_t>(stream.size(0)), -1);
    return r;
  };
  seqpack::attention::PackMeta m;
  m.sample_offsets = widen(t.meta.sample_offsets());
  m.max_sample_len = t.meta.max_sample_len();
  m.max_causal_len = t.meta.max_causal_len();
  m.max_full_len = t.meta.max_full_len();
  m.causal_indices = widen(t.meta.causal_indices());
  m.full_indices = widen(t.meta.full_indices());
  m.causal_seq_offsets = widen(t.meta.causal_seq_offsets());
  m.full_only_seq_offsets = widen(t.meta.full_only_seq_offsets());
  m.num_causal_tokens = t.meta.num_causal_tokens();
  m.num_full_tokens = t.meta.num_full_tokens();
  m.causal_sample_ids = values_of<std::int64_t>(t.causal_sample_ids);
  m.full_only_sample_ids = values_of<std::int64_t>(t.full_only_sample_ids);
  m.causal_rows = rows(t.meta.causal_indices(), t.causal_seq);
  m.full_only_rows = rows(t.meta.full_indices(), t.full_only_seq);
  if (t.pad_segment) {
    const auto w = [](const std::vector<std::int32_t>& v) { return std::vector<std::int64_t>(v.begin(), v.end()); };
    m.pad_segment = seqpack::attention::PadSegmentMeta{
        w(t.pad_segment->causal_seq_offsets), t.pad_segment->max_causal_len,    w(t.pad_segment->full_only_seq_offsets),
        t.pad_segment->max_full_len,          w(t.pad_segment->sample_offsets), t.pad_segment->max_sample_len};
  }
  m.is_sharded = t.is_sharded;
  m.full_seq_alignment = options.full_seq_alignment;
  m.causal_seq_alignment = options.causal_seq_alignment;
  return m;
}

// Issue 27: the binding's pack, run through every attention pass it feeds
// (NaN-poisoned buffers), does exactly what the reference's does.
SEQPACK_PROPERTY(TorchBinding, ConsequencesMatchTheReference) {
  const Built b = build_both(*sp::gen_valid_case(*rc::gen::element(sp::Profile::packer, sp::Profile::strict)));
  if (!b.r) return;
  seqpack::attention::EvaluateOptions o;
  o.max_pairs = sp::Subject::kConsequencePairs;
  const auto want = seqpack::attention::evaluate(seqpack::attention::from_reference(*b.r, b.c.options), o);
  const auto got = seqpack::attention::evaluate(attention_meta(*b.t, b.c.options), o);
  RC_TAG(seqpack::attention::to_string(want.severity));
  sp::same("consequences", seqpack::attention::format_report(got), seqpack::attention::format_report(want));
}

sp::Case packer_case() {
  sp::Case c = *sp::gen_packer_case();
  RC_PRE(c.rows <= 4000);  // keeps random byte generation quick
  return c;
}

SEQPACK_PROPERTY(TorchBinding, BuildMatchesTheReference) {
  build_both(*rc::gen::weightedOneOf<sp::Case>({{3, sp::gen_packer_case()}, {1, sp::gen_strict_case()}}));
}

SEQPACK_PROPERTY(TorchBinding, PreparedMetadataMatchesTheReference) {
  const sp::Case c = sp::track(packer_case());
  const ref::Layout& l = c.layout;
  const at::Tensor und = at::tensor(at::ArrayRef<std::int64_t>(l.und_token_indexes), at::kLong);
  const tb::SequencePackMetadata meta =
      tb::prepare_sequence_pack_metadata(l.sample_lens, l.split_lens, l.attn_modes, und);
  RC_ASSERT(meta.matches_layout(l.sample_lens, l.split_lens, l.attn_modes));
  const at::Tensor input = random_rows(c.rows, at::kFloat, {2}, false);
  ref::GraphMarks rm = c.marks, tm = c.marks;
  const ref::Pack r = ref::build_pack(rows_of(input), l, c.options, rm);
  const tb::SequencePack t = tb::sequence_pack_from_packed_sequence(
      input, l.attn_modes, l.split_lens, l.sample_lens, und, at::Tensor(), tm, tb::build_options(c.options), meta);
  expect_same_pack(t, r, input);
  sp::same("graph marks after the call", tm, rm);
}

SEQPACK_PROPERTY(TorchBinding, ViewsMatchTheReference) {
  Built b = build_both(packer_case());
  RC_ASSERT(b.r.has_value());
  ref::Pack& r = *b.r;
  tb::SequencePack& t = *b.t;
  expect_rows("get_all_seq(pack)", tb::get_all_seq(t), ref::get_all_seq(r), b.input);
  const auto [seq, offsets, max_len] = tb::get_all_seq_padded(t);
  const ref::AllSeqPadded rp = ref::get_all_seq_padded(r);
  expect_rows("all_seq_padded.seq", seq, rp.seq, b.input);
  RC_ASSERT(offsets.scalar_type() == at::kInt);
  sp::same("all_seq_padded.offsets", values_of<std::int32_t>(offsets), rp.offsets);
  sp::same("all_seq_padded.max_len", max_len, rp.max_len);
  for (const bool causal : {true, false}) {
    const auto [s, o, m] = causal ? tb::get_causal_seq_padded(t) : tb::get_full_only_seq_padded(t);
    const ref::PaddedStreamView v = causal ? ref::get_causal_seq_padded(r) : ref::get_full_only_seq_padded(r);
    expect_rows(std::string(causal ? "causal" : "full") + "_seq_padded.seq", s, v.seq, b.input);
    sp::same(std::string(causal ? "causal" : "full") + "_seq_padded.offsets", values_of<std::int32_t>(o), v.offsets);
    sp::same(std::string(causal ? "causal" : "full") + "_seq_padded.max_len", m, v.max_len);
  }
  sp::same("has_pad_segment(pack)", tb::has_pad_segment(t), ref::has_pad_segment(r));
  sp::same("get_num_real_tokens(pack)", tb::get_num_real_tokens(t), ref::get_num_real_tokens(r));

  const at::Tensor value = random_rows(b.c.rows, b.input.scalar_type(),
                                       std::vector<std::int64_t>(b.input.sizes().begin() + 1, b.input.sizes().end()),
                                       *rc::gen::arbitrary<bool>());
  const at::Tensor causal_before = t.causal_seq;
  tb::set_all_seq(t, value);
  ref::set_all_seq(r, rows_of(value));
  expect_rows("pack.causal_seq", t.causal_seq, r.causal_seq, b.input);
  expect_rows("pack.full_only_seq", t.full_only_seq, r.full_only_seq, b.input);
  RC_ASSERT(t.causal_seq.is_same(causal_before));  // in place, as the original

  const tb::SequencePack f = tb::from_all_seq(value, t);
  const ref::Pack rf = ref::from_all_seq(rows_of(value), r);
  expect_rows("from_all_seq.causal_seq", f.causal_seq, rf.causal_seq, b.input);
  expect_rows("from_all_seq.full_only_seq", f.full_only_seq, rf.full_only_seq, b.input);

  const tb::SequencePack z = tb::zeros_like(t, std::vector<std::int64_t>{-1, 3});
  RC_ASSERT(z.causal_seq.dim() == 2 && z.causal_seq.size(1) == 3 && z.causal_seq.size(0) == t.causal_seq.size(0));
  RC_ASSERT(z.causal_seq.scalar_type() == b.input.scalar_type());
  RC_ASSERT(at::all(z.causal_seq == 0).item<bool>() && at::all(z.full_only_seq == 0).item<bool>());
}

SEQPACK_PROPERTY(TorchBinding, ShardsAndPositionIdsMatchTheReference) {
  Built b = build_both(packer_case());
  RC_ASSERT(b.r.has_value());
  const ref::Pack& r = *b.r;
  const tb::SequencePack& t = *b.t;
  const bool mrope = *rc::gen::arbitrary<bool>();
  const at::ScalarType id_type = *rc::gen::element(at::kLong, at::kInt);
  ref::PositionIds ids{mrope, mrope ? 3u : 1u, static_cast<std::size_t>(b.c.rows), {}};
  ids.values = sp::seeded_values(ids.axes * ids.len);
  if (id_type == at::kInt) {
    for (auto& v : ids.values) v = static_cast<std::int32_t>(v);  // the low 32 bits, as int32 ids hold
  }
  at::Tensor pos = at::tensor(at::ArrayRef<std::int64_t>(ids.values), at::kLong).to(id_type);
  if (mrope) pos = pos.reshape({3, b.c.rows});
  const auto expect_ids = [&](const std::string& field, const at::Tensor& got, const ref::PositionIds& want) {
    RC_ASSERT(got.scalar_type() == id_type);
    RC_ASSERT(got.dim() == (mrope ? 2 : 1));
    sp::same(field, values_of<std::int64_t>(got.to(at::kLong)), want.values);
  };
  expect_ids("get_und_position_ids(ids, pack)", tb::get_und_position_ids(pos, t), ref::get_und_position_ids(ids, r));
  expect_ids("get_gen_position_ids(ids, pack)", tb::get_gen_position_ids(pos, t), ref::get_gen_position_ids(ids, r));

  const std::int64_t world = b.c.options.cp_world_size;
  std::vector<tb::SequencePack> shards;
  for (std::int64_t rank = 0; rank < world; ++rank) {
    std::string r_error, t_error;
    std::optional<ref::Pack> rs;
    std::optional<tb::SequencePack> ts;
    try {
      rs = ref::shard_pack(r, rank, world);
    } catch (const ref::Error& e) {
      r_error = ref::to_string(e.code());
    }
    try {
      ts = tb::shard_pack(t, rank, world);
    } catch (const ref::Error& e) {
      t_error = ref::to_string(e.code());
    }
    sp::same("refusal", t_error, r_error);
    if (!rs) return;
    expect_same_pack(*ts, *rs, b.input);
    sp::same("get_num_real_tokens(*rs)", tb::get_num_real_tokens(*ts), ref::get_num_real_tokens(*rs));
    expect_ids("shard_position_ids(ids, pack, rank, world)", tb::shard_position_ids(pos, t, rank, world),
               ref::shard_position_ids(ids, r, rank, world));
    shards.push_back(std::move(*ts));
  }
  const tb::SequencePack whole = tb::gather_shards(shards);
  expect_rows("gather_shards.causal_seq", whole.causal_seq, r.causal_seq, b.input);
  expect_rows("gather_shards.full_only_seq", whole.full_only_seq, r.full_only_seq, b.input);
  sp::same("pack.causal_sample_ids", values_of<std::int64_t>(whole.causal_sample_ids), r.causal_sample_ids);
  sp::same("pack.full_only_sample_ids", values_of<std::int64_t>(whole.full_only_sample_ids), r.full_only_sample_ids);
}

// Argument checks name the argument.
struct Fixture {
  tb::GraphMarks marks;
  at::Tensor input = at::arange(12, at::kFloat).reshape({6, 2});
  tb::SequencePack pack =
      tb::sequence_pack_from_packed_sequence(input, {"causal", "full", "causal", "full"}, {1, 2, 2, 1}, {3, 3},
                                             at::tensor({0, 3, 4}, at::kLong), at::Tensor(), marks);
};

std::string field_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ref::Error& e) {
    return e.field();
  }
  return "(no error)";
}

TEST(TorchBindingArguments, NameTheArgument) {
  Fixture x;
  EXPECT_EQ(field_of([&] { tb::set_all_seq(x.pack, at::zeros({6, 2}, at::kDouble)); }), "value");
  EXPECT_EQ(field_of([&] { tb::set_all_seq(x.pack, at::zeros({6, 3}, at::kFloat)); }), "value");
  EXPECT_EQ(field_of([&] { tb::set_all_seq(x.pack, at::zeros({5, 2}, at::kFloat)); }), "value");
  EXPECT_EQ(field_of([&] { tb::set_und_seq(x.pack, at::zeros({7, 2}, at::kFloat)); }), "value");
  EXPECT_EQ(field_of([&] { tb::from_all_seq(at::zeros({4, 2}, at::kFloat), x.pack); }), "packed");
  EXPECT_EQ(field_of([&] { tb::get_und_position_ids(at::zeros({6}, at::kFloat), x.pack); }), "position_ids");
  EXPECT_EQ(field_of([&] { tb::get_und_position_ids(at::zeros({5}, at::kLong), x.pack); }), "position_ids.len");
  EXPECT_EQ(field_of([&] { tb::zeros_like(x.pack, std::vector<std::int64_t>{4, 2}); }), "shape");
  tb::GraphMarks m;
  const auto build = [&](const at::Tensor& rows, const at::Tensor& und) {
    tb::sequence_pack_from_packed_sequence(rows, {"causal", "full"}, {3, 3}, {6}, und, at::Tensor(), m);
  };
  EXPECT_EQ(field_of([&] { build(at::zeros({}, at::kFloat), at::tensor({0, 1, 2}, at::kLong)); }), "packed_sequence");
  EXPECT_EQ(field_of([&] { build(at::zeros({5, 2}, at::kFloat), at::tensor({0, 1, 2}, at::kLong)); }), "rows");
  EXPECT_EQ(field_of([&] {
              build(at::zeros({6, 2}, at::kFloat), at::tensor({0.5, 1.0}, at::kFloat));
            }),
            "packed_und_token_indexes");
  EXPECT_EQ(m, tb::GraphMarks{});
}

// A pack without metadata (default-constructed) is refused, not dereferenced.
TEST(TorchBindingArguments, APackWithoutMetadataIsRefused) {
  Fixture x;
  tb::SequencePack empty = x.pack;
  empty.meta = tb::SequencePackMetadata();
  EXPECT_EQ(field_of([&] { tb::get_all_seq(empty); }), "pack.meta");
  EXPECT_EQ(field_of([&] { tb::set_all_seq(empty, x.input); }), "pack.meta");
  EXPECT_EQ(field_of([&] { tb::shard_pack(empty, 0, 1); }), "pack.meta");
}

// A sharded pack with a pad segment refuses the padded getters, as the
// reference and the original do (found by the conformance view cp_local).
TEST(TorchBindingArguments, PaddedGettersRefuseAShardWithAPadSegment) {
  Fixture x;
  ASSERT_TRUE(tb::has_pad_segment(x.pack));
  const tb::SequencePack local = tb::shard_pack(x.pack, 0, 2);
  const auto class_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const ref::Error& e) {
      return std::string(ref::to_string(e.code()));
    }
    return std::string("ok");
  };
  EXPECT_EQ(class_of([&] { tb::get_causal_seq_padded(local); }), "sharded_pack");
  EXPECT_EQ(class_of([&] { tb::get_full_only_seq_padded(local); }), "sharded_pack");
  EXPECT_EQ(class_of([&] { tb::get_causal_seq_padded(x.pack); }), "ok");
}

TEST(TorchBindingArguments, ResultsHaveTheOriginalsDtypes) {
  Fixture x;
  EXPECT_EQ(x.pack.meta.sample_offsets().scalar_type(), at::kInt);
  EXPECT_EQ(x.pack.meta.causal_seq_offsets().scalar_type(), at::kInt);
  EXPECT_EQ(x.pack.meta.full_indices().scalar_type(), at::kInt);
  EXPECT_EQ(x.pack.causal_sample_ids.scalar_type(), at::kLong);
  EXPECT_EQ(x.pack.meta.max_sample_len(), 3);
  // Worked by hand: causal rows are packed rows 0, 3, 4 and full rows 1, 2, 5;
  // each stream then has one zero row reserved for the pad segment.
  EXPECT_TRUE(at::equal(tb::get_und_seq(x.pack), at::tensor({0.f, 1.f, 6.f, 7.f, 8.f, 9.f, 0.f, 0.f}).reshape({4, 2})));
  EXPECT_TRUE(
      at::equal(tb::get_gen_seq(x.pack), at::tensor({2.f, 3.f, 4.f, 5.f, 10.f, 11.f, 0.f, 0.f}).reshape({4, 2})));
  EXPECT_TRUE(tb::has_pad_segment(x.pack));
  EXPECT_TRUE(at::equal(tb::get_all_seq(x.pack), x.input));
}

}  // namespace

int main(int argc, char** argv) {
  setenv("RC_PARAMS", "max_success=500 max_size=80", 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
