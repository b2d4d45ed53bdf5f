// The conformance protocol: the oracle on malformed requests, and the runner's
// diff, shrinking, known-failure, crash and hang handling against wrong ports.
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "seqpack/conformance/port.hpp"
#include "seqpack/conformance/runner.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/protocol/case.hpp"
#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"

namespace {

namespace sc = seqpack::conformance;
namespace sp = seqpack::protocol;
using nlohmann::json;

json answer(const std::string& line) { return json::parse(sp::handle_line(line)); }

void expect_bad_request(const std::string& line, const std::string& names) {
  const json r = answer(line);
  EXPECT_EQ(r["type"], "result") << line;
  EXPECT_EQ(r["ok"], false) << line;
  EXPECT_EQ(r["error"], "bad_request") << line;
  EXPECT_NE(r["message"].get<std::string>().find(names), std::string::npos) << r["message"] << "\nwanted: " << names;
}

const std::string kCase = R"({"type":"case","id":"c1","layout":{"sample_lens":[5,5],"split_lens":[2,3,1,4],)"
                          R"("attn_modes":["causal","full","causal","full"],"und_token_indexes":[0,1,5]},"rows":10,)"
                          R"("options":{"cp_world_size":1,"pad_for_cuda_graphs":false,"is_image_batch":false,)"
                          R"("full_seq_alignment":4,"causal_seq_alignment":4,"pad_segment_only_when_padded":false},)"
                          R"("graph_bounds":{"image":[0,0],"video":[0,0]}})";

TEST(Oracle, AnswersTheProtocolExample) {
  // PROTOCOL.md's example case; the expected values are the protocol's own.
  const json r = answer(kCase);
  ASSERT_EQ(r["ok"], true) << r;
  EXPECT_EQ(r["pack"]["causal_rows"], json::parse("[0,1,5,-1]"));
  EXPECT_EQ(r["pack"]["full_only_rows"], json::parse("[2,3,4,6,7,8,9,-1]"));
  EXPECT_EQ(r["pack"]["causal_sample_ids"], json::parse("[0,0,1,2]"));
  EXPECT_EQ(r["pack"]["pad_segment"]["sample_offsets"], json::parse("[0,5,10,12]"));
  EXPECT_EQ(r["views"]["all_seq_padded"]["rows"], json::parse("[0,1,2,3,4,5,6,7,8,9,-1,-1]"));
  EXPECT_EQ(r["graph_bounds"], json::parse(R"({"image":[0,0],"video":[0,0]})"));
}

// Ids come back as they were sent, whatever they hold: the answer's writer
// escapes what JSON needs and writes the rest as it is.
TEST(Oracle, AnswersCarryTheIdExactly) {
  for (const std::string id : {"plain-1", "back\\slash", "q\"uote", "tab\there", "del\x7F", "caf\xC3\xA9", ""}) {
    std::string line = kCase;
    const std::string from = "\"id\":\"c1\"";
    ASSERT_NE(line.find(from), std::string::npos);
    line.replace(line.find(from), from.size(), "\"id\":" + json(id).dump());
    const json r = answer(line);
    EXPECT_EQ(r["ok"], true) << r;
    EXPECT_EQ(r["id"], id);
  }
}

TEST(Oracle, MalformedRequestsGetNamedErrors) {
  expect_bad_request("{not json", "not JSON");
  expect_bad_request("[1,2,3]", "expected a JSON object, got array");
  expect_bad_request(R"({"id":"x"})", "field type");
  expect_bad_request(R"({"type":"bye"})", "unknown request type");
  expect_bad_request(R"({"type":"case","id":"x"})", "missing field case.layout");
  // The protocol's example with one field spoiled.
  const auto spoiled = [](const std::string& from, const std::string& to) {
    std::string line = kCase;
    line.replace(line.find(from), from.size(), to);
    return line;
  };
  expect_bad_request(spoiled("\"rows\":10", "\"rows\":\"10\""), "case.rows: expected an integer, got string");
  expect_bad_request(spoiled("\"rows\":10", "\"rows\":18446744073709551616"),
                     "case.rows: expected an integer that fits int64");
  expect_bad_request(spoiled("\"rows\":10", "\"rows\":9223372036854775808"), "does not fit int64");
  expect_bad_request(spoiled("[5,5]", "[5.5,5]"), "layout.sample_lens[0]");
  expect_bad_request(spoiled("\"causal\",\"full\",\"causal\"", "7,\"full\",\"causal\""), "layout.attn_modes[0]");
  expect_bad_request(spoiled("\"is_image_batch\":false", "\"is_image_batch\":1"),
                     "options.is_image_batch: expected a boolean");
  expect_bad_request(std::string(sp::kMaxLineBytes + 1, ' '), "exceeds");
}

TEST(Oracle, HugeInputsAreAnsweredNotBuilt) {
  // Options and marks are required fields (PROTOCOL.md); these are the defaults.
  const std::string tail = R"("options":{"cp_world_size":1,"pad_for_cuda_graphs":false,"is_image_batch":false,)"
                           R"("full_seq_alignment":ALIGN,"causal_seq_alignment":1,)"
                           R"("pad_segment_only_when_padded":false},"graph_bounds":{"image":[0,0],"video":[0,0]}})";
  const auto with_alignment = [&](const std::string& a) {
    std::string t = tail;
    return t.replace(t.find("ALIGN"), 5, a);
  };
  // A million zero-length samples: a valid, answered case, no crash.
  std::string many = R"({"type":"case","id":"m","layout":{"sample_lens":[)";
  for (int i = 0; i < 1000000; ++i) many += i ? ",0" : "0";
  many += R"(],"split_lens":[],"attn_modes":[],"und_token_indexes":[]},"rows":0,)" + with_alignment("1");
  EXPECT_EQ(answer(many)["ok"], true);
  // Rows past int32 fail before anything is allocated.
  const json r = answer(R"({"type":"case","id":"h","layout":{"sample_lens":[4000000000],"split_lens":[4000000000],)"
                        R"("attn_modes":["full"],"und_token_indexes":[]},"rows":4000000000,)" +
                        with_alignment("1"));
  EXPECT_EQ(r["error"], "overflow");
  // A padded size within int32 but past the oracle's limit is refused by name.
  const json big = answer(R"({"type":"case","id":"b","layout":{"sample_lens":[1],"split_lens":[1],)"
                          R"("attn_modes":["full"],"und_token_indexes":[]},"rows":1,)" +
                          with_alignment("2000000000"));
  EXPECT_EQ(big["error"], "too_large");
}

TEST(Oracle, ProcessKeepsAnsweringAfterMalformedInput) {
  sc::Port port("'" SEQPACK_BIN "' oracle", 10);
  std::string why;
  ASSERT_TRUE(port.start(&why)) << why;
  const auto answers = port.exchange({"garbage", "{\"type\":1}", "[]", kCase}, &why);
  ASSERT_EQ(answers.size(), 4u) << why;
  EXPECT_EQ(json::parse(answers[0])["error"], "bad_request");
  EXPECT_EQ(json::parse(answers[3])["ok"], true);
}

struct RunResult {
  int rc;
  std::string out;
};

RunResult conform(const std::string& port, sp::Profile profile, std::int64_t cases, const std::string& known = "",
                  const std::string& save = "", double timeout = 10, std::uint64_t seed = 7) {
  sc::ConformOptions o;
  o.port = port;
  o.profiles = {profile};
  o.cases = cases;
  o.seed = seed;
  o.known_failures = known;
  o.save_failures = save;
  o.timeout_s = timeout;
  std::ostringstream out, err;
  const int rc = sc::run_conform(o, out, err);
  return {rc, out.str() + err.str()};
}

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("seqpack_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(Runner, OracleConformsToItself) {
  const RunResult r = conform("'" SEQPACK_BIN "' oracle", sp::Profile::strict, 300);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("300 cases"), std::string::npos) << r.out;
}

TEST(Runner, CatchesAWrongPortAndShrinksToAFewTokens) {
  // Every case fails and each failure is shrunk: 40 cases keep this short under ASan.
  const std::string save = temp_dir("save");
  const RunResult r = conform("'" WRONG_PORT "' max_sample_len", sp::Profile::packer, 40, "", save);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("first difference: pack.pad_segment.max_sample_len: expected"), std::string::npos) << r.out;
  // Every saved minimal case is tiny: one or two samples of a few rows.
  int saved = 0;
  for (const auto& f : std::filesystem::directory_iterator(save)) {
    std::ifstream in(f.path());
    std::stringstream text;
    text << in.rdbuf();
    const sp::Case c = sp::case_from_json(text.str());
    EXPECT_LE(c.rows, 4) << text.str();
    EXPECT_LE(c.layout.sample_lens.size(), 2u) << text.str();
    ++saved;
  }
  EXPECT_GT(saved, 0);
}

std::vector<sp::Case> saved_cases(const std::string& dir) {
  std::vector<sp::Case> out;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(f.path());
    std::stringstream text;
    text << in.rdbuf();
    out.push_back(sp::case_from_json(text.str()));
  }
  return out;
}

TEST(Runner, ABucketFaultIsCaughtAtEverySeedAndShrinksOnItsEdge) {
  // `n < 2048` for `n <= 2048` shows only on a stream that needs exactly 2048
  // rows under graphs, with lcm(alignment, cp) of odd part 7 or 17+: the
  // default budget finds it at any seed (boundary-directed cases), and each
  // failure shrinks to a few samples still on 2048, not away from the edge.
  for (const std::uint64_t seed : {1, 2, 3}) {
    const std::string save = temp_dir("bucket" + std::to_string(seed));
    const RunResult r = conform("'" BUCKET_FAULT_PORT "'", sp::Profile::packer, 1000, "", save, 10, seed);
    EXPECT_EQ(r.rc, 1) << "seed " << seed << ": " << r.out;
    const auto cases = saved_cases(save);
    EXPECT_GT(cases.size(), 0u) << "seed " << seed;
    for (const sp::Case& c : cases) {
      const auto [causal, full] = seqpack::properties::stream_needs(c);
      EXPECT_TRUE(c.options.pad_for_cuda_graphs && (causal == 2048 || full == 2048)) << sp::to_json(c);
      EXPECT_LE(c.layout.sample_lens.size(), 2u) << sp::to_json(c);
    }
  }
}

TEST(Runner, KnownFailuresPassAndStaleOnesFail) {
  const std::string dir = temp_dir("known");
  std::ofstream(dir + "/valid.txt") << "# the wrong port's fault shows on valid cases\nvalid\n";
  RunResult r = conform("'" WRONG_PORT "' max_sample_len", sp::Profile::packer, 100, dir + "/valid.txt");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("0 unexpected failures"), std::string::npos) << r.out;
  // An entry that names a field covers only failures at that field.
  std::ofstream(dir + "/field.txt") << "valid @pack\n";
  r = conform("'" WRONG_PORT "' max_sample_len", sp::Profile::packer, 100, dir + "/field.txt");
  EXPECT_EQ(r.rc, 0) << r.out;
  std::ofstream(dir + "/other_field.txt") << "valid @graph_bounds\n";
  r = conform("'" WRONG_PORT "' max_sample_len", sp::Profile::packer, 100, dir + "/other_field.txt");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_EQ(r.out.find("0 unexpected failures"), std::string::npos) << r.out;
  // A listed category that passes now fails the run.
  std::ofstream(dir + "/stale.txt") << "invalid_option/option\n";
  r = conform("'" SEQPACK_BIN "' oracle", sp::Profile::strict, 300, dir + "/stale.txt");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("NOW PASSES (remove from the known failures): invalid_option/option"), std::string::npos)
      << r.out;
}

TEST(Runner, CrashingPortFailsTheCaseAndIsRestarted) {
  // cp 11: a few of seed 7's 300 cases; every crash restarts the port, in shrinking too.
  const RunResult r = conform("'" WRONG_PORT "' crash_cp 11", sp::Profile::packer, 300);
  EXPECT_EQ(r.rc, 1) << r.out;
  // Its failures are one group, whose text is how the port went: exited
  // before answering, or closed its input first (which one wins is timing).
  EXPECT_TRUE(r.out.find("crashed") != std::string::npos || r.out.find("(exited)") != std::string::npos) << r.out;
  EXPECT_NE(r.out.find("300 cases"), std::string::npos) << r.out;
}

TEST(Runner, HangingPortTimesOutAndIsRestarted) {
  // cp 11: a few of seed 7's 120 cases; every hang costs the timeout, in shrinking too.
  const RunResult r = conform("'" WRONG_PORT "' hang_cp 11", sp::Profile::packer, 120, "", "", 0.5);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("hung"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("120 cases"), std::string::npos) << r.out;
}

TEST(Runner, GoldenVectorsReplayAgainstTheReference) {
  // Any behaviour change of the reference shows up here, and as a diff of
  // conformance/vectors/vectors.jsonl once regenerated.
  const auto vectors = sc::read_vectors(SEQPACK_VECTORS_DIR);
  ASSERT_GE(vectors.size(), 300u);
  int sessions = 0;
  for (const auto& v : vectors) {
    const std::string now = v.steps.empty() ? sp::result_line(v.c, v.id, sp::oracle_views())
                                            : sp::session_line(v.steps, v.id, sp::oracle_views());
    EXPECT_EQ(sp::first_difference(v.expect, now, sp::oracle_views()), "") << v.id;
    sessions += !v.steps.empty();
  }
  EXPECT_GE(sessions, 5);
}

TEST(Runner, GoldenVectorsOfAPlantedClassGiveIt) {
  // Error vectors name their class (and fault, for known-failure lists):
  // several faults at once give the first class in PROTOCOL.md's order.
  int planted = 0;
  for (const auto& v : sc::read_vectors(SEQPACK_VECTORS_DIR)) {
    if (v.c.expect_error.empty()) continue;
    const json r = json::parse(v.expect);
    EXPECT_EQ(r["ok"], false) << v.id;
    EXPECT_EQ(r.value("error", ""), v.c.expect_error) << v.id;
    ++planted;
  }
  EXPECT_GE(planted, 20);
}

TEST(Runner, GoldenVectorsHoldBucketEdgesOfOddAlignments) {
  // Every tier boundary, on and one off, under graphs with lcm(alignment, cp)
  // not a power of two; streams past 8192 and 16384 rows (the 1024 and 2048
  // tiers); multiples of the effective alignment with cp > 1.
  std::set<std::string> tags;
  bool tier_1024 = false, tier_2048 = false;
  for (const auto& v : sc::read_vectors(SEQPACK_VECTORS_DIR)) {
    // A vector's case is the request sent to ports: its expected error is in
    // the expected result, not in the case.
    if (!v.steps.empty() || !nlohmann::json::parse(v.expect).value("ok", false)) continue;
    for (const auto& t : seqpack::properties::classify(v.c)) tags.insert(t);
    const auto [causal, full] = seqpack::properties::stream_needs(v.c);
    const std::int64_t longest = std::max(causal, full);
    tier_1024 = tier_1024 || (v.c.options.pad_for_cuda_graphs && longest > 8192 && longest <= 16384);
    tier_2048 = tier_2048 || (v.c.options.pad_for_cuda_graphs && longest > 16384);
  }
  for (const char* t : {"bucket_edge:2048", "bucket_edge:4096", "bucket_edge:8192", "bucket_edge:16384",
                        "bucket_edge:on", "bucket_edge:below", "bucket_edge:above", "bucket_edge:non_pow2_alignment",
                        "alignment_multiple:cp>1:on", "layout:pairing_violated"}) {
    EXPECT_TRUE(tags.count(t)) << "no golden vector of class " << t;
  }
  EXPECT_TRUE(tier_1024);
  EXPECT_TRUE(tier_2048);
}

}  // namespace

TEST(Limits, AnAnswerPastTwoToThe21ValuesIsReadWhenTheCaseProducesIt) {
  // One sample of 20,229 full tokens under CUDA graphs at alignment 129 and
  // cp 15: the full stream pads to lcm(129, 2048, 15) = 1,320,960 rows, so the
  // reference's own answer holds more than 2^21 values. A fixed limit of 2^21
  // failed the original, whose answer was right (found by the default run).
  const sp::Case c = sp::case_from_json(
      R"({"data_seed":1,"graph_bounds":{"image":[0,0],"video":[0,0]},"id":"big","layout":{"attn_modes":["full"],)"
      R"("sample_lens":[20229],"split_lens":[20229],"und_token_indexes":[]},"options":{"causal_seq_alignment":129,)"
      R"("cp_world_size":15,"full_seq_alignment":129,"is_image_batch":false,"pad_for_cuda_graphs":true,)"
      R"("pad_segment_only_when_padded":false},"row_bytes":8,"rows":20229,"type":"case"})");
  const auto views = sp::views_for(c, sp::oracle_views());
  const std::string plain = sp::result_line(c, "big", views, sp::Encoding::plain);
  const std::string runs = sp::result_line(c, "big", views, sp::Encoding::runs);
  std::size_t values = 0;
  const std::function<void(const nlohmann::json&)> count = [&](const nlohmann::json& v) {
    ++values;
    if (v.is_structured()) {
      for (const auto& child : v) count(child);
    }
  };
  count(nlohmann::json::parse(plain));
  ASSERT_GT(values, std::size_t{1} << 21);
  EXPECT_EQ(sp::first_difference(runs, plain, views), "");
  EXPECT_EQ(sp::first_difference(plain, runs, views), "");
  // Past twice the reference's answer, a runs bomb is still refused.
  const std::string bomb = R"({"type":"result","id":"big","ok":true,"pack":{"x":{"runs":[0,100000000,0]}}})";
  EXPECT_NE(sp::first_difference(plain, bomb, views).find("expands the answer past"), std::string::npos);
}

// Runs are compared without expanding them (a pack's lists run to millions
// of values): the first difference of two lists, each written as runs in
// any split (count-1 triples with any step, empty triples, values near the
// int64 ends), is the one the plain arrays give, message and all. The plain
// pair takes no runs path, so it is the independent side.
TEST(Limits, RunsCompareAsThePlainListsTheyStandFor) {
  std::mt19937_64 rng(29);
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  // Stretches of arithmetic progressions, some at the ends of int64.
  const auto sequence = [&] {
    std::vector<std::int64_t> out;
    for (std::int64_t pieces = pick(0, 5); pieces > 0; --pieces) {
      std::int64_t n = pick(1, 40), first = pick(-50, 50), step = pick(-3, 3);
      if (pick(0, 5) == 0) {  // from INT64_MIN to near INT64_MAX: k * step alone leaves int64
        n = pick(3, 40);
        step = static_cast<std::int64_t>(2 * static_cast<__int128>(INT64_MAX) / (n - 1));
        first = INT64_MIN + pick(0, 1);
      }
      for (std::int64_t k = 0; k < n; ++k) {
        out.push_back(static_cast<std::int64_t>(static_cast<__int128>(first) + static_cast<__int128>(k) * step));
      }
    }
    return out;
  };
  // One of the many runs encodings of `s`.
  const auto runs_of = [&](const std::vector<std::int64_t>& s) {
    json r = json::array();
    for (std::size_t i = 0; i < s.size();) {
      if (pick(0, 6) == 0) r.insert(r.end(), {pick(-9, 9), 0, pick(-9, 9)});
      std::size_t same = 1;  // the longest progression from i
      while (i + same < s.size() && (same == 1 || static_cast<__int128>(s[i + same]) - s[i + same - 1] ==
                                                      static_cast<__int128>(s[i + 1]) - s[i])) {
        if (static_cast<__int128>(s[i + same]) - s[i + same - 1] > INT64_MAX ||
            static_cast<__int128>(s[i + same]) - s[i + same - 1] < INT64_MIN)
          break;
        ++same;
      }
      const std::size_t n = static_cast<std::size_t>(pick(1, static_cast<std::int64_t>(same)));
      const std::int64_t step = n > 1 ? s[i + 1] - s[i] : pick(-9, 9);
      r.insert(r.end(), {s[i], static_cast<std::int64_t>(n), step});
      i += n;
    }
    return json{{"runs", r}};
  };
  const auto line = [](const json& list) {
    return json{
        {"type", "result"}, {"id", "r"}, {"ok", true}, {"pack", {{"rows", list}}}, {"graph_bounds", json::object()}}
        .dump();
  };
  std::size_t differing = 0;
  for (int t = 0; t < 3000; ++t) {
    const std::vector<std::int64_t> want = sequence();
    std::vector<std::int64_t> got = want;
    switch (pick(0, 4)) {
      case 0:
        break;
      case 1:
        if (!got.empty()) {
          std::int64_t& v = got[static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(got.size()) - 1))];
          v += v > 0 ? -pick(1, 2) : pick(1, 2);
        }
        break;
      case 2:
        if (!got.empty()) got.pop_back();
        break;
      case 3:
        got.push_back(pick(-5, 5));
        break;
      default:
        got = sequence();
    }
    const std::string plain = sp::first_difference(line(want), line(got), {});
    differing += !plain.empty();
    const json rw = runs_of(want), rg = runs_of(got);
    ASSERT_EQ(sp::first_difference(line(rw), line(rg), {}), plain) << rw << "\n" << rg;
    ASSERT_EQ(sp::first_difference(line(rw), line(got), {}), plain) << rw;
    ASSERT_EQ(sp::first_difference(line(want), line(rg), {}), plain) << rg;
  }
  EXPECT_GT(differing, 1500u);
  // An object with a member besides "runs" is not a runs object; a runs
  // object where another type is due shows as its list.
  EXPECT_EQ(sp::first_difference(line(json{1, 2}), line(json{{"runs", {5, 2, 1}}, {"x", 1}}), {}),
            R"(pack.rows: expected [1,2], port {"runs":[5,2,1],"x":1})");
  EXPECT_EQ(sp::first_difference(line(json::object()), line(json{{"runs", {5, 2, 1}}}), {}),
            "pack.rows: expected {}, port [5,6]");
}

// A pad segment on one side only is reported before the rows and offsets it
// moves (PROTOCOL.md "Grouped failures"): E1's answer without its pad
// segment and with its rows changed differs first at pack.pad_segment; with
// the segment kept, at the rows.
TEST(Limits, APadSegmentOnOneSideIsTheFirstDifference) {
  json want;
  for (const auto& v : sc::read_vectors(SEQPACK_VECTORS_DIR)) {
    if (v.id == "E1") want = json::parse(v.expect);
  }
  ASSERT_TRUE(want.is_object());
  ASSERT_FALSE(want["pack"]["pad_segment"].is_null());
  json got = want;
  got["pack"]["causal_rows"][0] = 99;
  got["pack"]["full_only_rows"].erase(got["pack"]["full_only_rows"].size() - 1);
  EXPECT_EQ(sp::first_difference(want.dump(), got.dump(), {}).rfind("pack.causal_rows[0]: ", 0), 0u);
  got["pack"]["pad_segment"] = nullptr;
  EXPECT_EQ(sp::first_difference(want.dump(), got.dump(), {}).rfind("pack.pad_segment: expected {", 0), 0u);
  // And the other way: a segment the reference does not have.
  json none = want, extra = want;
  none["pack"]["pad_segment"] = nullptr;
  extra["pack"]["causal_rows"][0] = 99;
  EXPECT_EQ(sp::first_difference(none.dump(), extra.dump(), {}).rfind("pack.pad_segment: expected null", 0), 0u);
}

// Numbers are compared by type and value (PROTOCOL.md "Numbers", issue 38):
// an integer field takes an integer written without fraction or exponent
// that fits int64. A value equal as a number but of another JSON type (6.0,
// 6e0) or past int64 (2^64 - 1 where the reference has -1, read by
// nlohmann's == as equal) is a named difference, in plain lists, in runs, in
// scalars, ids and session steps; the reference's own answers, retyped
// nowhere, still compare equal.
TEST(Limits, NumbersOfAnotherJsonTypeAreDifferences) {
  json want;
  for (const auto& v : sc::read_vectors(SEQPACK_VECTORS_DIR)) {
    if (v.id == "E1") want = json::parse(v.expect);
  }
  ASSERT_TRUE(want.is_object());
  const std::string w = want.dump();
  EXPECT_EQ(sp::first_difference(w, w + " ", {}), "");
  // Text replacements of the answer's own numbers; each must differ.
  const auto replaced = [&](const std::string& from, const std::string& to) {
    const std::size_t at = w.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return w.substr(0, at) + to + w.substr(at + from.size());
  };
  const std::string rows = "\"causal_rows\":[";
  const std::size_t first_row = w.find(rows) + rows.size();
  const std::string row0 = w.substr(first_row, w.find_first_of(",]", first_row) - first_row);
  ASSERT_FALSE(row0.empty());
  for (const std::string& form : {row0 + ".0", row0 + "e0", row0 + "E0", row0 + ".00"}) {
    const std::string d = sp::first_difference(w, replaced(rows + row0, rows + form), {});
    EXPECT_EQ(d, "pack.causal_rows[0]: expected " + row0 + ", port " + std::to_string(std::stoll(row0)) +
                     ".0 (a number with a fraction or an exponent: the field takes integers only)")
        << form;
  }
  // -1 (a padding row) written as an unsigned 64-bit integer.
  const std::string pad_row = "\"full_only_rows\":[";
  ASSERT_NE(w.find("-1", w.find(pad_row)), std::string::npos);
  json unsigned_pad = want;
  for (auto& r : unsigned_pad["pack"]["full_only_rows"]) {
    if (r == -1) r = std::numeric_limits<std::uint64_t>::max();
  }
  EXPECT_NE(sp::first_difference(w, unsigned_pad.dump(), {})
                .find("expected -1, port 18446744073709551615 (past int64: the field is a signed 64-bit integer)"),
            std::string::npos);
  // A scalar, an integer past int64 at INT64_MIN's place, and the id.
  json scalar = want, low_want = want, low_got = want, id = want;
  scalar["pack"]["max_num_tokens"] = static_cast<double>(want["pack"]["max_num_tokens"].get<std::int64_t>());
  EXPECT_EQ(sp::first_difference(w, scalar.dump(), {}).rfind("pack.max_num_tokens: expected ", 0), 0u);
  low_want["pack"]["max_num_tokens"] = std::numeric_limits<std::int64_t>::min();
  low_got["pack"]["max_num_tokens"] = std::uint64_t{1} << 63;
  EXPECT_EQ(sp::first_difference(low_want.dump(), low_got.dump(), {}),
            "pack.max_num_tokens: expected -9223372036854775808, port 9223372036854775808 (past int64: the field "
            "is a signed 64-bit integer)");
  id["id"] = 1.0;
  EXPECT_EQ(sp::first_difference(w, id.dump(), {}).rfind("id: expected ", 0), 0u);
  // Runs: a triple's float or unsigned value is refused by name.
  const json runs_want = {{"type", "result"},
                          {"id", "r"},
                          {"ok", true},
                          {"graph_bounds", nullptr},
                          {"pack", {{"rows", {{"runs", {0, 3, 1}}}}}}};
  json runs_got = runs_want;
  runs_got["pack"]["rows"]["runs"][2] = 1.0;
  EXPECT_EQ(sp::first_difference(runs_want.dump(), runs_got.dump(), {}),
            "the port's answer.pack.rows.runs[2]: expected an integer that fits int64, port 1.0");
  // A session step whose only difference is a number's type.
  const json session_want = {{"type", "session"}, {"id", "s"}, {"results", {want}}};
  json session_got = session_want;
  session_got["results"][0]["pack"]["max_num_tokens"] = scalar["pack"]["max_num_tokens"];
  EXPECT_EQ(sp::first_difference(session_want.dump(), session_got.dump(), {}).rfind("session step 0: pack.", 0), 0u);
}

// An ExpectedAnswer (the reference's line read once, as the fuzz target
// keeps it) compares as its line does: on the vectors' own answers, in both
// encodings, in the oracle's views and in none, and on damaged copies (a
// value changed, the line cut, a byte replaced), including a runs bomb.
TEST(Limits, AnExpectedAnswerComparesAsItsLine) {
  const auto vectors = sc::read_vectors(SEQPACK_VECTORS_DIR);
  ASSERT_GE(vectors.size(), 300u);
  std::mt19937_64 rng(11);
  std::size_t differing = 0, compared = 0;
  for (std::size_t k = 0; k < vectors.size(); k += 7) {
    const auto& v = vectors[k];
    if (v.expect.size() > 50000) continue;  // keep the test short
    for (const auto& views : {sp::oracle_views(), std::vector<std::string>{}}) {
      const std::string runs = v.steps.empty() ? sp::result_line(v.c, v.id, views, sp::Encoding::runs)
                                               : sp::session_line(v.steps, v.id, views, sp::Encoding::runs);
      const std::string plain = v.steps.empty() ? sp::result_line(v.c, v.id, views, sp::Encoding::plain)
                                                : sp::session_line(v.steps, v.id, views, sp::Encoding::plain);
      const sp::ExpectedAnswer read(runs);
      EXPECT_EQ(read.line(), runs);
      std::vector<std::string> answers = {
          runs,
          plain,
          plain.substr(0, plain.size() / 2),
          "[]",
          "not json",
          R"({"type":"result","id":")" + v.id + R"(","ok":true,"pack":{"x":{"runs":[0,100000000,0]}}})"};
      for (int d = 0; d < 6; ++d) {
        std::string t = plain;
        const std::size_t at = rng() % t.size();
        t[at] = "0123456789,]}\""[rng() % 15];
        answers.push_back(std::move(t));
      }
      for (const auto& a : answers) {
        const std::string want = sp::first_difference(runs, a, views);
        ASSERT_EQ(sp::first_difference(read, a, views), want) << v.id << ": " << a.substr(0, 300);
        ++compared;
        differing += !want.empty();
      }
    }
  }
  EXPECT_GT(compared, 1000u);
  EXPECT_GT(differing, compared / 2);
}

namespace {

// parse_json's fast path gives the document nlohmann's parser builds, or
// leaves the text to it: on the golden vector lines (nearly all of which it
// must read itself),
// on edge cases of each token, and on 20,000 damaged copies of vector lines.
TEST(Limits, TheFastPathReadsWhatTheGeneralParserReads) {
  const auto general = [](const std::string& text) -> std::optional<json> {
    try {
      return json::parse(text);
    } catch (const json::exception&) {  // not JSON, or a number out of range
      return std::nullopt;
    }
  };
  std::vector<std::string> lines;
  std::ifstream in(std::string(SEQPACK_VECTORS_DIR) + "/vectors.jsonl");
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GT(lines.size(), 400u);
  std::size_t simple = 0;
  for (const auto& line : lines) {
    const auto fast = sp::parse_simple_json(line);
    if (!fast) continue;  // escapes or non-ASCII text (error vectors' modes)
    ++simple;
    ASSERT_EQ(fast->dump(), json::parse(line).dump()) << line.substr(0, 200);
  }
  EXPECT_GT(simple, lines.size() * 95 / 100);
  // Each edge: what the fast path must make of it (nullopt: left to the general parser).
  const std::vector<std::pair<std::string, std::optional<json>>> edges = {
      {"0", json(0u)},
      {"-5", json(std::int64_t{-5})},
      {"18446744073709551615", json(UINT64_MAX)},
      {"18446744073709551616", std::nullopt},
      {"9223372036854775807", json(std::uint64_t{INT64_MAX})},
      {"-9223372036854775807", json(-INT64_MAX)},
      {"-9223372036854775808", std::nullopt},
      {"-0", std::nullopt},
      {"01", std::nullopt},
      {"1.5", std::nullopt},
      {"1e3", std::nullopt},
      {"-", std::nullopt},
      {" [ 1 , true , false , null , \"x\" , { } , [ ] ] ", json::parse("[1,true,false,null,\"x\",{},[]]")},
      {"[1,]", std::nullopt},
      {"[1 2]", std::nullopt},
      {"{\"a\":1,}", std::nullopt},
      {"{\"a\":1,\"a\":2}", std::nullopt},
      {"{\"a\" 1}", std::nullopt},
      {"\"a\\nb\"", std::nullopt},
      {"\"caf\xC3\xA9\"", std::nullopt},
      {"\"tab\there\"", std::nullopt},
      {"\"unterminated", std::nullopt},
      {"truex", std::nullopt},
      {"nul", std::nullopt},
      {"[] []", std::nullopt},
      {"", std::nullopt},
      {std::string(64, '[') + std::string(64, ']'), json::parse(std::string(64, '[') + std::string(64, ']'))},
      {std::string(65, '[') + std::string(65, ']'), std::nullopt},
  };
  for (const auto& [text, want] : edges) {
    const auto fast = sp::parse_simple_json(text);
    EXPECT_EQ(fast.has_value(), want.has_value()) << text;
    if (fast && want) {
      EXPECT_EQ(*fast, *want) << text;
      EXPECT_EQ(fast->dump(), want->dump()) << text;  // the same number types (unsigned, signed)
    }
  }
  EXPECT_FALSE(sp::parse_simple_json("[1,2,3]", 3).has_value());  // four values
  EXPECT_TRUE(sp::parse_simple_json("[1,2,3]", 4).has_value());
  // Damaged lines: a byte replaced, removed or inserted.
  std::mt19937_64 rng(7);
  const std::string tricky = "{}[],:\"\\-0123456789.eE tfnx\x01\xC3\xFF";
  std::size_t taken = 0;
  for (int k = 0; k < 20000; ++k) {
    std::string t = lines[rng() % lines.size()].substr(0, 400);
    const std::size_t at = rng() % t.size();
    const char ch = tricky[rng() % tricky.size()];
    switch (rng() % 3) {
      case 0:
        t[at] = ch;
        break;
      case 1:
        t.erase(at, 1);
        break;
      default:
        t.insert(at, 1, ch);
    }
    const auto fast = sp::parse_simple_json(t);
    const auto slow = general(t);
    if (!fast) continue;
    ++taken;
    ASSERT_TRUE(slow.has_value()) << t;
    ASSERT_EQ(fast->dump(), slow->dump()) << t;
  }
  // Whole short lines, damaged, are parsed by the fast path often enough to matter.
  for (int k = 0; k < 2000; ++k) {
    const std::string& line = lines[rng() % lines.size()];
    if (line.size() > 3000) continue;
    std::string t = line;
    t[rng() % t.size()] = tricky[rng() % 10];
    const auto fast = sp::parse_simple_json(t);
    if (!fast) continue;
    ++taken;
    const auto slow = general(t);
    ASSERT_TRUE(slow.has_value()) << t;
    ASSERT_EQ(fast->dump(), slow->dump()) << t;
  }
  EXPECT_GT(taken, 100u);
}

}  // namespace

namespace {

// to_json writes the compact, key-sorted text nlohmann's serializer writes
// for the case as a document (built here field by field), for generated
// cases of both profiles and for text that needs escaping.
TEST(CaseJson, TheWriterWritesWhatTheSerializerWrites) {
  const auto serialized = [](const sp::Case& c, const std::string& id) {
    const auto& o = c.options;
    json j = {
        {"type", "case"},
        {"id", id},
        {"layout",
         {{"sample_lens", c.layout.sample_lens},
          {"split_lens", c.layout.split_lens},
          {"attn_modes", c.layout.attn_modes},
          {"und_token_indexes", c.layout.und_token_indexes}}},
        {"rows", c.rows},
        {"options",
         {{"cp_world_size", o.cp_world_size},
          {"pad_for_cuda_graphs", o.pad_for_cuda_graphs},
          {"is_image_batch", o.is_image_batch},
          {"full_seq_alignment", o.full_seq_alignment},
          {"causal_seq_alignment", o.causal_seq_alignment},
          {"pad_segment_only_when_padded", o.pad_segment_only_when_padded}}},
        {"graph_bounds",
         {{"image", {c.marks.image_causal, c.marks.image_full}},
          {"video", {c.marks.video_causal, c.marks.video_full}}}},
        {"row_bytes", c.row_bytes},
        {"data_seed", static_cast<std::int64_t>(c.data_seed)},
    };
    if (!c.expect_error.empty()) j["expect_error"] = c.expect_error;
    if (!c.fault.empty()) j["fault"] = c.fault;
    return j.dump();
  };
  std::set<std::string> faults;
  for (const auto profile : {seqpack::properties::Profile::packer, seqpack::properties::Profile::strict}) {
    const auto gen = seqpack::properties::gen_case(profile);
    for (std::uint64_t i = 0; i < 1500; ++i) {
      const sp::Case c = gen(rc::Random(i * 0x9E3779B97F4A7C15ull + 11), 100).value();
      ASSERT_EQ(sp::to_json(c, "p" + std::to_string(i)), serialized(c, "p" + std::to_string(i)));
      faults.insert(c.fault);
    }
  }
  EXPECT_GT(faults.size(), 5u);  // the strict profile's faults came by
  sp::Case odd;
  odd.layout = {{2}, {1, 1}, {"causal", "f\"u\\ll\n\xC3\xA9"}, {0}};
  odd.rows = 2;
  odd.data_seed = ~0ull;
  odd.row_bytes = ~std::size_t{0};
  odd.marks.video_full = -3;
  odd.expect_error = "invalid_layout";
  odd.fault = "unknown_mode";
  EXPECT_EQ(sp::to_json(odd, "id \"quoted\" \x01"), serialized(odd, "id \"quoted\" \x01"));
  EXPECT_EQ(sp::to_json(odd, "back\\slash"), serialized(odd, "back\\slash"));
  EXPECT_EQ(sp::to_json(odd, "del \x7F"), serialized(odd, "del \x7F"));
  odd.layout.attn_modes[1] = "\xFF";  // not UTF-8: refused by both
  EXPECT_THROW(sp::to_json(odd), json::exception);
  EXPECT_THROW(serialized(odd, "case"), json::exception);
}

}  // namespace

namespace {

// read_line_bounded reads the lines std::getline reads, keeps those of at
// most `max` bytes and reports the length of longer ones, at the lengths
// around its 64 KiB chunks and around `max`, with and without a final newline.
TEST(Limits, BoundedLinesAreTheLinesGetlineReads) {
  const std::size_t chunk = std::size_t{1} << 16;
  std::vector<std::size_t> lengths = {
      0, 1, 2, 9, 10, 11, chunk - 2, chunk - 1, chunk, chunk + 1, 2 * chunk - 1, 2 * chunk, 3 * chunk + 5};
  for (const std::size_t max : {std::size_t{10}, chunk - 1, chunk, 2 * chunk}) {
    for (const bool final_newline : {true, false}) {
      std::string text;
      std::vector<std::string> want;
      for (std::size_t k = 0; k < lengths.size(); ++k) {
        std::string line(lengths[k], static_cast<char>('a' + k));
        if (!line.empty()) line[line.size() / 2] = '\r';
        want.push_back(line);
        text += line;
        if (k + 1 < lengths.size() || final_newline) text += '\n';
      }
      std::istringstream in(text);
      std::string line;
      std::size_t too_long = 0;
      for (std::size_t k = 0; k < want.size(); ++k) {
        SCOPED_TRACE("max " + std::to_string(max) + ", line " + std::to_string(k) + " of " +
                     std::to_string(want[k].size()) + " bytes" + (final_newline ? "" : ", no final newline"));
        ASSERT_TRUE(sp::read_line_bounded(in, line, max, &too_long));
        if (want[k].size() <= max) {
          EXPECT_EQ(too_long, 0u);
          EXPECT_TRUE(line == want[k]);
        } else {
          EXPECT_EQ(too_long, want[k].size());
          EXPECT_TRUE(line.empty());
        }
      }
      EXPECT_FALSE(sp::read_line_bounded(in, line, max, &too_long));
      EXPECT_FALSE(sp::read_line_bounded(in, line, max, &too_long));  // and stays at the end
    }
  }
}

// A stream that fails to read (an I/O error; a directory given as stdin)
// is an InputError, also in the middle of a line, never a retry loop.
TEST(Limits, ABoundedLineOnAFailingStreamIsAnError) {
  // Hands out `text`, then throws as a file buffer does on a read error.
  class Failing : public std::streambuf {
   public:
    explicit Failing(std::string text) : text_(std::move(text)) {
      setg(text_.data(), text_.data(), text_.data() + text_.size());
    }

   protected:
    // Past 1,000 retries it reports the end, so that a reader which retries
    // a failed read ends (and fails the test) instead of spinning.
    int_type underflow() override {
      if (++reads_ > 1000) return traits_type::eof();
      throw std::ios_base::failure("read error");
    }

   private:
    std::string text_;
    int reads_ = 0;
  };
  for (const std::string text : {"", "half a line", "one line\nhalf"}) {
    Failing buffer(text);
    std::istream in(&buffer);
    std::string line;
    std::size_t too_long = 0;
    if (text.find('\n') != std::string::npos) {
      ASSERT_TRUE(sp::read_line_bounded(in, line, 100, &too_long));
      EXPECT_EQ(line, "one line");
    }
    EXPECT_THROW(sp::read_line_bounded(in, line, 100, &too_long), sp::InputError) << text;
  }
}

}  // namespace
