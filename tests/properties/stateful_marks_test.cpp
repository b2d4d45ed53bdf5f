// The CUDA-graph marks as a stateful model: sequences of builds of either
// batch kind, under any options, against a model that holds the four marks.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include "seqpack/properties/catalogue.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/reference/pack.hpp"

namespace {

namespace sp = seqpack::properties;
namespace ref = seqpack::reference;

struct Model {
  ref::GraphMarks marks;
};
struct Sut {
  ref::GraphMarks marks;
};

struct Build : rc::state::Command<Model, Sut> {
  sp::Case c = *rc::gen::map(sp::gen_packer_case(), [](sp::Case k) {
    k.marks = {};
    return k;
  });

  void apply(Model& m) const override {
    if (!c.options.pad_for_cuda_graphs) return;
    sp::Case with = c;
    with.marks = m.marks;
    const auto [causal, full] = sp::expected_stream_lengths(with);
    // The kind's marks become the lengths, which are at least the marks.
    (c.options.is_image_batch ? m.marks.image_causal : m.marks.video_causal) = causal;
    (c.options.is_image_batch ? m.marks.image_full : m.marks.video_full) = full;
  }

  void run(const Model& m, Sut& s) const override {
    sp::Case with = c;
    with.marks = m.marks;
    RC_ASSERT(s.marks == m.marks);
    const auto [causal, full] = sp::expected_stream_lengths(with);
    const ref::Pack p = ref::build_pack(sp::case_rows(c), c.layout, c.options, s.marks);
    RC_ASSERT(static_cast<std::int64_t>(p.causal_seq.rows()) == causal);
    RC_ASSERT(static_cast<std::int64_t>(p.full_only_seq.rows()) == full);
  }

  void show(std::ostream& os) const override { os << "build " << sp::to_json(c); }
};

TEST(GraphMarksModel, CallSequencesFollowTheModel) {
  const bool ok = rc::check("graph marks over call sequences", [] {
    Model initial;
    Sut sut;
    rc::state::check(initial, sut, rc::state::gen::execOneOfWithArgs<Build>());
  });
  EXPECT_TRUE(ok);
}

}  // namespace
