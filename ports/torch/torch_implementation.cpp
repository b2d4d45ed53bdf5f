// The LibTorch binding behind the protocol's Implementation interface: each
// case built through seqpack::torch_binding on CPU tensors. The rows travel
// as a tensor whose dtype and shape follow the row width (float64, float32,
// bfloat16 or uint8; [N] for 1-byte rows), so conformance runs go through the
// binding's dtype and shape plumbing too. torch_port serves it; the
// command line's LibTorch helper runs it in process (`seqpack exhaustive`).
#include "torch_implementation.hpp"

#include <cstring>
#include <iostream>
#include <string>

#include <ATen/ATen.h>

#include "seqpack/torch/sequence_pack.hpp"

namespace {

namespace ref = seqpack::reference;
namespace sc = seqpack::protocol;
namespace tb = seqpack::torch_binding;

at::Tensor tensor_of(const ref::Rows& rows) {
  const auto n = static_cast<std::int64_t>(rows.rows());
  const auto rb = static_cast<std::int64_t>(rows.row_bytes());
  at::Tensor t;
  if (rb == 1)
    t = at::empty({n}, at::kByte);
  else if (rb > 0 && rb % 8 == 0)
    t = at::empty({n, rb / 8}, at::kDouble);
  else if (rb > 0 && rb % 4 == 0)
    t = at::empty({n, rb / 4}, at::kFloat);
  else if (rb > 0 && rb % 2 == 0)
    t = at::empty({n, rb / 2}, at::kBFloat16);
  else
    t = at::empty({n, rb}, at::kByte);
  if (rows.size_bytes()) std::memcpy(t.data_ptr(), rows.data(), rows.size_bytes());
  return t;
}

ref::Rows rows_of(const at::Tensor& t, std::size_t row_bytes) {
  const at::Tensor c = t.contiguous();
  ref::Rows r(static_cast<std::size_t>(c.size(0)), row_bytes);
  if (r.size_bytes()) std::memcpy(r.data(), c.data_ptr(), r.size_bytes());
  return r;
}

template <typename T>
std::vector<T> values_of(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<T>(c.data_ptr<T>(), c.data_ptr<T>() + c.numel());
}

ref::Pack host_pack(const tb::SequencePack& p, std::shared_ptr<const ref::Metadata> meta, std::size_t row_bytes) {
  ref::Pack h;
  h.meta = std::move(meta);
  ref::copy_pack_scalars(p, h);
  h.causal_seq = rows_of(p.causal_seq, row_bytes);
  h.full_only_seq = rows_of(p.full_only_seq, row_bytes);
  h.causal_sample_ids = values_of<std::int64_t>(p.causal_sample_ids);
  h.full_only_sample_ids = values_of<std::int64_t>(p.full_only_sample_ids);
  return h;
}

at::Tensor ids_tensor(const ref::PositionIds& ids) {
  at::Tensor t = at::tensor(at::ArrayRef<std::int64_t>(ids.values), at::kLong);
  return ids.two_dimensional ? t.reshape({static_cast<std::int64_t>(ids.axes), static_cast<std::int64_t>(ids.len)}) : t;
}

ref::PositionIds ids_of(const at::Tensor& t) {
  ref::PositionIds ids;
  ids.two_dimensional = t.dim() == 2;
  ids.axes = ids.two_dimensional ? static_cast<std::size_t>(t.size(0)) : 1;
  ids.len = static_cast<std::size_t>(t.size(t.dim() - 1));
  ids.values = values_of<std::int64_t>(t);
  return ids;
}

class TorchBuilt : public sc::Built {
 public:
  TorchBuilt(tb::SequencePack p, std::shared_ptr<const ref::Metadata> meta, std::size_t row_bytes)
      : pack_(std::move(p)), row_bytes_(row_bytes), meta_(std::move(meta)) {
    host_ = host_pack(pack_, meta_, row_bytes_);
  }
  TorchBuilt(tb::SequencePack p, const ref::Layout& layout, std::size_t row_bytes)
      : pack_(std::move(p)), row_bytes_(row_bytes) {
    // The metadata as the binding reports it, through its tensor accessors.
    auto m = std::make_shared<ref::Metadata>();
    const tb::SequencePackMetadata& t = pack_.meta;
    m->sample_lens = layout.sample_lens;
    m->split_lens = layout.split_lens;
    for (const auto& mode : layout.attn_modes)
      m->attn_modes.push_back(mode == "causal" ? ref::AttnMode::causal : ref::AttnMode::full);
    m->sample_offsets = values_of<std::int32_t>(t.sample_offsets());
    m->max_sample_len = static_cast<std::int32_t>(t.max_sample_len());
    m->max_causal_len = static_cast<std::int32_t>(t.max_causal_len());
    m->max_full_len = static_cast<std::int32_t>(t.max_full_len());
    m->causal_indices = values_of<std::int32_t>(t.causal_indices());
    m->full_indices = values_of<std::int32_t>(t.full_indices());
    m->causal_seq_offsets = values_of<std::int32_t>(t.causal_seq_offsets());
    m->full_only_seq_offsets = values_of<std::int32_t>(t.full_only_seq_offsets());
    m->causal_sample_ids = values_of<std::int64_t>(t.causal_sample_ids());
    m->full_only_sample_ids = values_of<std::int64_t>(t.full_only_sample_ids());
    m->num_causal_tokens = t.num_causal_tokens();
    m->num_full_tokens = t.num_full_tokens();
    meta_ = std::move(m);
    host_ = host_pack(pack_, meta_, row_bytes_);
  }
  const ref::Pack& pack() const override { return host_; }
  // The binding's tensors' own dtypes (its pad segment is host int32 data).
  std::vector<std::pair<std::string, std::string>> dtypes() const override {
    const auto name = [](const at::Tensor& t) {
      return t.scalar_type() == at::kInt    ? std::string("int32")
             : t.scalar_type() == at::kLong ? std::string("int64")
                                            : std::string(c10::toString(t.scalar_type()));
    };
    const tb::SequencePackMetadata& m = pack_.meta;
    std::vector<std::pair<std::string, std::string>> out = {{"sample_offsets", name(m.sample_offsets())},
                                                            {"causal_seq_offsets", name(m.causal_seq_offsets())},
                                                            {"full_only_seq_offsets", name(m.full_only_seq_offsets())},
                                                            {"causal_sample_ids", name(pack_.causal_sample_ids)},
                                                            {"full_only_sample_ids", name(pack_.full_only_sample_ids)}};
    if (pack_.pad_segment)
      for (const char* f : {"causal_seq_offsets", "full_only_seq_offsets", "sample_offsets"})
        out.emplace_back(std::string("pad_segment.") + f, "int32");
    return out;
  }
  ref::AllSeqPadded all_seq_padded() const override {
    auto [seq, offsets, max_len] = tb::get_all_seq_padded(pack_);
    return {rows_of(seq, row_bytes_), values_of<std::int32_t>(offsets), static_cast<std::int32_t>(max_len)};
  }
  std::unique_ptr<sc::Built> shard(std::int64_t rank, std::int64_t world) const override {
    // The shard's metadata as the binding reports it (cp_global compares its offsets).
    return std::make_unique<TorchBuilt>(tb::shard_pack(pack_, rank, world), layout(), row_bytes_);
  }
  ref::PositionIds shard_position_ids(const ref::PositionIds& ids, std::int64_t rank,
                                      std::int64_t world) const override {
    return ids_of(tb::shard_position_ids(ids_tensor(ids), pack_, rank, world));
  }
  std::unique_ptr<sc::Built> gather(const std::vector<const sc::Built*>& shards) const override {
    std::vector<tb::SequencePack> packs;
    for (const sc::Built* b : shards) packs.push_back(dynamic_cast<const TorchBuilt&>(*b).pack_);
    return std::make_unique<TorchBuilt>(tb::gather_shards(packs), layout(), row_bytes_);
  }
  ref::Rows und_seq() const override { return rows_of(tb::get_und_seq(pack_), row_bytes_); }
  ref::Rows gen_seq() const override { return rows_of(tb::get_gen_seq(pack_), row_bytes_); }
  ref::Rows all_seq() const override { return rows_of(tb::get_all_seq(pack_), row_bytes_); }
  sc::PaddedStream causal_padded() const override { return padded(tb::get_causal_seq_padded(pack_)); }
  sc::PaddedStream full_only_padded() const override { return padded(tb::get_full_only_seq_padded(pack_)); }
  bool has_pad_segment() const override { return tb::has_pad_segment(pack_); }
  std::pair<std::int64_t, std::int64_t> num_real_tokens() const override { return tb::get_num_real_tokens(pack_); }
  ref::PositionIds und_position_ids(const ref::PositionIds& ids) const override {
    return ids_of(tb::get_und_position_ids(ids_tensor(ids), pack_));
  }
  ref::PositionIds gen_position_ids(const ref::PositionIds& ids) const override {
    return ids_of(tb::get_gen_position_ids(ids_tensor(ids), pack_));
  }
  void set_und_seq(const ref::Rows& v) override {
    tb::set_und_seq(pack_, tensor_of(v));
    host_ = host_pack(pack_, meta_, row_bytes_);
  }
  void set_gen_seq(const ref::Rows& v) override {
    tb::set_gen_seq(pack_, tensor_of(v));
    host_ = host_pack(pack_, meta_, row_bytes_);
  }
  void set_all_seq(const ref::Rows& v) override {
    tb::set_all_seq(pack_, tensor_of(v));
    host_ = host_pack(pack_, meta_, row_bytes_);
  }
  std::unique_ptr<sc::Built> from_all_seq(const ref::Rows& packed) const override {
    return wrap(tb::from_all_seq(tensor_of(packed), pack_));
  }
  std::unique_ptr<sc::Built> from_mode_splits(const ref::Rows& c, const ref::Rows& f) const override {
    return wrap(tb::from_mode_splits(tensor_of(c), tensor_of(f), pack_));
  }
  std::unique_ptr<sc::Built> from_und_gen_splits(const ref::Rows& u, const ref::Rows& g) const override {
    return wrap(tb::from_und_gen_splits(tensor_of(u), tensor_of(g), pack_));
  }
  std::unique_ptr<sc::Built> zeros_like(std::optional<std::size_t> row_bytes) const override {
    if (!row_bytes) return wrap(tb::zeros_like(pack_));
    // The original's shape (-1, k): k elements of the streams' dtype per row.
    const auto element = static_cast<std::size_t>(pack_.causal_seq.element_size());
    const auto k = static_cast<std::int64_t>(*row_bytes / element);
    return std::make_unique<TorchBuilt>(tb::zeros_like(pack_, std::vector<std::int64_t>{-1, k}), meta_, *row_bytes);
  }

 private:
  std::unique_ptr<sc::Built> wrap(tb::SequencePack p) const {
    return std::make_unique<TorchBuilt>(std::move(p), meta_, row_bytes_);
  }
  ref::Layout layout() const {
    ref::Layout l;
    l.sample_lens = meta_->sample_lens;
    l.split_lens = meta_->split_lens;
    for (const ref::AttnMode m : meta_->attn_modes) l.attn_modes.push_back(ref::to_string(m));
    return l;
  }
  sc::PaddedStream padded(const std::tuple<at::Tensor, at::Tensor, std::int64_t>& t) const {
    return {rows_of(std::get<0>(t), row_bytes_), values_of<std::int32_t>(std::get<1>(t)),
            static_cast<std::int32_t>(std::get<2>(t))};
  }

  tb::SequencePack pack_;
  std::size_t row_bytes_;
  std::shared_ptr<const ref::Metadata> meta_;
  ref::Pack host_;
};

class TorchImplementation : public sc::Implementation {
 public:
  std::string name() const override { return "seqpack LibTorch binding (CPU tensors)"; }
  std::unique_ptr<sc::Built> build(const ref::Rows& rows, const seqpack::protocol::Case& c,
                                   ref::GraphMarks& marks) const override {
    const ref::Layout& l = c.layout;
    const at::Tensor und = at::tensor(at::ArrayRef<std::int64_t>(l.und_token_indexes), at::kLong);
    tb::SequencePack p =
        tb::sequence_pack_from_packed_sequence(tensor_of(rows), l.attn_modes, l.split_lens, l.sample_lens, und,
                                               at::Tensor(), marks, tb::build_options(c.options));
    return std::make_unique<TorchBuilt>(std::move(p), l, rows.row_bytes());
  }
  std::unique_ptr<sc::Built> build_prepared(const ref::Rows& rows, const seqpack::protocol::Case& c,
                                            ref::GraphMarks& marks, const ref::Layout& from) const override {
    const at::Tensor from_und = at::tensor(at::ArrayRef<std::int64_t>(from.und_token_indexes), at::kLong);
    const tb::SequencePackMetadata prepared =
        tb::prepare_sequence_pack_metadata(from.sample_lens, from.split_lens, from.attn_modes, from_und);
    const ref::Layout& l = c.layout;
    const at::Tensor und = at::tensor(at::ArrayRef<std::int64_t>(l.und_token_indexes), at::kLong);
    tb::SequencePack p =
        tb::sequence_pack_from_packed_sequence(tensor_of(rows), l.attn_modes, l.split_lens, l.sample_lens, und,
                                               at::Tensor(), marks, tb::build_options(c.options), prepared);
    return std::make_unique<TorchBuilt>(std::move(p), l, rows.row_bytes());
  }
  std::vector<std::string> views() const override { return sc::oracle_views(); }
};

}  // namespace

const seqpack::protocol::Implementation& seqpack::ports::torch_implementation() {
  static const TorchImplementation impl;
  return impl;
}
