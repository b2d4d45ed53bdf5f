// The oracle's answers and the comparison of results.
#include "seqpack/protocol/protocol.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <istream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/case_json.hpp"
#include "seqpack/protocol/render.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::protocol {
namespace {

namespace ref = seqpack::reference;
using nlohmann::json;

// A small append-only JSON writer: the result lines are large integer arrays,
// which nlohmann's DOM builds slowly. The buffer grows without zero-filling.
class Writer {
 public:
  std::string text() const { return std::string(buf_.get(), size_); }

  Writer& open() { return sep(), put('{'), first_ = true, *this; }
  Writer& close() { return put('}'), first_ = false, *this; }
  Writer& key(const char* k) {
    sep();
    put('"');
    raw(k, std::strlen(k));
    raw("\":", 2);
    first_ = true;
    return *this;
  }
  Writer& str(const std::string& s) {
    sep();
    // Printable ASCII without quote or backslash is written as it is (what
    // the serializer below writes for it, without its allocations).
    if (writes_as_is(s)) {
      put('"');
      raw(s.data(), s.size());
      put('"');
      return *this;
    }
    // Text that is not UTF-8 (a port's or a user's) is written with U+FFFD.
    const std::string quoted = json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    raw(quoted.data(), quoted.size());
    return *this;
  }
  /// A string that needs no escaping (base64, class names).
  Writer& plain_str(const std::string& s) {
    sep();
    put('"');
    raw(s.data(), s.size());
    put('"');
    return *this;
  }
  Writer& num(std::int64_t v) {
    sep();
    reserve(24);
    size_ = static_cast<std::size_t>(std::to_chars(buf_.get() + size_, buf_.get() + cap_, v).ptr - buf_.get());
    return *this;
  }
  Writer& boolean(bool v) {
    sep();
    return v ? raw("true", 4) : raw("false", 5);
  }
  Writer& null() {
    sep();
    return raw("null", 4);
  }
  // Rows, ids and offsets come in runs of equal or consecutive values, so a
  // number is mostly written by copying or incrementing the one before it.
  template <typename V>
  Writer& list(const V& v) {
    sep();
    reserve(v.size() * 21 + 2);
    char* p = buf_.get() + size_;
    char* const end = buf_.get() + cap_;
    *p++ = '[';
    char* prev = nullptr;  // start of the previous number
    std::size_t prev_len = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) *p++ = ',';
      char* const at = p;
      if (prev && v[i] == v[i - 1]) {
        for (std::size_t k = 0; k < prev_len; ++k) p[k] = prev[k];
        p += prev_len;
      } else if (prev && v[i - 1] >= 0 && v[i] == v[i - 1] + 1 && prev[prev_len - 1] != '9') {
        for (std::size_t k = 0; k < prev_len; ++k) p[k] = prev[k];
        p[prev_len - 1] = static_cast<char>(p[prev_len - 1] + 1);
        p += prev_len;
      } else {
        p = std::to_chars(p, end, static_cast<std::int64_t>(v[i])).ptr;
      }
      prev = at;
      prev_len = static_cast<std::size_t>(p - at);
    }
    *p++ = ']';
    size_ = static_cast<std::size_t>(p - buf_.get());
    return *this;
  }
  // {"runs":[first,count,step,...]}: values first + k*step, k in [0, count).
  template <typename V>
  Writer& runs(const V& v) {
    sep();
    raw("{\"runs\":[", 9);
    bool any = false;
    std::size_t i = 0;
    while (i < v.size()) {
      const std::int64_t first = v[i];
      std::int64_t step = 0;
      std::size_t count = 1;
      if (i + 1 < v.size()) {
        step = static_cast<std::int64_t>(v[i + 1]) - first;
        count = 2;
        while (i + count < v.size() && static_cast<std::int64_t>(v[i + count]) - v[i + count - 1] == step) ++count;
      }
      reserve(72);
      char* p = buf_.get() + size_;
      char* const end = buf_.get() + cap_;
      if (any) *p++ = ',';
      p = std::to_chars(p, end, first).ptr;
      *p++ = ',';
      p = std::to_chars(p, end, static_cast<std::int64_t>(count)).ptr;
      *p++ = ',';
      p = std::to_chars(p, end, step).ptr;
      size_ = static_cast<std::size_t>(p - buf_.get());
      any = true;
      i += count;
    }
    raw("]}", 2);
    return *this;
  }
  Encoding encoding = Encoding::plain;
  /// An integer array in this writer's encoding.
  template <typename V>
  Writer& ints(const V& v) {
    return encoding == Encoding::runs ? runs(v) : list(v);
  }
  Writer& open_list() { return sep(), put('['), first_ = true, *this; }
  Writer& close_list() { return put(']'), first_ = false, *this; }

 private:
  void reserve(std::size_t n) {
    if (size_ + n <= cap_) return;
    const std::size_t cap = std::max(cap_ * 2, size_ + n + 256);
    std::unique_ptr<char[]> grown(new char[cap]);
    if (size_) std::memcpy(grown.get(), buf_.get(), size_);
    buf_ = std::move(grown);
    cap_ = cap;
  }
  Writer& raw(const char* p, std::size_t n) {
    reserve(n);
    std::memcpy(buf_.get() + size_, p, n);
    size_ += n;
    return *this;
  }
  void put(char c) { raw(&c, 1); }
  void sep() {
    if (!first_) put(',');
    first_ = false;
  }
  // One buffer per thread, reused across results: fresh large buffers cost a
  // page fault per page.
  static thread_local std::unique_ptr<char[]> pool_;
  static thread_local std::size_t pool_cap_;
  std::unique_ptr<char[]>& buf_ = pool_;
  std::size_t& cap_ = pool_cap_;
  std::size_t size_ = 0;
  bool first_ = true;
};

thread_local std::unique_ptr<char[]> Writer::pool_;
thread_local std::size_t Writer::pool_cap_ = 0;

// The packed row each row of a self-naming buffer holds (-1: padding), read
// in place as the writer walks it.
struct RowNames {
  const ref::Rows& rows;
  std::size_t size() const { return rows.rows(); }
  std::int64_t operator[](std::size_t r) const {
    std::uint32_t v = 0;
    std::memcpy(&v, rows.row(r), 4);
    return static_cast<std::int64_t>(v) - 1;
  }
};
RowNames row_names(const ref::Rows& rows) { return RowNames{rows}; }

void marks(Writer& w, const ref::GraphMarks& m) {
  w.open().key("image").list(std::vector<std::int64_t>{m.image_causal, m.image_full});
  w.key("video").list(std::vector<std::int64_t>{m.video_causal, m.video_full}).close();
}

std::string error_line(const std::string& id, const std::string& cls, const std::string& message) {
  Writer w;
  w.open().key("type").str("result").key("id").str(id).key("ok").boolean(false);
  w.key("error").str(cls).key("message").str(message).close();
  return w.text();
}

bool wants(const std::vector<std::string>& views, const char* v) {
  return std::find(views.begin(), views.end(), v) != views.end();
}

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
  std::unique_ptr<Built> build(const ref::Rows& rows, const protocol::Case& c,
                               ref::GraphMarks& marks) const override {
    return std::make_unique<ReferenceBuilt>(ref::build_pack(rows, c.layout, c.options, marks));
  }
  std::unique_ptr<Built> build_prepared(const ref::Rows& rows, const protocol::Case& c, ref::GraphMarks& marks,
                                        const ref::Layout& prepared_from) const override {
    auto meta = std::make_shared<const ref::Metadata>(ref::prepare_metadata(prepared_from));
    return std::make_unique<ReferenceBuilt>(ref::build_pack(rows, c.layout, c.options, marks, std::move(meta)));
  }
  std::vector<std::string> views() const override { return oracle_views(); }
};

std::atomic<std::int64_t> g_row_limit{kMaxOracleRows};

// --- views (PROTOCOL.md, "Views") --------------------------------------------

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

// The error class of `f()`, or "ok".
template <typename F>
std::string class_of(F&& f) {
  try {
    f();
    return "ok";
  } catch (const ref::Error& e) {
    return ref::to_string(e.code());
  }
}

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

// Every rank's shard of one pack at each world size, made once per result
// and read by cp_shards, cp_local and cp_global (the views only read them).
class Shards {
 public:
  explicit Shards(const Built& b) : b_(b) {}
  struct Set {
    std::vector<std::unique_ptr<Built>> ranks;  // empty when shard refused
    std::optional<ref::Error> refused;          // not_divisible
  };
  // The shards at `world`; an error other than not_divisible is thrown.
  const Set& at(std::int64_t world) {
    auto it = made_.find(world);
    if (it != made_.end()) return it->second;
    Set set;
    try {
      for (std::int64_t r = 0; r < world; ++r) set.ranks.push_back(b_.shard(r, world));
    } catch (const ref::Error& e) {
      if (e.code() != ref::Errc::not_divisible) throw;
      set.ranks.clear();
      set.refused = e;
    }
    return made_.emplace(world, std::move(set)).first->second;
  }

 private:
  const Built& b_;
  std::map<std::int64_t, Set> made_;
};

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

// The views a result carries beyond the first protocol's, each on a fresh
// build where the view changes the pack.
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

std::string result_or_error(const Implementation& impl, const protocol::Case& c, const std::string& id,
                            const std::vector<std::string>& views, Encoding encoding,
                            ref::GraphMarks* marks_after = nullptr) {
  ref::GraphMarks after = c.marks;
  const auto failed = [&](const std::string& cls, const std::string& message) {
    if (marks_after) *marks_after = after;
    Writer w;
    w.open().key("type").str("result").key("id").str(id).key("ok").boolean(false);
    w.key("error").str(cls).key("message").str(message);
    if (wants(views, "error_marks")) {
      w.key("graph_bounds");
      marks(w, after);
    }
    return w.close().text();
  };
  try {
    // The size is decided before anything is allocated (PROTOCOL.md,
    // "Limits"): the reference's checks on the layout and options alone, in
    // protocol order, then the oracle's limits for a valid case.
    // A case the reference rejects is built by the implementation all the
    // same (its own checks answer) unless its rows alone are past the limit.
    std::optional<ref::Error> rejected;
    CaseShape shape;
    try {
      shape = plan_case(c);
    } catch (const ref::Error& e) {
      rejected = e;
    }
    if (rejected && (c.rows < 0 || c.rows > oracle_row_limit())) throw *rejected;
    if (!rejected) {
      if (const auto big = too_large(c, shape, oracle_row_limit(), 4)) return failed("too_large", "too_large: " + *big);
    }
    const ref::Rows rows = numbered_rows(c.rows);
    const std::unique_ptr<Built> built = impl.build(rows, c, after);
    Shards shards(*built);
    const ref::Pack& p = built->pack();
    const ref::Metadata& m = *p.meta;
    Writer w;
    w.encoding = encoding;
    w.open().key("type").str("result").key("id").str(id).key("ok").boolean(true);
    w.key("pack").open();
    w.key("sample_offsets").ints(m.sample_offsets).key("max_sample_len").num(m.max_sample_len);
    w.key("max_causal_len").num(m.max_causal_len).key("max_full_len").num(m.max_full_len);
    w.key("max_num_tokens").num(p.max_num_tokens);
    w.key("causal_indices").ints(m.causal_indices).key("full_indices").ints(m.full_indices);
    w.key("causal_seq_offsets").ints(m.causal_seq_offsets).key("full_only_seq_offsets").ints(m.full_only_seq_offsets);
    w.key("num_causal_tokens").num(m.num_causal_tokens).key("num_full_tokens").num(m.num_full_tokens);
    w.key("causal_sample_ids").ints(p.causal_sample_ids).key("full_only_sample_ids").ints(p.full_only_sample_ids);
    w.key("causal_rows").ints(row_names(p.causal_seq)).key("full_only_rows").ints(row_names(p.full_only_seq));
    w.key("pad_segment");
    if (p.pad_segment) {
      const ref::PadSegment& s = *p.pad_segment;
      w.open().key("causal_seq_offsets").ints(s.causal_seq_offsets).key("max_causal_len").num(s.max_causal_len);
      w.key("full_only_seq_offsets").ints(s.full_only_seq_offsets).key("max_full_len").num(s.max_full_len);
      w.key("sample_offsets").ints(s.sample_offsets).key("max_sample_len").num(s.max_sample_len).close();
    } else {
      w.null();
    }
    w.close();
    w.key("graph_bounds");
    marks(w, after);
    w.key("views").open();
    if (wants(views, "all_seq_padded")) {
      const ref::AllSeqPadded all = built->all_seq_padded();
      w.key("all_seq_padded").open().key("rows").ints(row_names(all.seq));
      w.key("offsets").ints(all.offsets).key("max_len").num(all.max_len).close();
    }
    if (wants(views, "cp_shards") && c.options.cp_world_size > 1) {
      w.key("cp_shards");
      const std::int64_t world = c.options.cp_world_size;
      if (p.causal_seq.rows() % static_cast<std::size_t>(world) != 0 ||
          p.full_only_seq.rows() % static_cast<std::size_t>(world) != 0) {
        w.open().key("error").str("not_divisible").close();
      } else {
        const Shards::Set& set = shards.at(world);
        if (set.refused) throw *set.refused;  // a port's shard refusing divisible streams
        w.open_list();
        for (std::int64_t r = 0; r < world; ++r) {
          const std::unique_ptr<Built>& s = set.ranks[static_cast<std::size_t>(r)];
          const auto [lc, lf] = ref::get_num_real_tokens(s->pack());
          w.open().key("rank").num(r).key("causal_rows").ints(row_names(s->pack().causal_seq));
          w.key("full_only_rows").ints(row_names(s->pack().full_only_seq));
          w.key("num_causal_tokens_local").num(lc).key("num_full_tokens_local").num(lf).close();
        }
        w.close_list();
      }
    }
    more_views(w, impl, *built, shards, c, rows, views);
    w.close().close();
    if (marks_after) *marks_after = after;
    return w.text();
  } catch (const ref::Error& e) {
    return failed(ref::to_string(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return failed("too_large", "the oracle ran out of memory building this case");
  }
}

// --- comparison --------------------------------------------------------------

std::string show(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 200 ? printable(s, 200) : s;
}

// The first difference between two JSON values, as "path: expected X, port Y".
std::string diff(const json& want, const json& got, const std::string& at) {
  if (want.type() != got.type() && !(want.is_number() && got.is_number())) {
    return at + ": expected " + show(want) + ", port " + show(got);
  }
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return at + "." + it.key() + ": missing in the port's result";
      std::string d = diff(it.value(), got.at(it.key()), at + "." + it.key());
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.is_array()) {
    for (std::size_t i = 0; i < want.size() && i < got.size(); ++i) {
      std::string d = diff(want[i], got[i], at + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    if (want.size() != got.size()) {
      return at + ": expected " + std::to_string(want.size()) + " entries, port " + std::to_string(got.size());
    }
    return "";
  }
  return want == got ? "" : at + ": expected " + show(want) + ", port " + show(got);
}

// Expands {"runs":[first,count,step,...]} objects into plain arrays, in
// place, refusing (InputError, naming the field) malformed runs and any
// expansion past `budget` values in all, before it is allocated.
void expand_runs(json& v, std::size_t& budget, const std::string& at, std::size_t limit) {
  if (v.is_object()) {
    if (v.size() == 1 && v.contains("runs")) {
      const json& r = v["runs"];
      if (!r.is_array()) throw InputError(at + ".runs: expected an array, port " + show(r));
      if (r.size() % 3 != 0) {
        throw InputError(at + ".runs: " + std::to_string(r.size()) + " numbers, not triples [first, count, step]");
      }
      __extension__ typedef __int128 Wide;
      std::size_t total = 0;
      for (std::size_t i = 0; i < r.size(); i += 3) {
        for (std::size_t k = i; k < i + 3; ++k) {
          if (!r[k].is_number_integer() || (r[k].is_number_unsigned() && r[k].get<std::uint64_t>() > INT64_MAX)) {
            throw InputError(at + ".runs[" + std::to_string(k) + "]: expected an integer that fits int64, port " +
                             show(r[k]));
          }
        }
        const auto first = r[i].get<std::int64_t>(), count = r[i + 1].get<std::int64_t>(),
                   step = r[i + 2].get<std::int64_t>();
        if (count < 0) throw InputError(at + ".runs[" + std::to_string(i + 1) + "]: negative count " + show(count));
        if (static_cast<std::uint64_t>(count) > budget - total) {
          throw InputError(at + ".runs[" + std::to_string(i + 1) + "]: count " + std::to_string(count) +
                           " expands the answer past " + std::to_string(limit) + " values (the limit of PROTOCOL.md)");
        }
        const Wide last = Wide{first} + Wide{step} * Wide{count > 0 ? count - 1 : 0};
        if (last > INT64_MAX || last < INT64_MIN) {
          throw InputError(at + ".runs[" + std::to_string(i) + "]: the triple's values leave int64");
        }
        total += static_cast<std::size_t>(count);
      }
      budget -= total;
      json out = json::array();
      out.get_ref<json::array_t&>().reserve(total);
      for (std::size_t i = 0; i < r.size(); i += 3) {
        const auto first = r[i].get<std::int64_t>(), count = r[i + 1].get<std::int64_t>(),
                   step = r[i + 2].get<std::int64_t>();
        for (std::int64_t k = 0; k < count; ++k) out.push_back(first + k * step);
      }
      v = std::move(out);
      return;
    }
    for (auto& [k, child] : v.items()) {
      if (child.is_structured()) expand_runs(child, budget, at + "." + printable(k, 40), limit);
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].is_structured()) expand_runs(v[i], budget, at + "[" + std::to_string(i) + "]", limit);
    }
  }
}

// A member's string value, or "" when it is absent or not a string.
std::string string_member(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

void set_oracle_row_limit(std::int64_t rows) { g_row_limit = rows; }
std::int64_t oracle_row_limit() { return g_row_limit; }

const std::vector<std::string>& oracle_views() {
  static const std::vector<std::string> views = {"all_seq_padded", "cp_shards", "getters",     "position_ids",
                                                 "setters",        "derived",   "cp_local",    "metadata_reuse",
                                                 "payload",        "session",   "error_marks", "cp_global"};
  return views;
}

namespace {
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

const Implementation& reference_implementation() {
  static const ReferenceImplementation impl;
  return impl;
}

std::string result_line(const protocol::Case& c, const std::string& id, const std::vector<std::string>& views,
                        Encoding encoding) {
  return result_or_error(reference_implementation(), c, id, views, encoding);
}

std::string result_line(const Implementation& impl, const protocol::Case& c, const std::string& id,
                        const std::vector<std::string>& views, Encoding encoding) {
  return result_or_error(impl, c, id, views, encoding);
}

std::string request_line(const protocol::Case& c, const std::string& id) { return protocol::to_json(c, id); }

std::string session_request_line(const std::vector<protocol::Case>& steps, const std::string& id) {
  return session_request_line(steps, id, oracle_views());
}

std::string request_line(const protocol::Case& c, const std::string& id, const std::vector<std::string>& views) {
  std::string line = protocol::to_json(c, id);
  line.pop_back();  // the closing brace
  line += ",\"views\":[";
  for (std::size_t i = 0; i < views.size(); ++i) line += (i ? ",\"" : "\"") + views[i] + "\"";
  return line + "]}";
}

std::vector<std::string> views_for(const protocol::Case& c, const std::vector<std::string>& declared) {
  std::int64_t padded = 0;
  try {
    const CaseShape shape = plan_case(c);  // allocates nothing per token
    padded = shape.causal_len + shape.full_len;
  } catch (const ref::Error&) {
    return declared;  // an error result carries no views
  }
  if (padded <= kAllViewsRows) return declared;
  std::vector<std::string> out;
  for (const auto& v : declared) {
    if (v == "all_seq_padded" || v == "cp_shards" || v == "session" || v == "error_marks") out.push_back(v);
  }
  return out;
}

std::vector<std::string> views_for(const std::vector<protocol::Case>& steps,
                                   const std::vector<std::string>& declared) {
  std::vector<std::string> out = declared;
  for (const auto& c : steps) {
    const std::vector<std::string> v = views_for(c, declared);
    if (v.size() < out.size()) out = v;
  }
  return out;
}

std::string session_line(const Implementation& impl, const std::vector<protocol::Case>& steps, const std::string& id,
                         const std::vector<std::string>& views, Encoding encoding) {
  Writer w;
  w.open().key("type").str("session").key("id").str(id).key("results").open_list();
  std::string text = w.text();
  ref::GraphMarks marks = steps.empty() ? ref::GraphMarks{} : steps.front().marks;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    protocol::Case step = steps[k];
    step.marks = marks;
    if (k) text += ',';
    text += result_or_error(impl, step, id + "/" + std::to_string(k), views, encoding, &marks);
  }
  return text + "]}";
}

std::string session_line(const std::vector<protocol::Case>& steps, const std::string& id,
                         const std::vector<std::string>& views, Encoding encoding) {
  return session_line(reference_implementation(), steps, id, views, encoding);
}

std::string session_request_line(const std::vector<protocol::Case>& steps, const std::string& id,
                                 const std::vector<std::string>& views) {
  std::string text =
      "{\"type\":\"session\",\"id\":" + json(id).dump() + ",\"views\":" + json(views).dump() + ",\"cases\":[";
  for (std::size_t k = 0; k < steps.size(); ++k) {
    if (k) text += ',';
    text += protocol::to_json(steps[k], id + "/" + std::to_string(k));
  }
  return text + "]}";
}

std::string handle_line(const std::string& line) { return Oracle(false).handle(line); }

int serve(std::istream& in, std::ostream& out, bool allow_runs, const Implementation& impl) {
  Oracle oracle(allow_runs, impl);
  std::string line;
  std::size_t too_long = 0;
  // Lines are read within the limit: a longer one is answered, not buffered.
  while (read_line_bounded(in, line, kMaxLineBytes, &too_long)) {
    if (too_long) {
      out << error_line("", "bad_request",
                        "request line of " + std::to_string(too_long) + " bytes exceeds the limit of " +
                            std::to_string(kMaxLineBytes) + " bytes")
          << '\n'
          << std::flush;
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    out << oracle.handle(line) << '\n' << std::flush;
  }
  return 0;
}

std::vector<std::string> Oracle::asked_views(const nlohmann::json& request) const {
  std::vector<std::string> views = impl_->views();
  const auto asked = request.find("views");
  if (asked == request.end() || !asked->is_array()) return views;
  std::vector<std::string> out;
  for (const auto& v : views) {
    if (std::find(asked->begin(), asked->end(), v) != asked->end()) out.push_back(v);
  }
  return out;
}

std::string Oracle::handle(const std::string& line) {
  std::string id;
  try {
    if (line.size() > kMaxLineBytes) {
      return error_line(id, "bad_request",
                        "request line of " + std::to_string(line.size()) + " bytes exceeds the limit of " +
                            std::to_string(kMaxLineBytes) + " bytes");
    }
    json j;
    try {
      j = parse_json(line, "the request");
    } catch (const InputError& e) {
      return error_line(id, "bad_request", e.what());
    }
    if (!j.is_object())
      return error_line(id, "bad_request", std::string("expected a JSON object, got ") + j.type_name());
    const auto type = j.find("type");
    const auto id_field = j.find("id");
    if (id_field != j.end()) {
      if (!id_field->is_string()) {
        return error_line(id, "bad_request", std::string("field id: expected a string, got ") + id_field->type_name());
      }
      id = id_field->get<std::string>();
    }
    if (type == j.end() || !type->is_string())
      return error_line(id, "bad_request", "field type: missing or not a string");
    if (*type == "hello") {
      const auto protocol = j.find("protocol");
      if (protocol == j.end() || *protocol != kProtocol) {
        return error_line(id, "bad_request",
                          "field protocol: " + (protocol == j.end() ? std::string("missing") : show(*protocol)) +
                              ", this oracle speaks \"" + kProtocol + "\"");
      }
      // The runs encoding, when the runner offers it and this oracle may use it.
      encoding_ = Encoding::plain;
      if (allow_runs_ && j.contains("encodings") && j["encodings"].is_array()) {
        for (const auto& e : j["encodings"]) {
          if (e == "runs") encoding_ = Encoding::runs;
        }
      }
      Writer w;
      w.open().key("type").str("hello").key("protocol").str(kProtocol).key("name").str(impl_->name());
      if (encoding_ == Encoding::runs) w.key("encoding").str("runs");
      w.key("views").open_list();
      for (const auto& v : impl_->views()) w.str(v);
      w.close_list().close();
      return w.text();
    }
    if (*type != "case" && *type != "session")
      return error_line(id, "bad_request", "field type: unknown request type " + show(*type));
    if (id_field == j.end()) return error_line(id, "bad_request", "field id: missing (a string naming the request)");
    if (*type == "session") {
      const auto cases = j.find("cases");
      if (cases == j.end() || !cases->is_array())
        return error_line(id, "bad_request", "field cases: missing or not an array");
      if (cases->size() > kMaxSessionSteps) {
        return error_line(id, "bad_request",
                          "field cases: " + std::to_string(cases->size()) + " steps exceed the limit of " +
                              std::to_string(kMaxSessionSteps));
      }
      std::vector<protocol::Case> steps;
      for (std::size_t k = 0; k < cases->size(); ++k) {
        try {
          steps.push_back(protocol::case_from_json_value((*cases)[k]));
        } catch (const std::exception& e) {
          return error_line(id, "bad_request", "cases[" + std::to_string(k) + "]: " + e.what());
        }
      }
      // The steps' sizes together stay within the oracle's row limit.
      std::int64_t total = 0;
      for (const auto& step : steps) {
        try {
          const CaseShape shape = plan_case(step);
          total += shape.causal_len + shape.full_len;
        } catch (const ref::Error&) {
          // A rejected step allocates nothing past its rows (checked per step).
        }
        total += std::max<std::int64_t>(step.rows, 0);
        if (total > oracle_row_limit()) {
          return error_line(id, "too_large",
                            "too_large: cases: the steps' rows and padded streams pass the oracle's limit of " +
                                std::to_string(oracle_row_limit()) + " rows in all");
        }
      }
      return session_line(*impl_, steps, id, asked_views(j), encoding_);
    }
    protocol::Case c;
    try {
      c = protocol::case_from_json_value(j);
    } catch (const std::exception& e) {
      return error_line(id, "bad_request", e.what());
    }
    return result_line(*impl_, c, id, asked_views(j), encoding_);
  } catch (const std::exception& e) {
    return error_line(id, "bad_request", std::string("unexpected: ") + printable(e.what(), 300));
  }
}

namespace {

// The first difference between two parsed results (runs already expanded).
// Every member of the port's answer is type-checked before it is used.
std::string result_difference(const json& want, const json& got, const std::vector<std::string>& views) {
  if (!got.is_object()) return std::string("the port's answer is not an object but ") + got.type_name();
  const auto type = got.find("type");
  if (type == got.end() || !type->is_string()) {
    return "type: expected \"result\", port " + (type == got.end() ? std::string("none") : show(*type));
  }
  if (*type != "result") return "type: expected \"result\", port " + show(*type);
  const auto id = got.find("id");
  if (id == got.end()) return "id: expected " + show(want["id"]) + ", port none";
  if (*id != want["id"]) return "id: expected " + show(want["id"]) + ", port " + show(*id);
  if (!got.contains("ok") || !got["ok"].is_boolean()) {
    return "ok: expected a boolean, port " + (got.contains("ok") ? show(got["ok"]) : std::string("none"));
  }
  const auto message = got.find("message");
  if (message != got.end() && !message->is_string()) return "message: expected a string, port " + show(*message);
  if (!got["ok"].get<bool>()) {
    const auto error = got.find("error");
    if (error == got.end() || !error->is_string()) {
      return "error: expected a string (the error class), port " +
             (error == got.end() ? std::string("none") : show(*error));
    }
  }
  if (want["ok"] != got["ok"]) {
    return std::string("ok: expected ") + (want["ok"].get<bool>() ? "a result" : "error " + want["error"].dump()) +
           ", port " +
           (got["ok"].get<bool>()
                ? "a result"
                : "error " + show(got["error"]) + " (" + printable(string_member(got, "message")) + ")");
  }
  if (!want["ok"].get<bool>()) {
    if (want["error"] != got["error"]) return diff(want["error"], got["error"], "error");
    if (wants(views, "error_marks") && want.contains("graph_bounds")) {
      if (!got.contains("graph_bounds")) return "graph_bounds: missing in the port's error result (error_marks)";
      return diff(want["graph_bounds"], got["graph_bounds"], "graph_bounds");
    }
    return "";
  }
  for (const char* part : {"pack", "graph_bounds"}) {
    if (!got.contains(part)) return std::string(part) + ": missing in the port's result";
    std::string d = diff(want[part], got[part], part);
    if (!d.empty()) return d;
  }
  for (const auto& v : views) {
    if (!want["views"].contains(v)) continue;
    if (!got.contains("views") || !got["views"].is_object() || !got["views"].contains(v))
      return "views." + v + ": declared but missing";
    std::string d = diff(want["views"][v], got["views"][v], "views." + v);
    if (!d.empty()) return d;
  }
  return "";
}

// The values of a (trusted) document: every node, as parse_json counts them.
std::size_t value_count(const json& v) {
  std::size_t n = 1;
  if (v.is_structured()) {
    for (const auto& child : v) n += value_count(child);
  }
  return n;
}

std::string answer_difference(const std::string& expected, const std::string& actual,
                              const std::vector<std::string>& views) {
  json want = json::parse(expected);  // the reference's own line
  std::size_t unlimited = SIZE_MAX;
  expand_runs(want, unlimited, "expected", SIZE_MAX);
  // The port's answer may hold what the case can produce: the limits grow
  // with the reference's own answer (a session of large packs).
  const std::size_t limit = answer_value_limit(std::max(SIZE_MAX - unlimited, value_count(want)));
  json got;
  try {
    got = parse_json(actual, "the port's answer", limit);
  } catch (const InputError& e) {
    return std::string(e.what()) + " (answer: " + printable(actual, 120) + ")";
  }
  if (!got.is_object()) return std::string("the port's answer is not an object but ") + got.type_name();
  std::size_t budget = limit;
  try {
    expand_runs(got, budget, "the port's answer", limit);
  } catch (const InputError& e) {
    return e.what();
  }
  if (string_member(want, "type") != "session") return result_difference(want, got, views);
  if (string_member(got, "type") != "session") {
    return "type: expected \"session\", port " + (got.contains("type") ? show(got["type"]) : std::string("none"));
  }
  if (!got.contains("id") || got["id"] != want["id"]) {
    return "id: expected " + show(want["id"]) + ", port " + (got.contains("id") ? show(got["id"]) : "none");
  }
  if (!got.contains("results") || !got["results"].is_array()) return "results: missing or not an array";
  const json& w = want["results"];
  const json& g = got["results"];
  for (std::size_t k = 0; k < w.size() && k < g.size(); ++k) {
    std::string d = result_difference(w[k], g[k], views);
    if (!d.empty()) return "session step " + std::to_string(k) + ": " + d;
  }
  if (w.size() != g.size()) {
    return "results: expected " + std::to_string(w.size()) + " step results, port " + std::to_string(g.size());
  }
  return "";
}

}  // namespace

std::string first_difference(const std::string& expected, const std::string& actual,
                             const std::vector<std::string>& views) {
  if (expected == actual) return "";
  // Nothing a port writes may escape as an exception: whatever is left
  // unchecked above fails the case with what went wrong.
  try {
    return answer_difference(expected, actual, views);
  } catch (const std::exception& e) {
    return std::string("the port's answer cannot be compared: ") + printable(e.what(), 300);
  }
}

}  // namespace seqpack::protocol
