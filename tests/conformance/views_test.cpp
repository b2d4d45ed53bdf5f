// The optional views, sessions and error marks of PROTOCOL.md: each one
// convicts the fault it exists for. A faulty implementation (the reference
// with one planted fault) answers through the same result writer as every
// C++ port; the comparison with the reference's answer must name the view.
#include <cstring>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "seqpack/protocol/case.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "seqpack/reference/reference.hpp"

namespace {

namespace sc = seqpack::protocol;
namespace ref = seqpack::reference;
using nlohmann::json;

enum class Fault {
  none,
  gen_ids_from_causal,      // get_gen_position_ids gathers with the causal indices
  und_seq_is_gen,           // get_und_seq returns the full stream
  set_und_ignored,          // set_und_seq keeps the old stream
  set_all_writes_padding,   // set_all_seq zeroes the padding rows
  from_all_seq_source,      // from_all_seq returns the source's own streams
  und_gen_ignored,          // from_und_gen_splits returns the source's streams
  zeros_not_zero,           // zeros_like keeps the rows
  zeros_shape_ignored,      // zeros_like ignores the shape
  padded_on_shard,          // the padded getters accept a sharded pack
  local_counts_global,      // a shard reports the batch-wide real counts
  shard_sample_ids,         // a shard's sample ids are off by one
  prepared_ignores_lens,    // prepared metadata matches on split lengths and modes only
  prepared_ignores_splits,  // prepared metadata matches on sample lengths only
  prepared_checks_und,      // a build with prepared metadata checks the und indexes again
  payload_canonical_nan,    // NaN payloads are canonicalised
  payload_float32,          // rows go through float32
  marks_reset,              // a session's marks restart from zero each call
  error_raises_marks,       // a failed build keeps the marks it raised
  shard_max_local,          // a shard's metadata holds a changed maximum (not the global one)
  shard_ids_rank0,          // shard_position_ids gives rank 0's slice to every rank
  gather_reversed,          // gather_shards puts the ranks in reverse order
};

class FaultyBuilt : public sc::Built {
 public:
  FaultyBuilt(ref::Pack p, Fault f) : p_(std::move(p)), f_(f) {}
  const ref::Pack& pack() const override { return p_; }
  ref::AllSeqPadded all_seq_padded() const override { return ref::get_all_seq_padded(p_); }
  std::unique_ptr<sc::Built> shard(std::int64_t r, std::int64_t w) const override {
    ref::Pack s = ref::shard_pack(p_, r, w);
    if (f_ == Fault::local_counts_global) {
      s.num_causal_tokens_local = p_.meta->num_causal_tokens;
      s.num_full_tokens_local = p_.meta->num_full_tokens;
    }
    if (f_ == Fault::shard_sample_ids && !s.causal_sample_ids.empty()) s.causal_sample_ids[0] += 1;
    if (f_ == Fault::shard_max_local) {
      auto m = std::make_shared<ref::Metadata>(*s.meta);
      m->max_sample_len += 1;
      s.meta = std::move(m);
    }
    return wrap(std::move(s));
  }
  ref::PositionIds shard_position_ids(const ref::PositionIds& ids, std::int64_t r, std::int64_t w) const override {
    return ref::shard_position_ids(ids, p_, f_ == Fault::shard_ids_rank0 ? 0 : r, w);
  }
  std::unique_ptr<sc::Built> gather(const std::vector<const sc::Built*>& shards) const override {
    std::vector<ref::Pack> packs;
    for (const sc::Built* b : shards) packs.push_back(b->pack());
    for (auto& q : packs) q.meta = p_.meta;  // shard_max_local's shards gather as the pack's own
    if (f_ == Fault::gather_reversed) std::reverse(packs.begin(), packs.end());
    return wrap(ref::gather_shards(packs));
  }
  ref::Rows und_seq() const override { return f_ == Fault::und_seq_is_gen ? p_.full_only_seq : p_.causal_seq; }
  ref::Rows gen_seq() const override { return ref::get_gen_seq(p_); }
  ref::Rows all_seq() const override { return ref::get_all_seq(p_); }
  sc::PaddedStream causal_padded() const override {
    if (f_ == Fault::padded_on_shard && p_.pad_segment) {
      return {p_.causal_seq, p_.pad_segment->causal_seq_offsets, p_.pad_segment->max_causal_len};
    }
    const auto v = ref::get_causal_seq_padded(p_);
    return {v.seq, v.offsets, v.max_len};
  }
  sc::PaddedStream full_only_padded() const override {
    const auto v = ref::get_full_only_seq_padded(p_);
    return {v.seq, v.offsets, v.max_len};
  }
  bool has_pad_segment() const override { return ref::has_pad_segment(p_); }
  std::pair<std::int64_t, std::int64_t> num_real_tokens() const override { return ref::get_num_real_tokens(p_); }
  ref::PositionIds und_position_ids(const ref::PositionIds& ids) const override {
    return ref::get_und_position_ids(ids, p_);
  }
  ref::PositionIds gen_position_ids(const ref::PositionIds& ids) const override {
    return f_ == Fault::gen_ids_from_causal ? ref::get_und_position_ids(ids, p_) : ref::get_gen_position_ids(ids, p_);
  }
  void set_und_seq(const ref::Rows& v) override {
    if (f_ != Fault::set_und_ignored) ref::set_und_seq(p_, v);
  }
  void set_gen_seq(const ref::Rows& v) override { ref::set_gen_seq(p_, v); }
  void set_all_seq(const ref::Rows& v) override {
    if (f_ == Fault::set_all_writes_padding) {
      p_.causal_seq = ref::Rows(p_.causal_seq.rows(), p_.causal_seq.row_bytes());
      p_.full_only_seq = ref::Rows(p_.full_only_seq.rows(), p_.full_only_seq.row_bytes());
    }
    ref::set_all_seq(p_, v);
  }
  std::unique_ptr<sc::Built> from_all_seq(const ref::Rows& packed) const override {
    return f_ == Fault::from_all_seq_source ? wrap(p_) : wrap(ref::from_all_seq(packed, p_));
  }
  std::unique_ptr<sc::Built> from_mode_splits(const ref::Rows& c, const ref::Rows& f) const override {
    return wrap(ref::from_mode_splits(c, f, p_));
  }
  std::unique_ptr<sc::Built> from_und_gen_splits(const ref::Rows& u, const ref::Rows& g) const override {
    return f_ == Fault::und_gen_ignored ? wrap(p_) : wrap(ref::from_und_gen_splits(u, g, p_));
  }
  std::unique_ptr<sc::Built> zeros_like(std::optional<std::size_t> row_bytes) const override {
    if (f_ == Fault::zeros_not_zero) return wrap(p_);
    if (f_ == Fault::zeros_shape_ignored) return wrap(ref::zeros_like(p_));
    return wrap(ref::zeros_like(p_, row_bytes));
  }

 private:
  std::unique_ptr<sc::Built> wrap(ref::Pack p) const { return std::make_unique<FaultyBuilt>(std::move(p), f_); }
  ref::Pack p_;
  Fault f_;
};

class FaultyImplementation : public sc::Implementation {
 public:
  explicit FaultyImplementation(Fault f) : f_(f) {}
  std::string name() const override { return "faulty reference"; }
  std::unique_ptr<sc::Built> build(const ref::Rows& rows, const sc::Case& c, ref::GraphMarks& marks) const override {
    if (f_ == Fault::marks_reset) marks = {};
    if (f_ == Fault::error_raises_marks) {
      // Raise the marks first, as the original does before its pairing check.
      ref::GraphMarks raised = marks;
      try {
        return build_payload(rows, c, raised, marks);
      } catch (const ref::Error&) {
        marks.image_causal = marks.image_causal + 1;
        throw;
      }
    }
    ref::GraphMarks m = marks;
    return build_payload(rows, c, m, marks);
  }
  std::unique_ptr<sc::Built> build_prepared(const ref::Rows& rows, const sc::Case& c, ref::GraphMarks& marks,
                                            const ref::Layout& from) const override {
    if (f_ == Fault::prepared_checks_und) ref::validate_layout(c.layout);
    auto meta = std::make_shared<ref::Metadata>(ref::prepare_metadata(from));
    if (f_ == Fault::prepared_ignores_lens) meta->sample_lens = c.layout.sample_lens;
    if (f_ == Fault::prepared_ignores_splits) {
      meta->split_lens = c.layout.split_lens;
      meta->attn_modes.clear();
      for (const auto& mode : c.layout.attn_modes)
        meta->attn_modes.push_back(mode == "causal" ? ref::AttnMode::causal : ref::AttnMode::full);
    }
    return std::make_unique<FaultyBuilt>(ref::build_pack(rows, c.layout, c.options, marks, meta), f_);
  }
  std::vector<std::string> views() const override { return sc::oracle_views(); }

 private:
  std::unique_ptr<sc::Built> build_payload(ref::Rows rows, const sc::Case& c, ref::GraphMarks& m,
                                           ref::GraphMarks& out) const {
    if (rows.row_bytes() == 8 && (f_ == Fault::payload_canonical_nan || f_ == Fault::payload_float32)) {
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        double d;
        std::memcpy(&d, rows.row(r), 8);
        if (f_ == Fault::payload_float32) d = static_cast<double>(static_cast<float>(d));
        if (f_ == Fault::payload_canonical_nan && d != d) d = std::numeric_limits<double>::quiet_NaN();
        std::memcpy(rows.row(r), &d, 8);
      }
    }
    auto b = std::make_unique<FaultyBuilt>(ref::build_pack(rows, c.layout, c.options, m), f_);
    out = m;
    return b;
  }
  Fault f_;
};

// A case with both streams padded (alignment 4, a pad segment), cp 2.
sc::Case two_samples() {
  sc::Case c;
  c.layout.sample_lens = {5, 5};
  c.layout.split_lens = {2, 3, 1, 4};
  c.layout.attn_modes = {"causal", "full", "causal", "full"};
  sc::list_und_tokens(c);
  c.rows = 10;
  c.options.causal_seq_alignment = c.options.full_seq_alignment = 4;
  c.options.cp_world_size = 2;
  return c;
}

std::string difference(Fault f, const sc::Case& c = two_samples()) {
  const FaultyImplementation impl(f);
  const auto views = sc::oracle_views();
  return sc::first_difference(sc::result_line(c, "c", views), sc::result_line(impl, c, "c", views, sc::Encoding::plain),
                              views);
}

TEST(Views, TheFaultFreeImplementationAgrees) { EXPECT_EQ(difference(Fault::none), ""); }

TEST(Views, EachViewConvictsItsFault) {
  const std::pair<Fault, const char*> cases[] = {
      {Fault::gen_ids_from_causal, "views.position_ids.gen"},
      {Fault::und_seq_is_gen, "views.getters.und_rows"},
      {Fault::set_und_ignored, "views.setters.after_set_"},  // both steps differ; keys compare in order
      {Fault::set_all_writes_padding, "views.setters.after_set_all"},
      {Fault::from_all_seq_source, "views.derived.from_all_seq"},
      {Fault::und_gen_ignored, "views.derived.from_und_gen_splits"},
      {Fault::zeros_not_zero, "views.derived.zeros_like"},
      {Fault::zeros_shape_ignored, "views.derived.zeros_like_shaped"},
      {Fault::padded_on_shard, "views.cp_local[0].shards[0].refused.causal_padded"},
      {Fault::local_counts_global, "views.cp_shards"},
      {Fault::shard_sample_ids, "views.cp_local[0].shards[0].causal_sample_ids"},
      {Fault::prepared_ignores_lens, "views.metadata_reuse.mismatching:"},
      {Fault::prepared_ignores_splits, "views.metadata_reuse.mismatching_splits"},
      {Fault::prepared_checks_und, "views.metadata_reuse.und_ignored"},
      {Fault::payload_canonical_nan, "views.payload"},
      {Fault::payload_float32, "views.payload"},
      {Fault::shard_max_local, "views.cp_global[0].shards[0].max_lens"},
      {Fault::shard_ids_rank0, "views.cp_global[0].shards[1].position_ids"},
      {Fault::gather_reversed, "views.cp_global[0].gathered"},
  };
  for (const auto& [fault, where] : cases) {
    const std::string d = difference(fault);
    EXPECT_EQ(d.rfind(where, 0), 0u) << "fault " << static_cast<int>(fault) << ": " << d;
  }
}

TEST(Views, APortDeclaringOnlyTheFirstViewsIsComparedOnThose) {
  // An old port: its answer lacks the new views and is compared on the old ones only.
  const FaultyImplementation impl(Fault::gen_ids_from_causal);
  const sc::Case c = two_samples();
  const std::vector<std::string> old = {"all_seq_padded", "cp_shards"};
  EXPECT_EQ(sc::first_difference(sc::result_line(c, "c", sc::oracle_views()),
                                 sc::result_line(impl, c, "c", old, sc::Encoding::plain), old),
            "");
  // Declared but missing is a failure.
  EXPECT_EQ(sc::first_difference(sc::result_line(c, "c", sc::oracle_views()),
                                 sc::result_line(impl, c, "c", old, sc::Encoding::plain), {"position_ids"}),
            "views.position_ids: declared but missing");
}

TEST(Views, RequestsNameTheViewsAndLargeCasesAskForTheFirstOnly) {
  sc::Case c = two_samples();
  EXPECT_EQ(sc::views_for(c, sc::oracle_views()), sc::oracle_views());
  c.options.full_seq_alignment = sc::kAllViewsRows + 1;  // one padded stream past the limit
  const std::vector<std::string> big = sc::views_for(c, sc::oracle_views());
  EXPECT_EQ(big, (std::vector<std::string>{"all_seq_padded", "cp_shards", "session", "error_marks"}));
  // The oracle computes only what a request names.
  const json r = json::parse(sc::handle_line(sc::request_line(two_samples(), "c", {"getters"})));
  ASSERT_EQ(r["views"].size(), 1u) << r.dump();
  EXPECT_TRUE(r["views"].contains("getters"));
  // A name is written escaped: a quote or a newline in it stays inside the
  // string, and the request keeps its own fields (issue 38).
  const std::vector<std::string> odd = {"getters\",\"rows\":1,\"x\":\"", "a\nb", "\xff"};
  const std::string line = sc::request_line(two_samples(), "c", odd);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const json req = json::parse(line);
  EXPECT_EQ(req["views"], json(std::vector<std::string>{odd[0], odd[1], "\xef\xbf\xbd"}));
  EXPECT_EQ(req["rows"], json::parse(sc::request_line(two_samples(), "c"))["rows"]);
}

// Sessions carry the marks from step to step.
std::vector<sc::Case> session() {
  std::vector<sc::Case> steps;
  sc::Case a = two_samples();
  a.options.pad_for_cuda_graphs = true;
  a.options.is_image_batch = true;
  a.options.cp_world_size = 1;
  steps.push_back(a);
  sc::Case b = a;  // pairing fails: one sample, two full splits, a pad segment is due
  b.layout.sample_lens = {10};
  steps.push_back(b);
  steps.push_back(a);
  return steps;
}

std::string session_difference(Fault f) {
  const FaultyImplementation impl(f);
  const auto views = sc::oracle_views();
  return sc::first_difference(sc::session_line(session(), "s", views),
                              sc::session_line(impl, session(), "s", views, sc::Encoding::plain), views);
}

TEST(Sessions, MarksCarryOverAndAreCompared) {
  EXPECT_EQ(session_difference(Fault::none), "");
  const json s = json::parse(sc::session_line(session(), "s", sc::oracle_views()));
  ASSERT_EQ(s["results"].size(), 3u);
  EXPECT_EQ(s["results"][0]["graph_bounds"]["image"], json::array({128, 128}));
  EXPECT_EQ(s["results"][1]["ok"], false);
  EXPECT_EQ(s["results"][1]["error"], "pad_segment_pairing");
  EXPECT_EQ(s["results"][1]["graph_bounds"]["image"], json::array({128, 128}));  // error_marks
  // A port that forgets its marks between calls: visible only across calls.
  EXPECT_EQ(difference(Fault::marks_reset), "");
  EXPECT_EQ(session_difference(Fault::marks_reset).rfind("session step 1", 0), 0u)
      << session_difference(Fault::marks_reset);
  // A failed build that leaves raised marks: visible through error_marks.
  EXPECT_EQ(session_difference(Fault::error_raises_marks),
            "session step 1: graph_bounds.image[0]: expected 128, port 129");
}

TEST(Sessions, TheOracleAnswersASessionRequest) {
  const json r = json::parse(sc::handle_line(sc::session_request_line(session(), "s")));
  ASSERT_EQ(r["type"], "session") << r.dump().substr(0, 300);
  ASSERT_EQ(r["results"].size(), 3u);
  EXPECT_EQ(r["results"][2]["id"], "s/2");
  const json bad = json::parse(sc::handle_line(R"({"type":"session","id":"s","cases":[{"type":"case"}]})"));
  EXPECT_EQ(bad["error"], "bad_request");
  EXPECT_NE(bad["message"].get<std::string>().find("cases[0]"), std::string::npos) << bad.dump();
}

TEST(Views, PayloadBitsAreThoseOfProtocolMd) {
  EXPECT_EQ(sc::payload_bits(0), 0x7FF8000000000001ull);
  EXPECT_EQ(sc::payload_bits(1), 0x8000000000000000ull);
  EXPECT_EQ(sc::payload_bits(2), 3ull);
  EXPECT_EQ(sc::payload_bits(3), 0xFFF0000000000004ull);
  EXPECT_EQ(sc::payload_bits(4), 0x3FF0000000000005ull);
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  EXPECT_EQ(first, 1) << "the payload view assumes a little-endian host";
}

}  // namespace
