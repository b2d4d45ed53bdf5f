// `seqpack exhaustive`'s runner (seqpack/conformance/exhaustive.hpp): an
// engine with a planted fault is caught on the scope's smallest case that
// shows it, with a severity under every profile, and the result is the same
// at any thread count and split into shards.
#include "seqpack/conformance/exhaustive.hpp"

#include <gtest/gtest.h>

#include "seqpack/properties/exhaustive.hpp"

namespace {

namespace sc = seqpack::conformance;
namespace sp = seqpack::protocol;
namespace ref = seqpack::reference;
namespace props = seqpack::properties;
namespace at = seqpack::attention;

// The reference's pack with the pad segment's full maximum one short: a
// fault of the original's kind (its consequence is rows a varlen kernel's
// FA2 grid never covers).
class ShortMaximum : public sp::Built {
 public:
  explicit ShortMaximum(std::unique_ptr<sp::Built> inner) : inner_(std::move(inner)), pack_(inner_->pack()) {
    if (pack_.pad_segment) pack_.pad_segment->max_full_len -= 1;
  }
  const ref::Pack& pack() const override { return pack_; }
  ref::AllSeqPadded all_seq_padded() const override { return inner_->all_seq_padded(); }
  std::unique_ptr<sp::Built> shard(std::int64_t rank, std::int64_t world) const override {
    return inner_->shard(rank, world);
  }

 private:
  std::unique_ptr<sp::Built> inner_;
  ref::Pack pack_;
};

class ShortMaximumEngine : public sp::Implementation {
 public:
  std::string name() const override { return "short-maximum"; }
  std::unique_ptr<sp::Built> build(const ref::Rows& rows, const sp::Case& c, ref::GraphMarks& marks) const override {
    return std::make_unique<ShortMaximum>(sp::reference_implementation().build(rows, c, marks));
  }
};

sc::ExhaustiveOptions planted(int threads) {
  static const ShortMaximumEngine engine;
  sc::ExhaustiveOptions o;
  o.scope = props::scope_named("tiny");
  o.catalogue = false;
  o.engines = {&engine};
  o.consumers = {{at::ConsumerId::spec, at::Kernel::fa2}, {at::ConsumerId::cosmos_5eee9ed, at::Kernel::fa3}};
  o.limit = 1200;  // the fault first shows at case 265
  o.threads = threads;
  return o;
}

TEST(ExhaustiveRunner, APlantedEngineFaultIsFoundOnTheSmallestCaseThatShowsIt) {
  const sc::ExhaustiveResult r = sc::run_exhaustive(planted(2));
  ASSERT_EQ(r.failures.size(), 1u);
  const sc::ExhaustiveFailure& f = r.failures.front();
  EXPECT_EQ(f.check, "short-maximum: pack.pad_segment.max_full_len") << f.message;
  // Every earlier case has no pad segment: the first that has one is it.
  const props::Enumeration tiny(props::scope_named("tiny"));
  for (std::int64_t i = 0; i < f.first; ++i) {
    const props::Case c = tiny.at(i);
    if (!c.expect_error.empty()) continue;
    EXPECT_FALSE(sp::build_case(c).pad_segment.has_value())
        << "case " << i << " shows the fault before case " << f.first;
  }
  ASSERT_TRUE(sp::build_case(f.smallest).pad_segment.has_value());
  ASSERT_EQ(f.severities.size(), 2u);
  EXPECT_NE(f.severities[0].find("spec on fa2: "), std::string::npos) << f.severities[0];
  EXPECT_NE(f.severities[1].find("cosmos-5eee9ed on fa3: "), std::string::npos) << f.severities[1];
  EXPECT_EQ(f.severities[0].find("not-judged"), std::string::npos) << f.severities[0];
}

TEST(ExhaustiveRunner, TheResultIsTheSameAtAnyThreadCountAndOverShards) {
  const sc::ExhaustiveResult one = sc::run_exhaustive(planted(1));
  const sc::ExhaustiveResult two = sc::run_exhaustive(planted(3));
  EXPECT_EQ(one.classes, two.classes);
  ASSERT_EQ(one.failures.size(), two.failures.size());
  EXPECT_EQ(one.failures[0].first, two.failures[0].first);
  EXPECT_EQ(one.failures[0].cases, two.failures[0].cases);
  // Shards: cases i with i % 3 == k; together they are the whole.
  std::int64_t cases = 0, failing = 0;
  for (std::int64_t k = 0; k < 3; ++k) {
    sc::ExhaustiveOptions o = planted(1);
    o.limit = 400;
    o.shard_index = k;
    o.shard_count = 3;
    const sc::ExhaustiveResult r = sc::run_exhaustive(o);
    cases += r.cases;
    for (const sc::ExhaustiveFailure& f : r.failures) {
      EXPECT_EQ(f.first % 3, k);
      failing += f.cases;
    }
  }
  EXPECT_EQ(cases, one.cases);
  EXPECT_EQ(failing, one.failures[0].cases);
}

}  // namespace
