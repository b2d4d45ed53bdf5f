// The views a result carries beyond the pack (PROTOCOL.md, "Views"): the
// getters, position ids, setters, derived packs, cp_local and cp_global
// shards, metadata reuse and the payload, written by more_views
// (views.hpp); and the payload and foreign rows those views build on.
// Result lines are in results.cpp, the writer in writer.hpp.
#include "views.hpp"

#include <algorithm>
#include <cstring>

#include "seqpack/protocol/protocol.hpp"

namespace seqpack::protocol {

namespace ref = seqpack::reference;

namespace detail {
namespace {

std::string base64(const std::byte* data, std::size_t n) {
  static const char* const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out((n + 2) / 3 * 4, '=');
  char* o = out.data();
  const auto* in = reinterpret_cast<const unsigned char*>(data);
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3, o += 4) {
    const std::uint32_t v = (std::uint32_t{in[i]} << 16) | (std::uint32_t{in[i + 1]} << 8) | in[i + 2];
    o[0] = digits[v >> 18];
    o[1] = digits[(v >> 12) & 63];
    o[2] = digits[(v >> 6) & 63];
    o[3] = digits[v & 63];
  }
  if (i < n) {
    std::uint32_t v = std::uint32_t{in[i]} << 16;
    if (i + 1 < n) v |= std::uint32_t{in[i + 1]} << 8;
    o[0] = digits[v >> 18];
    o[1] = digits[(v >> 12) & 63];
    if (i + 1 < n) o[2] = digits[(v >> 6) & 63];
  }
  return out;
}
std::string base64(const ref::Rows& rows) { return base64(rows.data(), rows.size_bytes()); }

ref::PositionIds position_ids(std::int64_t rows, bool three) {
  ref::PositionIds ids;
  ids.two_dimensional = three;
  ids.axes = three ? 3 : 1;
  ids.len = static_cast<std::size_t>(rows);
  ids.values.resize(ids.axes * ids.len);
  for (std::size_t a = 0; a < ids.axes; ++a) {
    for (std::size_t t = 0; t < ids.len; ++t) {
      ids.values[a * ids.len + t] =
          static_cast<std::int64_t>(a) * (std::int64_t{1} << 26) + static_cast<std::int64_t>(t);
    }
  }
  return ids;
}

void position_list(Writer& w, const ref::PositionIds& ids) {
  if (!ids.two_dimensional) {
    w.ints(ids.values);
    return;
  }
  w.open_list();
  for (std::size_t a = 0; a < ids.axes; ++a) {
    const auto from = ids.values.begin() + static_cast<std::ptrdiff_t>(a * ids.len);
    w.ints(std::vector<std::int64_t>(from, from + static_cast<std::ptrdiff_t>(ids.len)));
  }
  w.close_list();
}

// S(pack) of PROTOCOL.md: the streams, the real counts, and get_all_seq when unsharded.
void summary(Writer& w, const Built& b) {
  const ref::Pack& p = b.pack();
  w.open().key("causal_rows").ints(row_names(p.causal_seq)).key("full_only_rows").ints(row_names(p.full_only_seq));
  const auto [c, f] = b.num_real_tokens();
  w.key("num_real_tokens").list(std::vector<std::int64_t>{c, f});
  if (!p.is_sharded) w.key("all_seq_rows").ints(row_names(b.all_seq()));
  w.close();
}

void zeros_summary(Writer& w, const Built& b) {
  const ref::Pack& p = b.pack();
  std::int64_t nonzero = 0;
  for (const ref::Rows* s : {&p.causal_seq, &p.full_only_seq}) {
    for (std::size_t i = 0; i < s->size_bytes(); ++i) nonzero += s->data()[i] != std::byte{0};
  }
  w.open().key("causal_len").num(static_cast<std::int64_t>(p.causal_seq.rows()));
  w.key("full_only_len").num(static_cast<std::int64_t>(p.full_only_seq.rows()));
  w.key("columns").num(static_cast<std::int64_t>(p.causal_seq.row_bytes() / 4)).key("nonzero").num(nonzero).close();
}

void padded_stream(Writer& w, const PaddedStream& s) {
  w.open().key("rows").ints(row_names(s.seq)).key("offsets").ints(s.offsets).key("max_len").num(s.max_len).close();
}

// The world sizes of the cp_local view: {cp, 2, 3} without 1, sorted.
std::vector<std::int64_t> local_world_sizes(std::int64_t cp) {
  std::vector<std::int64_t> w = {2, 3};
  if (cp > 1 && cp != 2 && cp != 3) w.push_back(cp);
  std::sort(w.begin(), w.end());
  return w;
}

// The shards at `world`; when a stream does not divide by it, writes
// `"error": "not_divisible"`, closes the entry and returns nullptr.
const std::vector<std::unique_ptr<Built>>* shard_all(Writer& w, Shards& shards, std::int64_t world) {
  const Shards::Set& set = shards.at(world);
  if (set.refused) {
    w.key("error").str(ref::to_string(set.refused->code())).close();
    return nullptr;
  }
  return &set.ranks;
}

void cp_local(Writer& w, Shards& all, const protocol::Case& c) {
  w.open_list();
  const ref::PositionIds ids = position_ids(c.rows, false);
  for (const std::int64_t world : local_world_sizes(c.options.cp_world_size)) {
    w.open().key("world_size").num(world);
    const auto* shards = shard_all(w, all, world);
    if (!shards) continue;
    w.key("shards").open_list();
    for (const auto& local : *shards) {
      const ref::Pack& p = local->pack();
      w.open().key("causal_rows").ints(row_names(p.causal_seq)).key("full_only_rows").ints(row_names(p.full_only_seq));
      const auto [lc, lf] = local->num_real_tokens();
      w.key("num_real_tokens").list(std::vector<std::int64_t>{lc, lf});
      w.key("causal_sample_ids").ints(p.causal_sample_ids).key("full_only_sample_ids").ints(p.full_only_sample_ids);
      w.key("from_all_seq");
      summary(w, *local->from_all_seq(foreign_rows(7, p.causal_seq.rows() + p.full_only_seq.rows())));
      w.key("refused").open();
      w.key("all_seq").str(local->error_class(Built::Call::all_seq, ids));
      w.key("all_seq_padded").str(local->error_class(Built::Call::all_seq_padded, ids));
      w.key("position_ids").str(local->error_class(Built::Call::und_position_ids, ids));
      w.key("gen_position_ids").str(local->error_class(Built::Call::gen_position_ids, ids));
      w.key("causal_padded").str(local->error_class(Built::Call::causal_padded, ids));
      w.key("full_only_padded").str(local->error_class(Built::Call::full_only_padded, ids));
      w.close().close();
    }
    w.close_list().close();
  }
  w.close_list();
}

// What shards keep of the whole pack (global offsets and maxima), their
// position ids and the pack gathered back: the framework's CP utilities,
// for each world size of cp_local.
void cp_global(Writer& w, const Built& b, Shards& all, const protocol::Case& c) {
  w.open_list();
  const ref::PositionIds one = position_ids(c.rows, false), three = position_ids(c.rows, true);
  for (const std::int64_t world : local_world_sizes(c.options.cp_world_size)) {
    w.open().key("world_size").num(world);
    const auto* found = shard_all(w, all, world);
    if (!found) continue;
    const auto& shards = *found;
    w.key("shards").open_list();
    for (std::int64_t r = 0; r < world; ++r) {
      const ref::Pack& p = shards[static_cast<std::size_t>(r)]->pack();
      const ref::Metadata& m = *p.meta;
      w.open().key("causal_seq_offsets").ints(m.causal_seq_offsets).key("full_only_seq_offsets");
      w.ints(m.full_only_seq_offsets).key("sample_offsets").ints(m.sample_offsets);
      w.key("max_lens").list(std::vector<std::int64_t>{m.max_causal_len, m.max_full_len, m.max_sample_len});
      w.key("pad_segment");
      if (p.pad_segment) {
        const ref::PadSegment& ps = *p.pad_segment;
        w.open().key("causal_seq_offsets").ints(ps.causal_seq_offsets).key("full_only_seq_offsets");
        w.ints(ps.full_only_seq_offsets).key("sample_offsets").ints(ps.sample_offsets);
        w.key("max_lens").list(std::vector<std::int64_t>{ps.max_causal_len, ps.max_full_len, ps.max_sample_len});
        w.close();
      } else {
        w.null();
      }
      w.key("position_ids");
      position_list(w, b.shard_position_ids(one, r, world));
      w.key("position_ids_3d");
      position_list(w, b.shard_position_ids(three, r, world));
      w.close();
    }
    w.close_list();
    std::vector<const Built*> parts;
    parts.reserve(shards.size());
    for (const auto& s : shards) parts.push_back(s.get());
    // A refused gather is the error class (the reference never refuses its own shards).
    std::unique_ptr<Built> whole;
    const std::string refused = class_of([&] { whole = b.gather(parts); });
    w.key("gathered");
    if (!whole) {
      w.str(refused).close();
      continue;
    }
    const ref::Pack& g = whole->pack();
    w.open().key("causal_rows").ints(row_names(g.causal_seq));
    w.key("full_only_rows").ints(row_names(g.full_only_seq)).key("causal_sample_ids").ints(g.causal_sample_ids);
    w.key("full_only_sample_ids").ints(g.full_only_sample_ids).close();
    w.close();
  }
  w.close_list();
}

}  // namespace

bool wants(const std::vector<std::string>& views, const char* v) {
  return std::find(views.begin(), views.end(), v) != views.end();
}

void more_views(Writer& w, const Implementation& impl, const Built& b, Shards& shards, const protocol::Case& c,
                const ref::Rows& rows, const std::vector<std::string>& views) {
  const ref::Pack& p = b.pack();
  const auto rebuild = [&](const ref::Rows& r) {
    ref::GraphMarks m = c.marks;
    return impl.build(r, c, m);
  };
  if (wants(views, "getters")) {
    w.key("getters").open().key("und_rows").ints(row_names(b.und_seq())).key("gen_rows").ints(row_names(b.gen_seq()));
    w.key("all_seq_rows").ints(row_names(b.all_seq()));
    w.key("causal_padded");
    padded_stream(w, b.causal_padded());
    w.key("full_only_padded");
    padded_stream(w, b.full_only_padded());
    w.key("has_pad_segment").boolean(b.has_pad_segment());
    const auto [nc, nf] = b.num_real_tokens();
    w.key("num_real_tokens").list(std::vector<std::int64_t>{nc, nf}).close();
  }
  if (wants(views, "dtypes")) {
    w.key("dtypes").open();
    for (const auto& [field, dtype] : b.dtypes()) w.key(field.c_str()).str(dtype);
    w.close();
  }
  if (wants(views, "position_ids")) {
    w.key("position_ids").open();
    const ref::PositionIds one = position_ids(c.rows, false), three = position_ids(c.rows, true);
    w.key("und");
    position_list(w, b.und_position_ids(one));
    w.key("gen");
    position_list(w, b.gen_position_ids(one));
    w.key("und_3d");
    position_list(w, b.und_position_ids(three));
    w.key("gen_3d");
    position_list(w, b.gen_position_ids(three));
    w.close();
  }
  if (wants(views, "setters")) {
    const std::unique_ptr<Built> s = rebuild(rows);
    s->set_und_seq(foreign_rows(1, p.causal_seq.rows()));
    s->set_gen_seq(foreign_rows(2, p.full_only_seq.rows()));
    w.key("setters").open().key("after_set_und_gen");
    summary(w, *s);
    s->set_all_seq(foreign_rows(3, static_cast<std::size_t>(c.rows)));
    w.key("after_set_all");
    summary(w, *s);
    w.close();
  }
  if (wants(views, "derived")) {
    const ref::Rows causal = foreign_rows(5, p.causal_seq.rows()), full = foreign_rows(6, p.full_only_seq.rows());
    w.key("derived").open().key("from_all_seq");
    summary(w, *b.from_all_seq(foreign_rows(4, static_cast<std::size_t>(c.rows))));
    w.key("from_mode_splits");
    summary(w, *b.from_mode_splits(causal, full));
    w.key("from_und_gen_splits");
    summary(w, *b.from_und_gen_splits(causal, full));
    w.key("zeros_like");
    zeros_summary(w, *b.zeros_like(std::nullopt));
    w.key("zeros_like_shaped");
    zeros_summary(w, *b.zeros_like(std::size_t{12}));
    w.close();
  }
  if (wants(views, "cp_local")) {
    w.key("cp_local");
    cp_local(w, shards, c);
  }
  if (wants(views, "cp_global")) {
    w.key("cp_global");
    cp_global(w, b, shards, c);
  }
  if (wants(views, "metadata_reuse")) {
    ref::GraphMarks m = c.marks;
    w.key("metadata_reuse").open().key("matching");
    summary(w, *impl.build_prepared(rows, c, m, c.layout));
    protocol::Case other = c;
    other.layout.sample_lens.push_back(0);
    m = c.marks;
    w.key("mismatching").str(class_of([&] { impl.build_prepared(rows, other, m, c.layout); }));
    // The same rows split differently: the first split of 2+ rows cut in two.
    const auto& splits = c.layout.split_lens;
    const auto cut = std::find_if(splits.begin(), splits.end(), [](std::int64_t n) { return n >= 2; });
    if (cut != splits.end()) {
      other = c;
      const auto at = cut - splits.begin();
      other.layout.split_lens[static_cast<std::size_t>(at)] = 1;
      other.layout.split_lens.insert(other.layout.split_lens.begin() + at + 1, *cut - 1);
      other.layout.attn_modes.insert(other.layout.attn_modes.begin() + at + 1,
                                     c.layout.attn_modes[static_cast<std::size_t>(at)]);
      m = c.marks;
      w.key("mismatching_splits").str(class_of([&] { impl.build_prepared(rows, other, m, c.layout); }));
    }
    // The und check belongs to the preparation (TRACE.md 11): a build reusing
    // the metadata does not look at its und indexes again, so listing the
    // first row of the first non-empty full split changes nothing. S, or the
    // class of a port that refuses.
    std::int64_t start = 0;
    for (std::size_t j = 0; j < splits.size() && j < c.layout.attn_modes.size(); start += splits[j], ++j) {
      if (c.layout.attn_modes[j] != "full" || splits[j] == 0) continue;
      other = c;
      other.layout.und_token_indexes.push_back(start);
      m = c.marks;
      std::unique_ptr<Built> reused;
      const std::string cls = class_of([&] { reused = impl.build_prepared(rows, other, m, c.layout); });
      w.key("und_ignored");
      if (reused) {
        summary(w, *reused);
      } else {
        w.str(cls);
      }
      break;
    }
    w.close();
  }
  if (wants(views, "payload") &&
      static_cast<std::int64_t>(p.causal_seq.rows() + p.full_only_seq.rows()) <= kMaxPayloadRows) {
    ref::Rows data(static_cast<std::size_t>(c.rows), 8);
    for (std::size_t t = 0; t < data.rows(); ++t) {
      const std::uint64_t bits = payload_bits(static_cast<std::int64_t>(t));
      std::memcpy(data.row(t), &bits, 8);  // little-endian hosts only (checked in payload_bits' test)
    }
    const std::unique_ptr<Built> d = rebuild(data);
    w.key("payload").open().key("causal").plain_str(base64(d->pack().causal_seq));
    w.key("full_only").plain_str(base64(d->pack().full_only_seq));
    w.key("all_seq_padded").plain_str(base64(d->all_seq_padded().seq)).close();
  }
}

}  // namespace detail

std::uint64_t payload_bits(std::int64_t t) {
  const auto u = static_cast<std::uint64_t>(t);
  switch (t % 5) {
    case 0:
      return 0x7FF8000000000000ull + u + 1;  // quiet NaN with a payload
    case 1:
      return 0x8000000000000000ull;  // -0.0
    case 2:
      return u + 1;  // a denormal
    case 3:
      return 0xFFF0000000000000ull + u + 1;  // negative NaN, signalling pattern
    default:
      return 0x3FF0000000000000ull + u + 1;  // a normal number near 1
  }
}

ref::Rows foreign_rows(int source, std::size_t n) {
  ref::Rows rows(n, 4);
  const auto base = static_cast<std::uint32_t>(source) << 26;
  for (std::size_t k = 0; k < n; ++k) {
    const auto v = static_cast<std::uint32_t>(base + k + 1);
    std::memcpy(rows.row(k), &v, 4);
  }
  return rows;
}

}  // namespace seqpack::protocol
