// The invariant catalogue's stream properties: round trips through the
// getters and setters (roundtrip.*) and context-parallel shards (cp.*). The
// catalogue is listed in catalogue.cpp; catalogue_internal.hpp declares what
// the files share.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "catalogue_internal.hpp"
#include "seqpack/properties/spec.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::properties::detail {

// --- round trips -------------------------------------------------------------

void roundtrip_get_all_seq(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  REQUIRE(ref::get_all_seq(p) == subject.rows(), "get_all_seq differs from the input");
}

void roundtrip_from_all_seq(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  const ref::Pack q = ref::from_all_seq(ref::get_all_seq(p), p);
  REQUIRE(q.causal_seq == p.causal_seq && q.full_only_seq == p.full_only_seq, "from_all_seq(get_all_seq) differs");
  // Rows distinct from the source's: an implementation that returns the
  // source's own streams fails here. They land where a build puts them.
  Case other = subject.c();
  other.data_seed = other.data_seed + 1;
  const ref::Rows value = case_rows(other);
  const ref::Pack r = ref::from_all_seq(value, p);
  const ref::Metadata& m = *p.meta;
  REQUIRE(r.causal_seq.rows() == p.causal_seq.rows() && r.full_only_seq.rows() == p.full_only_seq.rows(),
          "from_all_seq changed the padded lengths");
  for (std::size_t i = 0; i < r.causal_seq.rows(); ++i) {
    const bool real = i < m.causal_indices.size();
    REQUIRE(real ? rows_equal(r.causal_seq, i, value, static_cast<std::size_t>(m.causal_indices[i]))
                 : row_is_zero(r.causal_seq, i),
            "from_all_seq causal row " << i << (real ? " is not its packed row" : " (padding) is not zero"));
  }
  for (std::size_t i = 0; i < r.full_only_seq.rows(); ++i) {
    const bool real = i < m.full_indices.size();
    REQUIRE(real ? rows_equal(r.full_only_seq, i, value, static_cast<std::size_t>(m.full_indices[i]))
                 : row_is_zero(r.full_only_seq, i),
            "from_all_seq full row " << i << (real ? " is not its packed row" : " (padding) is not zero"));
  }
}

void roundtrip_set_all_seq(const Subject& subject) {
  const Case& c = subject.c();
  ref::Pack p = subject.pack();  // a copy: the property writes to it
  Case other = c;
  other.data_seed = c.data_seed + 1;
  const ref::Rows value = case_rows(other);
  const ref::Pack before = p;
  ref::set_all_seq(p, value);
  REQUIRE(ref::get_all_seq(p) == value, "set_all_seq then get_all_seq differs");
  for (std::size_t r = static_cast<std::size_t>(p.meta->num_causal_tokens); r < p.causal_seq.rows(); ++r)
    REQUIRE(rows_equal(p.causal_seq, r, before.causal_seq, r), "set_all_seq wrote causal padding row " << r);
  for (std::size_t r = static_cast<std::size_t>(p.meta->num_full_tokens); r < p.full_only_seq.rows(); ++r)
    REQUIRE(rows_equal(p.full_only_seq, r, before.full_only_seq, r), "set_all_seq wrote full padding row " << r);
}

void roundtrip_all_seq_padded(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  const ref::AllSeqPadded all = ref::get_all_seq_padded(p);
  const ref::Rows& input = subject.rows();
  if (!p.pad_segment) {
    REQUIRE(all.seq == input && all.offsets == p.meta->sample_offsets && all.max_len == p.meta->max_sample_len,
            "without a pad segment get_all_seq_padded must be get_all_seq with the plain offsets");
    return;
  }
  REQUIRE(all.seq.rows() == p.causal_seq.rows() + p.full_only_seq.rows(), all.seq.rows() << " rows");
  for (std::size_t r = 0; r < input.rows(); ++r)
    REQUIRE(rows_equal(all.seq, r, input, r), "real row " << r << " differs");
  for (std::size_t r = input.rows(); r < all.seq.rows(); ++r)
    REQUIRE(row_is_zero(all.seq, r), "tail row " << r << " is not zero");
  REQUIRE(all.offsets == p.pad_segment->sample_offsets && all.max_len == p.pad_segment->max_sample_len,
          show(all.offsets));
}

void roundtrip_zeros_like(const Subject& subject) {
  const ref::Pack& p = subject.pack();
  const ref::Pack z = ref::zeros_like(p);
  REQUIRE(z.causal_seq == ref::Rows(p.causal_seq.rows(), p.causal_seq.row_bytes()) &&
              z.full_only_seq == ref::Rows(p.full_only_seq.rows(), p.full_only_seq.row_bytes()),
          "zeros_like is not zero streams of the same shape");
  REQUIRE(z.causal_sample_ids == p.causal_sample_ids && z.pad_segment == p.pad_segment && z.meta == p.meta,
          "zeros_like changed the metadata");
}

// --- context parallelism -----------------------------------------------------

namespace {

bool divisible(const ref::Pack& p, std::int64_t w) {
  return p.causal_seq.rows() % static_cast<std::size_t>(w) == 0 &&
         p.full_only_seq.rows() % static_cast<std::size_t>(w) == 0;
}

}  // namespace

void cp_not_divisible_iff(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  bool threw = false;
  try {
    ref::shard_pack(p, 0, w);
  } catch (const ref::Error& e) {
    REQUIRE(e.code() == ref::Errc::not_divisible, e.what());
    threw = true;
  }
  REQUIRE(threw == !divisible(p, w), "shard_pack threw " << threw << " for rows " << p.causal_seq.rows() << "/"
                                                         << p.full_only_seq.rows() << " and world " << w);
}

void cp_shards_tile(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  if (!divisible(p, w)) return;
  std::size_t causal_at = 0, full_at = 0;
  for (std::int64_t r = 0; r < w; ++r) {
    const ref::Pack s = ref::shard_pack(p, r, w);
    REQUIRE(s.causal_seq.rows() * static_cast<std::size_t>(w) == p.causal_seq.rows(),
            "causal shard of " << s.causal_seq.rows());
    REQUIRE(s.full_only_seq.rows() * static_cast<std::size_t>(w) == p.full_only_seq.rows(),
            "full shard of " << s.full_only_seq.rows());
    for (std::size_t i = 0; i < s.causal_seq.rows(); ++i, ++causal_at) {
      REQUIRE(rows_equal(s.causal_seq, i, p.causal_seq, causal_at), "rank " << r << " causal row " << i);
      REQUIRE(s.causal_sample_ids[i] == p.causal_sample_ids[causal_at], "rank " << r << " causal id " << i);
    }
    for (std::size_t i = 0; i < s.full_only_seq.rows(); ++i, ++full_at) {
      REQUIRE(rows_equal(s.full_only_seq, i, p.full_only_seq, full_at), "rank " << r << " full row " << i);
      REQUIRE(s.full_only_sample_ids[i] == p.full_only_sample_ids[full_at], "rank " << r << " full id " << i);
    }
  }
}

void cp_gather_identity(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  if (!divisible(p, w)) return;
  const ref::Pack g = ref::gather_shards(ref::shard_pack_all(p, w));
  REQUIRE(g.causal_seq == p.causal_seq && g.full_only_seq == p.full_only_seq &&
              g.causal_sample_ids == p.causal_sample_ids && g.full_only_sample_ids == p.full_only_sample_ids &&
              !g.is_sharded,
          "gathered pack differs");
}

void cp_local_counts(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  if (!divisible(p, w)) return;
  const auto lc = static_cast<std::int64_t>(p.causal_seq.rows()) / w,
             lf = static_cast<std::int64_t>(p.full_only_seq.rows()) / w;
  std::int64_t sc = 0, sf = 0;
  for (std::int64_t r = 0; r < w; ++r) {
    const auto [c_local, f_local] = ref::get_num_real_tokens(ref::shard_pack(p, r, w));
    const std::int64_t want_c = std::clamp<std::int64_t>(p.meta->num_causal_tokens - r * lc, 0, lc);
    const std::int64_t want_f = std::clamp<std::int64_t>(p.meta->num_full_tokens - r * lf, 0, lf);
    REQUIRE(c_local == want_c && f_local == want_f,
            "rank " << r << ": (" << c_local << ", " << f_local << ") want (" << want_c << ", " << want_f << ")");
    sc += c_local;
    sf += f_local;
  }
  REQUIRE(sc == p.meta->num_causal_tokens && sf == p.meta->num_full_tokens,
          "local counts add up to " << sc << ", " << sf);
}

void cp_position_ids(const Subject& subject) {
  const Case& c = subject.c();
  const ref::Pack& p = subject.pack();
  const std::int64_t w = c.options.cp_world_size;
  if (!divisible(p, w)) return;
  ref::PositionIds ids{true, 3, static_cast<std::size_t>(c.rows), {}};
  for (std::size_t a = 0; a < 3; ++a)
    for (std::int64_t i = 0; i < c.rows; ++i) ids.values.push_back(static_cast<std::int64_t>(a) * 1000003 + i * 7 + 1);
  const auto& m = *p.meta;
  const std::size_t lc = p.causal_seq.rows() / static_cast<std::size_t>(w),
                    lf = p.full_only_seq.rows() / static_cast<std::size_t>(w);
  for (std::int64_t r = 0; r < w; ++r) {
    const ref::PositionIds got = ref::shard_position_ids(ids, p, r, w);
    REQUIRE(got.len == lc + lf && got.axes == 3, "shape [" << got.axes << ", " << got.len << "]");
    for (std::size_t a = 0; a < 3; ++a) {
      for (std::size_t i = 0; i < lc + lf; ++i) {
        const bool causal = i < lc;
        const std::size_t k =
            causal ? static_cast<std::size_t>(r) * lc + i : static_cast<std::size_t>(r) * lf + (i - lc);
        const I32& idx = causal ? m.causal_indices : m.full_indices;
        const std::int64_t want = k < idx.size() ? ids.values[a * ids.len + static_cast<std::size_t>(idx[k])] : 0;
        REQUIRE(got.values[a * got.len + i] == want, "rank " << r << " axis " << a << " position " << i);
      }
    }
  }
}
}  // namespace seqpack::properties::detail
