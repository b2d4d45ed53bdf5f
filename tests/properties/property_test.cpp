// Runs every catalogue property under RapidCheck, once per profile, plus the
// distribution check. A failure prints the report of verdict.hpp and
// writes the shrunk case to $SEQPACK_FAILURE_DIR/<property>.<profile>.json
// (verdict.hpp; the build tree's failures/ by default).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "seqpack/properties/catalogue.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/properties/verdict.hpp"

namespace {

namespace sp = seqpack::properties;

const char* profile_name(sp::Profile p) { return p == sp::Profile::packer ? "packer" : "strict"; }

class PropertyTest : public ::testing::Test {
 public:
  PropertyTest(const sp::Property* property, sp::Profile profile) : property_(property), profile_(profile) {}

  void TestBody() override {
    // Reported as every in-process property failure is (verdict.hpp): the
    // violation, the shrunk case as JSON, its rendering and a case file for
    // property_replay and seqpack replay.
    const sp::Property& prop = *property_;
    const bool ok = sp::check_property(
        prop.name + "." + profile_name(profile_),
        [&] {
          const sp::Case c = sp::track(*(prop.valid_only ? sp::gen_valid_case(profile_) : sp::gen_case(profile_)));
          prop.check(sp::Subject(c));
        },
        std::cout);
    EXPECT_TRUE(ok) << prop.name << " guards: " << prop.guards;
  }

 private:
  const sp::Property* property_;
  sp::Profile profile_;
};

// Every edge class the profile promises shows up within the run's budget.
void check_distribution(sp::Profile profile) {
  std::map<std::string, int> seen;
  const bool ok = rc::check(std::string("distribution (") + profile_name(profile) + ")", [&] {
    const sp::Case c = *sp::gen_case(profile);
    const auto tags = sp::classify(c);
    for (const auto& tag : tags) seen[tag]++;
    RC_CLASSIFY(!c.expect_error.empty(), "invalid");
    RC_CLASSIFY(c.expect_error.empty() && std::find(tags.begin(), tags.end(), "full_only") != tags.end(), "full-only");
  });
  ASSERT_TRUE(ok);
  std::cout << "case mix (" << profile_name(profile) << "), cases per class:\n";
  for (const auto& [cls, n] : seen) std::cout << "  " << cls << ": " << n << "\n";
  for (const auto& cls : sp::required_classes(profile)) {
    EXPECT_GT(seen[cls.name], 0) << "the " << profile_name(profile) << " generator never produced class " << cls.name;
  }
}

TEST(Generators, PackerProfileReachesEveryEdgeClass) { check_distribution(sp::Profile::packer); }
TEST(Generators, StrictProfileReachesEveryEdgeClass) { check_distribution(sp::Profile::strict); }

// The default run of `seqpack conform` (1,000 cases; case i of seed S from
// rc::Random(S * 0x9E3779B97F4A7C15 + i), as the runner draws them), at three
// seeds: every required class holds at least its share of the cases, so a
// class cannot fade out of the generator unseen. Deterministic.
void check_shares(sp::Profile profile) {
  constexpr int kCases = 1000;
  const auto gen = sp::gen_case(profile);
  for (const std::uint64_t seed : {1, 2, 3}) {
    std::map<std::string, int> seen;
    for (int i = 0; i < kCases; ++i) {
      const sp::Case c = gen(rc::Random(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i)), 100).value();
      for (const auto& tag : sp::classify(c)) seen[tag]++;
    }
    for (const auto& cls : sp::required_classes(profile)) {
      const int least = std::max(1, static_cast<int>(std::ceil(cls.min_share * kCases)));
      EXPECT_GE(seen[cls.name], least) << "seed " << seed << ": the " << profile_name(profile) << " profile gave class "
                                       << cls.name << " " << seen[cls.name] << " of " << kCases
                                       << " cases, below its share " << cls.min_share;
    }
    if (seed == 1) {
      std::cout << "default run (" << profile_name(profile) << ", seed 1), cases per required class:\n";
      for (const auto& cls : sp::required_classes(profile)) {
        std::cout << "  " << cls.name << ": " << seen[cls.name] << " (least " << cls.min_share * kCases << ")\n";
      }
    }
  }
}

TEST(Generators, PackerDefaultRunsHoldTheRequiredShares) { check_shares(sp::Profile::packer); }
TEST(Generators, StrictDefaultRunsHoldTheRequiredShares) { check_shares(sp::Profile::strict); }

TEST(Generators, CaseFilesRoundTrip) {
  const bool ok = rc::check("case JSON round trip", [] {
    const sp::Case c = *sp::gen_strict_case();
    const sp::Case back = sp::case_from_json(sp::to_json(c));
    RC_ASSERT(sp::to_json(back) == sp::to_json(c));
  });
  EXPECT_TRUE(ok);
}

}  // namespace

int main(int argc, char** argv) {
  // The default budget; RC_PARAMS overrides it (see README: deep runs).
  setenv("RC_PARAMS", "max_success=600 max_size=100", 0);
  setenv("SEQPACK_FAILURE_DIR", SEQPACK_FAILURE_DIR, 0);
  ::testing::InitGoogleTest(&argc, argv);
  for (const sp::Property& p : sp::catalogue()) {
    for (const sp::Profile profile : {sp::Profile::packer, sp::Profile::strict}) {
      ::testing::RegisterTest("Catalogue", (p.name + "." + profile_name(profile)).c_str(), nullptr, nullptr, __FILE__,
                              __LINE__, [&p, profile]() -> ::testing::Test* { return new PropertyTest(&p, profile); });
    }
  }
  return RUN_ALL_TESTS();
}
