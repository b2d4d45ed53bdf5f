// The in-process verdict (seqpack/properties/verdict.hpp): a failing
// property names the first differing field with both values, prints the
// shrunk case as JSON and its rendering, saves a case file that reads back,
// and stops shrinking at its budget.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "seqpack/properties/generators.hpp"
#include "seqpack/properties/verdict.hpp"
#include "seqpack/reference/reference.hpp"

namespace {

namespace sp = seqpack::properties;
namespace ref = seqpack::reference;

// Sets an environment variable for one scope.
class Env {
 public:
  Env(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~Env() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string temp_dir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("seqpack-verdict-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(PropertyVerdict, DifferencesNameTheFirstDifferingIndexWithBothValues) {
  EXPECT_EQ(
      sp::difference("meta.sample_offsets", std::vector<std::int32_t>{0, 3, 7}, std::vector<std::int32_t>{0, 3, 8}),
      "meta.sample_offsets[2]: expected 8, got 7");
  EXPECT_EQ(
      sp::difference("pack.causal_sample_ids", std::vector<std::int64_t>{1, 2}, std::vector<std::int64_t>{1, 2, 2}),
      "pack.causal_sample_ids: expected 3 entries, got 2 (the first 2 agree)");
  EXPECT_EQ(sp::difference("ids", std::vector<std::int64_t>{5, 9}, std::vector<std::int64_t>{5, 6, 7}),
            "ids[1]: expected 6, got 9 (and 3 entries expected, 2 got)");
  EXPECT_EQ(sp::difference("meta.max_causal_len", std::int32_t{4}, std::int32_t{5}),
            "meta.max_causal_len: expected 5, got 4");
  EXPECT_EQ(sp::difference("refusal", std::string(""), std::string("invalid_option at cp_world_size")),
            "refusal: expected \"invalid_option at cp_world_size\", got \"\"");
  EXPECT_EQ(sp::difference("same", std::vector<std::int64_t>{1}, std::vector<std::int64_t>{1}), "");

  ref::Rows want(3, 4), got(3, 4);
  for (std::size_t r = 0; r < 3; ++r) want.row(r)[0] = got.row(r)[0] = std::byte(r + 1);
  EXPECT_EQ(sp::difference("pack.full_only_seq", got, want), "");
  got.row(2)[0] = std::byte{0};
  EXPECT_EQ(sp::difference("pack.full_only_seq", got, want),
            "pack.full_only_seq[2]: row 2 differs at byte 0: expected 03000000, got 00000000 (a zero row)");
  EXPECT_EQ(sp::difference("pack.full_only_seq", ref::Rows(2, 4), want),
            "pack.full_only_seq: expected 3 rows of 4 bytes, got 2 rows of 4 bytes");
  // Wide rows: the 16 bytes around the first differing one.
  ref::Rows wide_want(1, 40), wide_got(1, 40);
  wide_got.row(0)[33] = std::byte{0xab};
  EXPECT_EQ(sp::difference("wide", wide_got, wide_want),
            "wide[0]: row 0 differs at byte 33: expected 0000000000000000 (a zero row), got 00ab000000000000 (bytes "
            "from 32)");
  wide_got.row(0)[33] = std::byte{0};
  wide_got.row(0)[3] = std::byte{0xcd};
  EXPECT_EQ(sp::difference("wide", wide_got, wide_want),
            "wide[0]: row 0 differs at byte 3: expected 00000000000000000000000000000000.. (a zero row), got "
            "000000cd000000000000000000000000..");

  const ref::PositionIds a{false, 1, 3, {1, 2, 3}}, b{false, 1, 3, {1, 2, 4}}, c{true, 3, 1, {1, 2, 3}};
  EXPECT_EQ(sp::difference("ids", a, b), "ids.values[2]: expected 4, got 3");
  EXPECT_NE(sp::difference("ids", c, a).find("expected PositionIds{1-D"), std::string::npos)
      << sp::difference("ids", c, a);
}

// A property that reports a wrong causal stream (its last row's first byte
// changed) whenever the stream has a row.
void wrong_last_causal_row() {
  const sp::Case c = sp::track(*sp::gen_packer_case());
  ref::GraphMarks marks = c.marks;
  const ref::Pack pack = ref::build_pack(sp::case_rows(c), c.layout, c.options, marks);
  ref::Rows got = pack.causal_seq;
  if (got.rows() > 0 && got.row_bytes() > 0) got.row(got.rows() - 1)[0] ^= std::byte{0x40};
  sp::same("pack.causal_seq", got, pack.causal_seq);
}

TEST(PropertyVerdict, AFailurePrintsTheFieldTheCaseItsRenderingAndSavesACaseFile) {
  const std::string dir = temp_dir("fail");
  const Env failures("SEQPACK_FAILURE_DIR", dir);
  std::ostringstream out;
  std::optional<sp::PropertyFailure> f;
  EXPECT_FALSE(sp::check_property("Planted.WrongLastCausalRow", wrong_last_causal_row, out, &f));
  ASSERT_TRUE(f.has_value()) << out.str();
  const std::string text = out.str();
  EXPECT_EQ(f->difference.rfind("pack.causal_seq[", 0), 0u) << f->difference;
  EXPECT_NE(f->difference.find(": expected "), std::string::npos) << f->difference;
  EXPECT_NE(f->difference.find(", got "), std::string::npos) << f->difference;
  // The case as JSON, which reads back to a case that still fails.
  const sp::Case shrunk = sp::case_from_json(f->case_json);
  ref::GraphMarks marks = shrunk.marks;
  const ref::Pack pack = ref::build_pack(sp::case_rows(shrunk), shrunk.layout, shrunk.options, marks);
  EXPECT_GT(pack.causal_seq.rows(), 0u) << f->case_json;
  // The rendering: rows as row ids, as `seqpack oracle --case` prints them.
  EXPECT_NE(f->rendering.find("  layout   samples ["), std::string::npos) << f->rendering;
  EXPECT_NE(f->rendering.find("  causal   "), std::string::npos) << f->rendering;
  // The case file holds the case.
  EXPECT_EQ(f->case_file, dir + "/Planted.WrongLastCausalRow.json");
  std::ifstream file(f->case_file);
  std::stringstream saved;
  saved << file.rdbuf();
  EXPECT_EQ(sp::to_json(sp::case_from_json(saved.str())), sp::to_json(shrunk));
  // All of it printed, with a short reproduce line instead of RapidCheck's.
  for (const std::string& part :
       std::vector<std::string>{"Planted.WrongLastCausalRow: FAIL after ", "  difference: pack.causal_seq[",
                                "  case: {", "  the reference's pack of that case:\n  layout",
                                "    replay: seqpack replay " + f->case_file, "RC_PARAMS=\"seed="}) {
    EXPECT_NE(text.find(part), std::string::npos) << "missing \"" << part << "\" in:\n" << text;
  }
  EXPECT_EQ(text.find("reproduce=", 0), std::string::npos) << text;
  std::filesystem::remove_all(dir);
}

TEST(PropertyVerdict, ShrinkingStopsAtTheBudget) {
  const std::string dir = temp_dir("budget");
  const Env failures("SEQPACK_FAILURE_DIR", dir);
  const Env budget("SEQPACK_SHRINK_SECONDS", "0");
  std::ostringstream out;
  std::optional<sp::PropertyFailure> f;
  // Fails on every case of at least one row: a case of thousands of rows
  // would shrink for long; with no budget the first failing case stays.
  EXPECT_FALSE(sp::check_property(
      "Planted.AnyRows",
      [] {
        const sp::Case c = sp::track(*sp::gen_packer_case());
        if (c.rows > 0) sp::fail("rows: " + std::to_string(c.rows));
      },
      out, &f));
  ASSERT_TRUE(f.has_value()) << out.str();
  EXPECT_TRUE(f->shrinking_stopped) << out.str();
  EXPECT_EQ(f->shrinks, 0u) << out.str();
  EXPECT_NE(out.str().find("shrinking stopped at SEQPACK_SHRINK_SECONDS=0"), std::string::npos) << out.str();
  std::filesystem::remove_all(dir);
}

TEST(PropertyVerdict, APassingPropertyReportsNothing) {
  std::ostringstream out;
  std::optional<sp::PropertyFailure> f;
  EXPECT_TRUE(sp::check_property(
      "Holds",
      [] {
        const sp::Case c = sp::track(*sp::gen_packer_case());
        sp::same("rows", c.rows, c.rows);
      },
      out, &f));
  EXPECT_FALSE(f.has_value());
  EXPECT_EQ(out.str(), "");
}

// The seeded data: distinct values, and the special float patterns.
TEST(PropertyVerdict, SeededDataIsDistinctAndHoldsSpecialPatterns) {
  const bool ok = rc::check([] {
    const auto v = sp::seeded_values(1000);
    RC_ASSERT(std::set<std::int64_t>(v.begin(), v.end()).size() == v.size());
    const auto b = sp::seeded_bytes(8192);
    int negative_zero = 0, half_nan = 0;
    for (std::size_t i = 0; i + 1 < b.size(); i += 2) {
      negative_zero += b[i] == 0x00 && b[i + 1] == 0x80;
      half_nan += b[i] == 0x00 && b[i + 1] == 0x7e;
    }
    RC_ASSERT(negative_zero > 0);
    RC_ASSERT(half_nan > 0);
  });
  EXPECT_TRUE(ok);
}

}  // namespace
