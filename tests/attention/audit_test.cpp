// The audit (seqpack/attention/audit.hpp) on cases given to it, as `seqpack
// audit --scope S` gives it a bounded-exhaustive scope's: the findings map
// counts every case once per profile, by its worst finding, and names the
// smallest; finding 4 (the real consumer's dense GEN pass under CP) is
// silent there on its smallest layout, [c0 f1] at cp 2.
#include "seqpack/attention/audit.hpp"

#include <map>

#include <gtest/gtest.h>

namespace {

namespace at = seqpack::attention;

std::vector<at::AuditCase> small_cases() {
  at::AuditScope scope;
  scope.max_len = 1;
  scope.alignments = {1};
  scope.cp_sizes = {1, 2};
  scope.beyond_packer = false;
  return at::audit_cases(scope);
}

TEST(Audit, TheMapCountsEveryCaseOncePerProfileByItsWorstFinding) {
  const std::vector<at::AuditCase> cases = small_cases();
  ASSERT_GT(cases.size(), 10u);
  const std::vector<at::ConsumerOptions> profiles = {{at::ConsumerId::cosmos_5eee9ed, at::Kernel::fa3},
                                                     {at::ConsumerId::spec, at::Kernel::fa3}};
  const at::AuditResult r = at::audit_original(cases, profiles);
  EXPECT_EQ(r.cases, static_cast<std::int64_t>(cases.size()));
  std::map<std::string, std::int64_t> per_profile;
  for (const at::AuditWorst& w : r.worst) {
    per_profile[w.profile] += w.cases;
    EXPECT_FALSE(w.smallest.empty());
    // The smallest has the fewest rows of the cases this severity is the worst of.
    std::int64_t fewest = -1;
    for (const at::AuditCase& c : cases)
      if (c.text == w.smallest) fewest = c.rows;
    EXPECT_EQ(fewest, w.smallest_rows) << w.smallest;
  }
  ASSERT_EQ(per_profile.size(), 2u);
  for (const auto& [profile, n] : per_profile) EXPECT_EQ(n, r.cases) << profile;
  // Finding 4 under the real consumer: silent on [c0 f1] at cp 2, one row.
  bool silent = false;
  for (const at::AuditWorst& w : r.worst) {
    if (w.profile == "cosmos-5eee9ed on fa3" && w.severity == at::Severity::silent_wrong_gradient) {
      silent = true;
      EXPECT_EQ(w.smallest_rows, 1);
      EXPECT_NE(w.smallest.find("splits [c0 f1]"), std::string::npos) << w.smallest;
      EXPECT_NE(w.smallest.find("cp 2"), std::string::npos) << w.smallest;
    }
  }
  EXPECT_TRUE(silent);
  const std::string text = at::format_audit(r);
  EXPECT_NE(text.find("worst finding per case (the findings map):"), std::string::npos);
}

}  // namespace
