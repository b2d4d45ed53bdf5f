// The bounded-exhaustive enumeration (seqpack/properties/exhaustive.hpp):
// its counts against counts derived by hand, its order, and its classes.
#include "seqpack/properties/exhaustive.hpp"

#include <map>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

namespace {

namespace props = seqpack::properties;

std::int64_t rows_of(const props::Case& c) {
  std::int64_t n = 0;
  for (const std::int64_t s : c.layout.sample_lens) n += s;
  return n;
}

// The tiny scope, counted by hand.
//
// Layouts. A packer sample is [causal a, full b] with a, b in {0, 1}: 4
// kinds, 4 + 4^2 = 20 batches of 1 or 2; or [full b]: 2 + 2^2 = 6. A sample
// beyond the packer is 1 or 2 splits of either mode, lengths 0 or 1: 2 x 2 +
// 4 x 4 = 20 kinds (36 splits), 20 + 20^2 = 420 batches, the 26 above among
// them. A layout gives each sample the splits its rows cover, so [x] [0 z]
// and [x 0] [z] are one layout: 4 x 2 x 4 = 32 batches too many. 388
// layouts, 26 the packer's; 36 + 2 x 20 x 36 - 3 x 32 = 1,380 splits, 756
// samples (20 + 2 x 400 - 2 x 32).
//
// Valid crossings: alignments 2 x 2, cp 2, graph states 7,
// pad_segment_only_when_padded 2: 112 per und listing; 87 layouts have two
// causal rows and are listed reversed too (89 batches, less the 2 of the 32
// with [c1] [0 c1]): 112 x (388 + 87) = 53,200, valid or (where the pad
// segment cannot pair) pad_segment_pairing.
//
// Planted faults, each distinct case once (a fault can erase what told two
// layouts apart):
// - invalid_option: cp and both alignments 0 and -1, four marks -1: 3,880.
// - empty_batch: no samples and the splits kept, one case per split list:
//   the lists of 1 to 4 splits of {c0, c1, f0, f1} that cut into 1 or 2
//   samples of 1 or 2 splits, 4 + 16 + 64 + 256 = 340; and no splits: 341.
// - mode_count: a mode added, 388; the last dropped, one case for two
//   layouts apart by the last mode where the last split is empty (a row
//   there changes the und list): 194 + 194 / 2 = 291. 679.
// - negative_length: every split and every sample -1: 1,380 + 756 = 2,136.
// - unknown_mode: every split, one case for two layouts apart by its mode
//   where it is empty: of the 1,380 splits 706 hold a row and 674 are empty
//   (738 each in the 420 batches; the 32 drop 32 and 64): 706 + 337 = 1,043.
// - tiling_sum: every split one row longer, less the 82 pairs that are one
//   case (a sample of two empty-and-one-row splits of one mode, against the
//   same sample the other way round: 2 such samples, alone or either place
//   beside any of 20): 1,298.
// - und_out_of_range: -1 and the row count, 776; und_repeated where a
//   causal row is, 250 (388 less the 138 layouts without one: 12 + 12^2
//   batches, less 18 of the 32); und_in_full: one per full row, 369 in the
//   batches less 16 in the 32: 353.
// - length_mismatch: rows + 1, and rows - 1 where a row is (354 layouts:
//   388 less 42 - 8 empty ones): 742.
// - overflow: an alignment of 2^31 on each non-empty stream (250 + 250), cp
//   and alignment past int32 together where a full row is (250), the full
//   mark 2^31 (388): 1,138.
// Together 12,636; with the crossings 65,836.
TEST(Exhaustive, TinyScopeCountsAsDerivedByHand) {
  const props::Enumeration tiny(props::scope_named("tiny"));
  EXPECT_EQ(tiny.layouts(), 388);
  EXPECT_EQ(tiny.packer_layouts(), 26);
  EXPECT_EQ(tiny.option_crossings(), 112);
  EXPECT_EQ(tiny.size(), 65836);
  std::map<std::string, std::int64_t> classes, faults;
  for (std::int64_t i = 0; i < tiny.size(); ++i) {
    const props::Case c = tiny.at(i);
    ++classes[props::case_class(c)];
    ++faults[c.fault];
  }
  EXPECT_EQ(classes["valid"] + classes["pad_segment_pairing"], 53200);
  EXPECT_EQ(classes["invalid_option"], 3880);
  EXPECT_EQ(classes["empty_batch"], 341);
  EXPECT_EQ(faults["mode_count"], 679);
  EXPECT_EQ(faults["negative_length"], 2136);
  EXPECT_EQ(faults["unknown_mode"], 1043);
  EXPECT_EQ(faults["tiling_sum"], 1298);
  EXPECT_EQ(faults["und_out_of_range"], 776);
  EXPECT_EQ(faults["und_repeated"], 250);
  EXPECT_EQ(classes["und_token_in_full_split"], 353);
  EXPECT_EQ(classes["length_mismatch"], 742);
  EXPECT_EQ(classes["overflow"], 1138);
  // Every error class of PROTOCOL.md, and valid cases.
  EXPECT_EQ(classes.size(), 8u);
  for (const char* k : {"valid", "invalid_option", "empty_batch", "invalid_layout", "und_token_in_full_split",
                        "length_mismatch", "overflow", "pad_segment_pairing"})
    EXPECT_GT(classes[k], 0) << k;
}

// Cases come in order of size: a case's layout never has fewer rows than an
// earlier one's, so the first failure a run meets is on a smallest layout.
TEST(Exhaustive, CasesComeInOrderOfSize) {
  for (const char* name : {"tiny", "small"}) {
    const props::Enumeration e(props::scope_named(name));
    std::int64_t last = 0;
    for (std::int64_t i = 0; i < e.size(); i += (e.size() > 100000 ? 7 : 1)) {
      const props::Case c = e.at(i);
      if (!c.expect_error.empty() && c.fault != "pairing") continue;  // a planted fault changes the lengths
      EXPECT_GE(rows_of(c), last) << name << " case " << i;
      last = rows_of(c);
    }
  }
}

// Each case has its own index as its data seed, and every scope lists und
// indexes reversed as well as ascending (the spec reads them as a set).
TEST(Exhaustive, CasesAreDistinctAndListUndBothWays) {
  const props::Enumeration tiny(props::scope_named("tiny"));
  std::set<std::string> seen;
  bool reversed = false;
  for (std::int64_t i = 0; i < tiny.size(); ++i) {
    props::Case c = tiny.at(i);
    EXPECT_EQ(c.data_seed, static_cast<std::uint64_t>(i));
    const auto& und = c.layout.und_token_indexes;
    reversed = reversed || (und.size() >= 2 && und.front() > und.back() && c.expect_error.empty());
    c.data_seed = 0;
    c.expect_error = c.fault = "";  // the inputs alone
    EXPECT_TRUE(seen.insert(props::to_json(c)).second) << "case " << i << " repeats an earlier one";
  }
  EXPECT_TRUE(reversed);
}

TEST(Exhaustive, ScopesGrowAndAnUnknownOneIsNamed) {
  std::int64_t last = 0;
  for (const props::Scope& s : props::scopes()) {
    const props::Enumeration e(s);
    EXPECT_GT(e.size(), last) << s.name;
    last = e.size();
  }
  try {
    (void)props::scope_named("huge");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"huge\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tiny, small, medium"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)props::Enumeration(props::scope_named("tiny")).at(65836), std::out_of_range);
}

}  // namespace
