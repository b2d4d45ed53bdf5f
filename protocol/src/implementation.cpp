// What a C++ port implements (protocol.hpp's Built and Implementation): the
// defaults that answer "not provided", and the reference's own
// implementation, which the oracle runs. The oracle is in oracle.cpp, the
// result lines in results.cpp.
#include <memory>
#include <optional>

#include "seqpack/protocol/protocol.hpp"
#include "seqpack/reference/reference.hpp"
#include "views.hpp"

namespace seqpack::protocol {

using detail::class_of;
namespace ref = seqpack::reference;

namespace {

class ReferenceBuilt : public Built {
 public:
  explicit ReferenceBuilt(ref::Pack p) : pack_(std::move(p)) {}
  const ref::Pack& pack() const override { return pack_; }
  ref::AllSeqPadded all_seq_padded() const override { return ref::get_all_seq_padded(pack_); }
  std::unique_ptr<Built> shard(std::int64_t rank, std::int64_t world) const override {
    return wrap(ref::shard_pack(pack_, rank, world));
  }
  ref::Rows und_seq() const override { return ref::get_und_seq(pack_); }
  ref::Rows gen_seq() const override { return ref::get_gen_seq(pack_); }
  ref::Rows all_seq() const override { return ref::get_all_seq(pack_); }
  PaddedStream causal_padded() const override { return padded(ref::get_causal_seq_padded(pack_)); }
  PaddedStream full_only_padded() const override { return padded(ref::get_full_only_seq_padded(pack_)); }
  bool has_pad_segment() const override { return ref::has_pad_segment(pack_); }
  std::pair<std::int64_t, std::int64_t> num_real_tokens() const override { return ref::get_num_real_tokens(pack_); }
  ref::PositionIds und_position_ids(const ref::PositionIds& ids) const override {
    return ref::get_und_position_ids(ids, pack_);
  }
  ref::PositionIds gen_position_ids(const ref::PositionIds& ids) const override {
    return ref::get_gen_position_ids(ids, pack_);
  }
  void set_und_seq(const ref::Rows& v) override { ref::set_und_seq(pack_, v); }
  void set_gen_seq(const ref::Rows& v) override { ref::set_gen_seq(pack_, v); }
  void set_all_seq(const ref::Rows& v) override { ref::set_all_seq(pack_, v); }
  std::unique_ptr<Built> from_all_seq(const ref::Rows& packed) const override {
    return wrap(ref::from_all_seq(packed, pack_));
  }
  std::unique_ptr<Built> from_mode_splits(const ref::Rows& c, const ref::Rows& f) const override {
    return wrap(ref::from_mode_splits(c, f, pack_));
  }
  std::unique_ptr<Built> from_und_gen_splits(const ref::Rows& u, const ref::Rows& g) const override {
    return wrap(ref::from_und_gen_splits(u, g, pack_));
  }
  std::unique_ptr<Built> zeros_like(std::optional<std::size_t> row_bytes) const override {
    return wrap(ref::zeros_like(pack_, row_bytes));
  }
  ref::PositionIds shard_position_ids(const ref::PositionIds& ids, std::int64_t rank,
                                      std::int64_t world) const override {
    return ref::shard_position_ids(ids, pack_, rank, world);
  }
  std::unique_ptr<Built> gather(const std::vector<const Built*>& shards) const override {
    std::vector<ref::Pack> packs;
    packs.reserve(shards.size());
    for (const Built* b : shards) packs.push_back(b->pack());
    return wrap(ref::gather_shards(packs));
  }
  std::string error_class(Call call, const ref::PositionIds& ids) const override {
    const ref::Refusal r = refusal(call, ids);
    return r ? ref::to_string(r->code()) : "ok";
  }

 private:
  static std::unique_ptr<Built> wrap(ref::Pack p) { return std::make_unique<ReferenceBuilt>(std::move(p)); }
  ref::Refusal refusal(Call call, const ref::PositionIds& ids) const {
    switch (call) {
      case Call::all_seq:
        return ref::get_all_seq_refusal(pack_);
      case Call::all_seq_padded:
        return ref::get_all_seq_padded_refusal(pack_);
      case Call::und_position_ids:
        return ref::get_und_position_ids_refusal(ids, pack_);
      case Call::gen_position_ids:
        return ref::get_gen_position_ids_refusal(ids, pack_);
      case Call::causal_padded:
        return ref::get_causal_seq_padded_refusal(pack_);
      case Call::full_only_padded:
        return ref::get_full_only_seq_padded_refusal(pack_);
    }
    return std::nullopt;
  }
  static PaddedStream padded(const ref::PaddedStreamView& v) { return {v.seq, v.offsets, v.max_len}; }
  ref::Pack pack_;
};

class ReferenceImplementation : public Implementation {
 public:
  std::string name() const override { return "seqpack reference oracle"; }
  std::unique_ptr<Built> build(const ref::Rows& rows, const protocol::Case& c, ref::GraphMarks& marks) const override {
    return std::make_unique<ReferenceBuilt>(ref::build_pack(rows, c.layout, c.options, marks));
  }
  std::unique_ptr<Built> build_prepared(const ref::Rows& rows, const protocol::Case& c, ref::GraphMarks& marks,
                                        const ref::Layout& prepared_from) const override {
    auto meta = std::make_shared<const ref::Metadata>(ref::prepare_metadata(prepared_from));
    return std::make_unique<ReferenceBuilt>(ref::build_pack(rows, c.layout, c.options, marks, std::move(meta)));
  }
  std::vector<std::string> views() const override { return oracle_views(); }
};

[[noreturn]] void unsupported(const char* op) {
  throw Unsupported(std::string(op) + " is not provided by this implementation");
}
}  // namespace

ref::Rows Built::und_seq() const { unsupported("get_und_seq"); }
ref::Rows Built::gen_seq() const { unsupported("get_gen_seq"); }
ref::Rows Built::all_seq() const { unsupported("get_all_seq"); }
PaddedStream Built::causal_padded() const { unsupported("get_causal_seq_padded"); }
PaddedStream Built::full_only_padded() const { unsupported("get_full_only_seq_padded"); }
bool Built::has_pad_segment() const { unsupported("has_pad_segment"); }
std::pair<std::int64_t, std::int64_t> Built::num_real_tokens() const { unsupported("get_num_real_tokens"); }
ref::PositionIds Built::und_position_ids(const ref::PositionIds&) const { unsupported("get_und_position_ids"); }
ref::PositionIds Built::gen_position_ids(const ref::PositionIds&) const { unsupported("get_gen_position_ids"); }
void Built::set_und_seq(const ref::Rows&) { unsupported("set_und_seq"); }
void Built::set_gen_seq(const ref::Rows&) { unsupported("set_gen_seq"); }
void Built::set_all_seq(const ref::Rows&) { unsupported("set_all_seq"); }
std::unique_ptr<Built> Built::from_all_seq(const ref::Rows&) const { unsupported("from_all_seq"); }
std::string Built::error_class(Call call, const ref::PositionIds& ids) const {
  switch (call) {
    case Call::all_seq:
      return class_of([&] { all_seq(); });
    case Call::all_seq_padded:
      return class_of([&] { all_seq_padded(); });
    case Call::und_position_ids:
      return class_of([&] { und_position_ids(ids); });
    case Call::gen_position_ids:
      return class_of([&] { gen_position_ids(ids); });
    case Call::causal_padded:
      return class_of([&] { causal_padded(); });
    case Call::full_only_padded:
      return class_of([&] { full_only_padded(); });
  }
  return "unknown call";
}
std::unique_ptr<Built> Built::from_mode_splits(const ref::Rows&, const ref::Rows&) const {
  unsupported("from_mode_splits");
}
std::unique_ptr<Built> Built::from_und_gen_splits(const ref::Rows&, const ref::Rows&) const {
  unsupported("from_und_gen_splits");
}
ref::PositionIds Built::shard_position_ids(const ref::PositionIds&, std::int64_t, std::int64_t) const {
  unsupported("shard_position_ids");
}
std::unique_ptr<Built> Built::gather(const std::vector<const Built*>&) const { unsupported("gather_shards"); }
std::unique_ptr<Built> Built::zeros_like(std::optional<std::size_t>) const { unsupported("zeros_like"); }

std::unique_ptr<Built> Implementation::build_prepared(const ref::Rows&, const protocol::Case&, ref::GraphMarks&,
                                                      const ref::Layout&) const {
  unsupported("prepare_sequence_pack_metadata");
}
std::vector<std::string> Implementation::views() const { return {"all_seq_padded", "cp_shards"}; }

std::vector<std::pair<std::string, std::string>> Built::dtypes() const {
  // The reference's vectors: int32 offsets, int64 sample ids. (Indices are
  // left out: torch indexes with either width, and the Python adapter widens
  // them itself for torch 1.13.)
  std::vector<std::pair<std::string, std::string>> out = {{"sample_offsets", "int32"},
                                                          {"causal_seq_offsets", "int32"},
                                                          {"full_only_seq_offsets", "int32"},
                                                          {"causal_sample_ids", "int64"},
                                                          {"full_only_sample_ids", "int64"}};
  if (pack().pad_segment) {
    out.emplace_back("pad_segment.causal_seq_offsets", "int32");
    out.emplace_back("pad_segment.full_only_seq_offsets", "int32");
    out.emplace_back("pad_segment.sample_offsets", "int32");
  }
  return out;
}

const Implementation& reference_implementation() {
  static const ReferenceImplementation impl;
  return impl;
}

}  // namespace seqpack::protocol
