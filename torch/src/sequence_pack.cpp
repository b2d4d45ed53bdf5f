// The LibTorch binding: tensors in, the GPU implementation's CPP host backend
// (seqpack::gpu::cpp) in the middle, tensors out. The only TU of the binding
// that includes ATen; it also includes Thrust (host backend).
#include "seqpack/torch/sequence_pack.hpp"

#include <cstring>
#include <numeric>

#include <ATen/ATen.h>
#include <thrust/copy.h>

#include "seqpack/common/index_math.hpp"
#include "seqpack/gpu/pack.hpp"
#include "seqpack/reference/errors.hpp"

namespace seqpack::torch_binding {

namespace ref = seqpack::reference;
namespace gpu = seqpack::gpu;

struct SequencePackMetadata::Impl {
  std::shared_ptr<const gpu::DeviceMetadata> device;
};

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& message) {
  throw ref::Error(ref::Errc::invalid_argument, field, message);
}

std::string shape_of(const at::Tensor& t) {
  std::string s = "[";
  for (std::int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// A defined CPU tensor with a row dimension.
void require_rows_tensor(const at::Tensor& t, const std::string& name) {
  if (!t.defined()) bad(name, "is an undefined tensor");
  if (!t.device().is_cpu()) {
    bad(name, "is on " + t.device().str() +
                  "; this build of the binding runs CPU tensors only (LibTorch without CUDA, see torch/README.md)");
  }
  if (t.dim() < 1) bad(name, "must have a row dimension, got a 0-d tensor");
}

std::size_t row_bytes_of(const at::Tensor& t) {
  std::size_t n = t.element_size();
  for (std::int64_t d = 1; d < t.dim(); ++d) n *= static_cast<std::size_t>(t.size(d));
  return n;
}

// The tensor's rows as bytes on the implementation's device (host memory on the CPP backend).
gpu::DeviceRows to_rows(const at::Tensor& t, const std::string& name) {
  require_rows_tensor(t, name);
  const at::Tensor c = t.contiguous();
  gpu::DeviceRows d{static_cast<std::size_t>(c.size(0)), row_bytes_of(c), {}};
  d.bytes = gpu::DeviceBuffer<unsigned char>(d.rows * d.row_bytes);
  if (!d.bytes.empty()) {
    const auto* p = static_cast<const unsigned char*>(c.data_ptr());
    thrust::copy(p, p + d.bytes.size(), d.bytes.begin());
  }
  return d;
}

// Rows back into a tensor of `like`'s dtype and trailing shape.
at::Tensor to_tensor(const gpu::DeviceRows& d, const at::Tensor& like) {
  std::vector<std::int64_t> sizes = like.sizes().vec();
  sizes[0] = static_cast<std::int64_t>(d.rows);
  at::Tensor t = at::empty(sizes, like.options());
  if (d.row_bytes != row_bytes_of(t)) {
    bad("rows", "hold " + std::to_string(d.row_bytes) + " bytes per row, " + shape_of(like) + " rows need " +
                    std::to_string(row_bytes_of(t)));
  }
  if (!d.bytes.empty()) thrust::copy(d.bytes.begin(), d.bytes.end(), static_cast<unsigned char*>(t.data_ptr()));
  return t;
}

template <typename T>
at::Tensor vector_tensor(const std::vector<T>& v, at::ScalarType type) {
  at::Tensor t = at::empty({static_cast<std::int64_t>(v.size())}, at::TensorOptions().dtype(type));
  if (!v.empty()) std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(T));
  return t;
}

template <typename T>
at::Tensor buffer_tensor(const gpu::DeviceBuffer<T>& v, at::ScalarType type) {
  return vector_tensor(gpu::to_host_vector(v), type);
}

gpu::DeviceBuffer<std::int64_t> ids_buffer(const at::Tensor& t, const std::string& name) {
  if (!t.defined() || t.scalar_type() != at::kLong || t.dim() != 1 || !t.device().is_cpu()) {
    bad(name, "must be a 1-D int64 CPU tensor of sample ids, got " +
                  (t.defined() ? std::string(at::toString(t.scalar_type())) + " " + shape_of(t) : "undefined"));
  }
  const at::Tensor c = t.contiguous();
  const auto* p = c.data_ptr<std::int64_t>();
  gpu::DeviceBuffer<std::int64_t> out(static_cast<std::size_t>(c.numel()));
  if (c.numel()) thrust::copy(p, p + c.numel(), out.begin());
  return out;
}

std::vector<std::int64_t> integer_values(const at::Tensor& t, const std::string& name) {
  if (!t.defined()) bad(name, "is an undefined tensor");
  if (!t.device().is_cpu())
    bad(name, "is on " + t.device().str() + "; this build of the binding runs CPU tensors only");
  if (at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type()) || t.scalar_type() == at::kBool) {
    bad(name, std::string("must hold integers, got dtype ") + at::toString(t.scalar_type()));
  }
  if (t.dim() > 1) bad(name, "must be 1-D, got shape " + shape_of(t));
  const at::Tensor c = t.to(at::kLong).contiguous().reshape({-1});
  const auto* p = c.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(p, p + c.numel());
}

ref::Layout layout_of(const std::vector<std::int64_t>& sample_lens, const std::vector<std::int64_t>& split_lens,
                      const std::vector<std::string>& attn_modes, const at::Tensor& und) {
  return ref::Layout{sample_lens, split_lens, attn_modes, integer_values(und, "packed_und_token_indexes")};
}

const gpu::DeviceMetadata& device_meta(const SequencePack& pack) {
  if (!pack.meta.impl() || !pack.meta.impl()->device) bad("pack.meta", "the pack has no metadata");
  return *pack.meta.impl()->device;
}

// The pack's tensors on the implementation's device.
gpu::DevicePack to_device_pack(const SequencePack& p) {
  device_meta(p);  // checks the metadata before anything reads it
  gpu::DevicePack d;
  d.meta = p.meta.impl()->device;
  ref::copy_pack_scalars(p, d);
  d.causal_seq = to_rows(p.causal_seq, "pack.causal_seq");
  d.full_only_seq = to_rows(p.full_only_seq, "pack.full_only_seq");
  if (d.causal_seq.row_bytes != d.full_only_seq.row_bytes) {
    bad("pack.full_only_seq", "rows of " + std::to_string(d.full_only_seq.row_bytes) +
                                  " bytes, the causal stream's are " + std::to_string(d.causal_seq.row_bytes));
  }
  d.causal_sample_ids = ids_buffer(p.causal_sample_ids, "pack.causal_sample_ids");
  d.full_only_sample_ids = ids_buffer(p.full_only_sample_ids, "pack.full_only_sample_ids");
  return d;
}

// A device pack back into tensors shaped like `like` (dtype and trailing shape).
SequencePack from_device_pack(const gpu::DevicePack& d, const at::Tensor& like) {
  SequencePack p;
  p.meta = SequencePackMetadata(std::make_shared<const SequencePackMetadata::Impl>(SequencePackMetadata::Impl{d.meta}));
  ref::copy_pack_scalars(d, p);
  p.causal_seq = to_tensor(d.causal_seq, like);
  p.full_only_seq = to_tensor(d.full_only_seq, like);
  p.causal_sample_ids = buffer_tensor(d.causal_sample_ids, at::kLong);
  p.full_only_sample_ids = buffer_tensor(d.full_only_sample_ids, at::kLong);
  return p;
}

// `value` must have `like`'s dtype and trailing shape.
void require_same_rows(const at::Tensor& value, const at::Tensor& like, const std::string& name) {
  require_rows_tensor(value, name);
  if (value.scalar_type() != like.scalar_type()) {
    bad(name, std::string("has dtype ") + at::toString(value.scalar_type()) + ", the pack holds " +
                  at::toString(like.scalar_type()));
  }
  if (value.sizes().slice(1) != like.sizes().slice(1)) {
    bad(name,
        "has shape " + shape_of(value) + ", the pack's rows are " + shape_of(like) + " (past the first dimension)");
  }
}

// Position ids as the reference's type: [len] or [axes, len], integer.
gpu::DevicePositionIds position_ids_of(const at::Tensor& t) {
  if (!t.defined()) bad("position_ids", "is an undefined tensor");
  if (!t.device().is_cpu()) bad("position_ids", "is on " + t.device().str() + "; this build runs CPU tensors only");
  if (t.scalar_type() != at::kLong && t.scalar_type() != at::kInt) {
    bad("position_ids", std::string("must be int64 or int32, got ") + at::toString(t.scalar_type()));
  }
  if (t.dim() != 1 && t.dim() != 2) bad("position_ids", "must be [len] or [axes, len], got shape " + shape_of(t));
  const at::Tensor c = t.to(at::kLong).contiguous();
  ref::PositionIds ids;
  ids.two_dimensional = t.dim() == 2;
  ids.axes = t.dim() == 2 ? static_cast<std::size_t>(t.size(0)) : 1;
  ids.len = static_cast<std::size_t>(t.size(t.dim() - 1));
  ids.values.assign(c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel());
  return gpu::to_device(ids);
}

at::Tensor position_tensor(const gpu::DevicePositionIds& d, const at::Tensor& like) {
  const ref::PositionIds h = gpu::to_host(d);
  at::Tensor t = vector_tensor(h.values, at::kLong);
  t = h.two_dimensional ? t.reshape({static_cast<std::int64_t>(h.axes), static_cast<std::int64_t>(h.len)}) : t;
  return t.to(like.scalar_type());
}

const ref::Metadata& summary(const SequencePackMetadata& m) { return m.impl()->device->summary; }

}  // namespace

at::Tensor SequencePackMetadata::sample_offsets() const {
  return vector_tensor(summary(*this).sample_offsets, at::kInt);
}
at::Tensor SequencePackMetadata::causal_seq_offsets() const {
  return vector_tensor(summary(*this).causal_seq_offsets, at::kInt);
}
at::Tensor SequencePackMetadata::full_only_seq_offsets() const {
  return vector_tensor(summary(*this).full_only_seq_offsets, at::kInt);
}
at::Tensor SequencePackMetadata::causal_indices() const {
  return buffer_tensor(impl_->device->causal_indices, at::kInt);
}
at::Tensor SequencePackMetadata::full_indices() const { return buffer_tensor(impl_->device->full_indices, at::kInt); }
at::Tensor SequencePackMetadata::causal_sample_ids() const {
  return buffer_tensor(impl_->device->causal_sample_ids, at::kLong);
}
at::Tensor SequencePackMetadata::full_only_sample_ids() const {
  return buffer_tensor(impl_->device->full_only_sample_ids, at::kLong);
}
std::int64_t SequencePackMetadata::max_sample_len() const { return summary(*this).max_sample_len; }
std::int64_t SequencePackMetadata::max_causal_len() const { return summary(*this).max_causal_len; }
std::int64_t SequencePackMetadata::max_full_len() const { return summary(*this).max_full_len; }
std::int64_t SequencePackMetadata::num_causal_tokens() const { return summary(*this).num_causal_tokens; }
std::int64_t SequencePackMetadata::num_full_tokens() const { return summary(*this).num_full_tokens; }
bool SequencePackMetadata::matches_layout(const std::vector<std::int64_t>& sample_lens,
                                          const std::vector<std::int64_t>& split_lens,
                                          const std::vector<std::string>& attn_modes) const {
  return summary(*this).matches_layout(ref::Layout{sample_lens, split_lens, attn_modes, {}});
}

SequencePackMetadata prepare_sequence_pack_metadata(const std::vector<std::int64_t>& sample_lens,
                                                    const std::vector<std::int64_t>& split_lens,
                                                    const std::vector<std::string>& attn_modes,
                                                    const at::Tensor& packed_und_token_indexes) {
  const ref::Layout layout = layout_of(sample_lens, split_lens, attn_modes, packed_und_token_indexes);
  return SequencePackMetadata(std::make_shared<const SequencePackMetadata::Impl>(
      SequencePackMetadata::Impl{std::make_shared<const gpu::DeviceMetadata>(gpu::prepare_metadata(layout))}));
}

SequencePack sequence_pack_from_packed_sequence(
    const at::Tensor& packed_sequence, const std::vector<std::string>& attn_modes,
    const std::vector<std::int64_t>& split_lens, const std::vector<std::int64_t>& sample_lens,
    const at::Tensor& packed_und_token_indexes,
    const at::Tensor& /*packed_gen_token_indexes: unused, as in the original*/, GraphMarks& marks,
    const BuildOptions& options, const std::optional<SequencePackMetadata>& prepared_metadata) {
  const ref::Layout layout = layout_of(sample_lens, split_lens, attn_modes, packed_und_token_indexes);
  const ref::Options o{options.cp_world_size,      options.pad_for_cuda_graphs,  options.is_image_batch,
                       options.full_seq_alignment, options.causal_seq_alignment, options.pad_segment_only_when_padded};
  const gpu::DeviceRows rows = to_rows(packed_sequence, "packed_sequence");
  const gpu::DevicePack d =
      gpu::build_pack(rows, layout, o, marks, prepared_metadata ? prepared_metadata->impl()->device : nullptr);
  return from_device_pack(d, packed_sequence);
}

at::Tensor get_und_seq(const SequencePack& pack) { return pack.causal_seq; }
at::Tensor get_gen_seq(const SequencePack& pack) { return pack.full_only_seq; }

void set_und_seq(SequencePack& pack, const at::Tensor& value) {
  require_rows_tensor(value, "value");
  if (value.size(0) != pack.causal_seq.size(0)) {
    bad("value", "has " + std::to_string(value.size(0)) + " rows, the causal stream has " +
                     std::to_string(pack.causal_seq.size(0)));
  }
  pack.causal_seq = value;
}

void set_gen_seq(SequencePack& pack, const at::Tensor& value) {
  require_rows_tensor(value, "value");
  if (value.size(0) != pack.full_only_seq.size(0)) {
    bad("value", "has " + std::to_string(value.size(0)) + " rows, the full stream has " +
                     std::to_string(pack.full_only_seq.size(0)));
  }
  pack.full_only_seq = value;
}

at::Tensor get_all_seq(const SequencePack& pack) {
  return to_tensor(gpu::get_all_seq(to_device_pack(pack)), pack.causal_seq);
}

std::tuple<at::Tensor, at::Tensor, std::int64_t> get_all_seq_padded(const SequencePack& pack) {
  const gpu::DeviceAllSeqPadded a = gpu::get_all_seq_padded(to_device_pack(pack));
  return {to_tensor(a.seq, pack.causal_seq), vector_tensor(a.offsets, at::kInt), a.max_len};
}

void set_all_seq(SequencePack& pack, const at::Tensor& value) {
  require_same_rows(value, pack.causal_seq, "value");
  gpu::DevicePack d = to_device_pack(pack);
  gpu::set_all_seq(d, to_rows(value, "value"));
  // In place, as the original writes into the pack's own stream tensors.
  pack.causal_seq.copy_(to_tensor(d.causal_seq, pack.causal_seq));
  pack.full_only_seq.copy_(to_tensor(d.full_only_seq, pack.full_only_seq));
}

std::tuple<at::Tensor, at::Tensor> get_causal_seq(const SequencePack& pack) {
  return {pack.causal_seq, vector_tensor(device_meta(pack).summary.causal_seq_offsets, at::kInt)};
}

std::tuple<at::Tensor, at::Tensor> get_full_only_seq(const SequencePack& pack) {
  return {pack.full_only_seq, vector_tensor(device_meta(pack).summary.full_only_seq_offsets, at::kInt)};
}

std::tuple<at::Tensor, at::Tensor, std::int64_t> get_causal_seq_padded(const SequencePack& pack) {
  const ref::Metadata& m = device_meta(pack).summary;
  if (pack.pad_segment) {
    // The pad-segment offsets describe the unsharded stream (as the reference).
    if (pack.is_sharded) {
      throw ref::Error(ref::Errc::sharded_pack, "pack.is_sharded",
                       "get_causal_seq_padded: a sharded pack's pad-segment offsets describe the unsharded stream");
    }
    return {pack.causal_seq, vector_tensor(pack.pad_segment->causal_seq_offsets, at::kInt),
            pack.pad_segment->max_causal_len};
  }
  return {pack.causal_seq, vector_tensor(m.causal_seq_offsets, at::kInt), m.max_causal_len};
}

std::tuple<at::Tensor, at::Tensor, std::int64_t> get_full_only_seq_padded(const SequencePack& pack) {
  const ref::Metadata& m = device_meta(pack).summary;
  if (pack.pad_segment) {
    // The pad-segment offsets describe the unsharded stream (as the reference).
    if (pack.is_sharded) {
      throw ref::Error(ref::Errc::sharded_pack, "pack.is_sharded",
                       "get_full_only_seq_padded: a sharded pack's pad-segment offsets describe the unsharded stream");
    }
    return {pack.full_only_seq, vector_tensor(pack.pad_segment->full_only_seq_offsets, at::kInt),
            pack.pad_segment->max_full_len};
  }
  return {pack.full_only_seq, vector_tensor(m.full_only_seq_offsets, at::kInt), m.max_full_len};
}

bool has_pad_segment(const SequencePack& pack) { return pack.pad_segment.has_value(); }

SequencePack zeros_like(const SequencePack& orig, const std::optional<std::vector<std::int64_t>>& shape) {
  device_meta(orig);
  std::vector<std::int64_t> trailing(orig.causal_seq.sizes().begin() + 1, orig.causal_seq.sizes().end());
  if (shape) {
    if (shape->empty() || shape->front() != -1) {
      bad("shape", "must be (-1, trailing...), the row count coming from the pack");
    }
    trailing.assign(shape->begin() + 1, shape->end());
    for (const std::int64_t s : trailing) {
      if (s < 0) bad("shape", "has a negative trailing size " + std::to_string(s));
    }
  }
  const auto zeros = [&](const at::Tensor& stream) {
    std::vector<std::int64_t> sizes{stream.size(0)};
    sizes.insert(sizes.end(), trailing.begin(), trailing.end());
    return at::zeros(sizes, stream.options());
  };
  return from_mode_splits(zeros(orig.causal_seq), zeros(orig.full_only_seq), orig);
}

SequencePack from_all_seq(const at::Tensor& packed_sequence, const SequencePack& metadata_source) {
  require_rows_tensor(packed_sequence, "packed_sequence");
  gpu::DevicePack source = to_device_pack(metadata_source);
  const gpu::DevicePack d = gpu::from_all_seq(to_rows(packed_sequence, "packed_sequence"), source);
  return from_device_pack(d, packed_sequence);
}

SequencePack from_mode_splits(const at::Tensor& causal_seq, const at::Tensor& full_only_seq, const SequencePack& orig,
                              std::optional<bool> is_sharded) {
  device_meta(orig);
  require_rows_tensor(causal_seq, "causal_seq");
  require_rows_tensor(full_only_seq, "full_only_seq");
  SequencePack out = orig;
  out.causal_seq = causal_seq;
  out.full_only_seq = full_only_seq;
  out.is_sharded = is_sharded.value_or(orig.is_sharded);
  return out;
}

SequencePack from_und_gen_splits(const at::Tensor& und_seq, const at::Tensor& gen_seq, const SequencePack& orig) {
  return from_mode_splits(und_seq, gen_seq, orig);
}

std::pair<std::int64_t, std::int64_t> get_num_real_tokens(const SequencePack& pack) {
  const ref::Metadata& m = device_meta(pack).summary;
  if (pack.is_sharded) {
    if (!pack.num_causal_tokens_local || !pack.num_full_tokens_local) {
      throw ref::Error(ref::Errc::invalid_argument, "pack.num_causal_tokens_local",
                       "a shard must carry its local real-token counts; build it with shard_pack");
    }
    return {*pack.num_causal_tokens_local, *pack.num_full_tokens_local};
  }
  return {m.num_causal_tokens, m.num_full_tokens};
}

std::int64_t num_local_real_tokens(std::int64_t num_real_tokens, std::int64_t rank, std::int64_t shard_len) {
  return common::num_local_real_tokens(num_real_tokens, rank, shard_len);
}

at::Tensor get_und_position_ids(const at::Tensor& position_ids, const SequencePack& pack) {
  return position_tensor(gpu::get_und_position_ids(position_ids_of(position_ids), to_device_pack(pack)), position_ids);
}

at::Tensor get_gen_position_ids(const at::Tensor& position_ids, const SequencePack& pack) {
  return position_tensor(gpu::get_gen_position_ids(position_ids_of(position_ids), to_device_pack(pack)), position_ids);
}

SequencePack shard_pack(const SequencePack& pack, std::int64_t rank, std::int64_t world_size) {
  return from_device_pack(gpu::shard_pack(to_device_pack(pack), rank, world_size), pack.causal_seq);
}

SequencePack gather_shards(const std::vector<SequencePack>& shards) {
  if (shards.empty()) bad("shards", "no shards to gather");
  std::vector<gpu::DevicePack> d;
  d.reserve(shards.size());
  for (std::size_t r = 0; r < shards.size(); ++r) {
    require_same_rows(shards[r].causal_seq, shards[0].causal_seq, "shards[" + std::to_string(r) + "].causal_seq");
    d.push_back(to_device_pack(shards[r]));
  }
  return from_device_pack(gpu::gather_shards(d), shards[0].causal_seq);
}

at::Tensor shard_position_ids(const at::Tensor& position_ids, const SequencePack& pack, std::int64_t rank,
                              std::int64_t world_size) {
  return position_tensor(gpu::shard_position_ids(position_ids_of(position_ids), to_device_pack(pack), rank, world_size),
                         position_ids);
}

}  // namespace seqpack::torch_binding
