// A port that misbehaves on purpose, one way per mode, for the hostile-port
// suite (hostile_test.cpp): it answers as the reference oracle does, except
// where its mode says otherwise. `hostile_port MODE`; the modes are listed in
// main(). Case ids are the runner's: "p<seed>-<i>", "-shrunk" appended while
// it shrinks. `hostile_port hold_first_batch DIR` takes a directory it shares
// with the other port processes of the run (--jobs).
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/protocol.hpp"

namespace {

using nlohmann::json;
namespace sc = seqpack::protocol;

[[noreturn]] void hang() {
  for (;;) pause();
}

[[noreturn]] void crash() {
  std::cout << std::flush;
  std::abort();
}

void say(const std::string& line) { std::cout << line << "\n" << std::flush; }

// `answer` with one member replaced.
std::string with(const std::string& answer, const char* key, const json& value) {
  json j = json::parse(answer);
  j[key] = value;
  return j.dump();
}

std::string deep(std::size_t n) { return std::string(n, '[') + std::string(n, ']'); }

// Every integer of `v` that `pick` takes, replaced by what `to` makes of it.
template <class Pick, class To>
void retype(json& v, const Pick& pick, const To& to) {
  if (v.is_structured()) {
    for (auto& child : v) retype(child, pick, to);
  } else if (v.is_number_integer()) {  // nlohmann reads 0 and up as unsigned
    const auto x = v.is_number_unsigned() ? static_cast<std::int64_t>(v.get<std::uint64_t>()) : v.get<std::int64_t>();
    if (pick(x)) v = to(x);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::cerr << "usage: hostile_port MODE [DIR]\n";
    return 2;
  }
  const std::string mode = argv[1];
  const std::string dir = argc == 3 ? argv[2] : "";
  if (mode == "exit_before_hello") return 3;
  if (mode == "crash_before_hello") crash();
  if (mode == "hang_before_hello") hang();
  // The numbers' modes answer in plain lists, as most ports do (the runs
  // encoding's integers are checked on their own, in compare.cpp).
  sc::Oracle oracle(mode != "unsigned_minus_one" && mode != "float_integers");
  std::string line;
  while (std::getline(std::cin, line)) {
    const json req = json::parse(line, nullptr, false);
    const std::string type = req.is_object() ? req.value("type", "") : "";
    const std::string id = req.is_object() && req.contains("id") ? req["id"].get<std::string>() : "";
    const bool shrinking = id.find("-shrunk") != std::string::npos;
    std::string answer = oracle.handle(line);
    if (type == "hello") {
      if (mode == "hello_version") answer = with(answer, "protocol", "seqpack-conformance/9");
      // A name no terminal or XML file should take raw: an escape sequence,
      // a C1 control (CSI), DEL and U+FFFE (not an XML character), then a
      // wrong answer on every case so that the reports carry it (issue 38).
      if (mode == "odd_name")
        answer = with(answer, "name",
                      "red\x1b[31m csi\xc2\x9b"
                      "2J del\x7f nonchar\xef\xbf\xbe end");
      if (mode == "hello_views_type") answer = with(answer, "views", 5);
      // View names a runner must not paste into its requests, or list as
      // checked (issue 38).
      if (mode == "hello_view_quote") answer = with(answer, "views", {"getters\",\"rows\":1,\"x\":\"", "dtypes"});
      if (mode == "hello_view_newline") answer = with(answer, "views", {"getters\n{\"type\":\"hello\"}"});
      if (mode == "hello_view_unknown") answer = with(answer, "views", {"getters", "all_seq_paded"});
      if (mode == "hello_view_twice") answer = with(answer, "views", {"getters", "getters"});
      if (mode == "hello_garbage") answer = "hello there";
      if (mode == "hello_deep") answer = deep(200000);
      if (mode == "hello_no_newline") {
        std::cout << "{\"type\":\"hello\"" << std::flush;
        hang();
      }
      say(answer);
      continue;
    }
    // Cases and sessions.
    if (mode == "crash_after_hello") crash();
    if (mode == "odd_name" && type == "case" && id != "probe") {
      answer = with(answer, "graph_bounds", json{{"image", {9, 9}}, {"video", {9, 9}}});
    }
    // Crashes on every case and session, answers every probe (the breaker
    // holds): with every category a known failure, still a failing run.
    if (mode == "crash_every_case" && type != "hello" && id != "probe") crash();
    // Crashes the first time it is given a case id, answers it rightly the
    // next time: intermittent crashes, one group (DIR keeps the ids seen).
    if (mode == "crash_first_time" && type == "case" && id != "probe") {
      // The case's own id, without the runner's suffixes ("-shrunk", ...):
      // asked again under another id, the case is answered rightly.
      const std::string seen = dir + "/" + id.substr(0, id.find('-', id.find('-') + 1));
      if (!std::ifstream(seen).good()) {
        std::ofstream(seen) << "seen";
        crash();
      }
    }
    if (mode == "hang_after_hello") hang();
    if (mode == "exit_after_hello") return 0;
    if (mode == "crash_mid_case" && id == "p1-3") {
      std::cout << answer.substr(0, answer.size() / 2) << std::flush;
      crash();
    }
    if (mode == "hang_three_cases" && (id == "p1-0" || id == "p1-1" || id == "p1-2")) hang();
    // Hangs on every odd case p1-1, p1-3, ... (not while shrinking, not on
    // the probe): the circuit breaker holds, --max-hangs stops the run.
    if (mode == "hang_odd_cases" && id.size() > 3 && id.rfind("p1-", 0) == 0 &&
        id.find_first_not_of("0123456789", 3) == std::string::npos && (id.back() - '0') % 2 == 1) {
      hang();
    }
    // Hangs on every case and session, answers every probe: the breaker
    // holds, and only the stops end the run (issue 38).
    if (mode == "hang_every_case" && type != "hello" && id != "probe") hang();
    if (mode == "hang_mid_case" && id == "p1-3") {
      std::cout << answer.substr(0, answer.size() / 2) << std::flush;
      hang();
    }
    // The port's failure in two kinds (kPortFailure): an error it cannot
    // classify for every case, and a crash on each case tried while
    // shrinking, or a hang on the cases of fewer than 60 rows (none while
    // shrinking, nor on the probe, which is answered).
    const auto unclassified = [&] {
      return json{{"type", "result"}, {"id", id}, {"ok", false}, {"error", "unclassified"}, {"message", "boom"}}.dump();
    };
    if (mode == "unclassified_crash_in_shrink" && type == "case" && id != "probe") {
      if (shrinking) crash();
      answer = unclassified();
    }
    if (mode == "hang_small_unclassified" && type == "case" && id != "probe") {
      if (!shrinking && req.value("rows", 0) < 60) hang();
      answer = unclassified();
    }
    // --jobs: the port given p1-0, the first batch's first case, holds it
    // until another port has been given p1-4, the second batch's first case
    // (the first batch has 4 cases); after 10 s it gives up and answers
    // wrongly. A runner that sends the second batch only once the first is
    // answered fails the run. hold_first_batch_wrong answers each case
    // wrongly besides (the second batch is then answered, and fails, first).
    const bool hold = mode == "hold_first_batch" || mode == "hold_first_batch_wrong";
    if (mode == "hold_first_batch_wrong" && type == "case" && id != "probe") {
      answer = with(answer, "graph_bounds", json{{"image", {9, 9}}, {"video", {9, 9}}});
    }
    if (hold && id == "p1-4") std::ofstream(dir + "/second_batch_sent");
    if (hold && id == "p1-0") {
      bool sent = false;
      for (int k = 0; k < 200 && !sent; ++k) {
        sent = std::ifstream(dir + "/second_batch_sent").good();
        if (!sent) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!sent) answer = with(answer, "ok", false);
    }
    // A wrong answer for case 2, then a misbehaviour while it is shrunk.
    if (mode == "crash_in_shrink" || mode == "hang_in_shrink") {
      if (shrinking) mode == "crash_in_shrink" ? crash() : hang();
      if (id == "p1-2") answer = with(answer, "graph_bounds", json{{"image", {9, 9}}, {"video", {9, 9}}});
    }
    // Numbers of another JSON type, equal by value (issue 38): a port with
    // unsigned 64-bit ids prints -1 as 2^64 - 1; one with float tensors
    // prints 6 as 6.0. Both are differences, never a pass.
    if ((mode == "unsigned_minus_one" || mode == "float_integers") && type == "case" && id != "probe") {
      json j = json::parse(answer);
      if (j.contains("pack")) {
        if (mode == "unsigned_minus_one") {
          retype(
              j["pack"], [](std::int64_t x) { return x == -1; },
              [](std::int64_t) { return json(std::numeric_limits<std::uint64_t>::max()); });
        } else {
          retype(
              j["pack"], [](std::int64_t x) { return x > 0; },
              [](std::int64_t x) { return json(static_cast<double>(x)); });
        }
      }
      answer = j.dump();
    }
    if (mode == "garbage") answer = "this is not JSON";
    if (mode == "invalid_utf8") answer = "{\"type\":\"result\",\"id\":\"" + id + "\",\"ok\":false,\"error\":\"x\xff\"}";
    if (mode == "invalid_utf8_raw") answer = "\xff\xfe garbage \xff";
    if (mode == "message_int") answer = with(with(answer, "ok", false), "message", 5);
    if (mode == "type_int") answer = with(answer, "type", 5);
    if (mode == "ok_string") answer = with(answer, "ok", "yes");
    if (mode == "wrong_id") answer = with(answer, "id", "not-" + id);
    if (mode == "id_missing") {
      json j = json::parse(answer);
      j.erase("id");
      answer = j.dump();
    }
    if (mode == "duplicate_key") answer = "{\"ok\":false," + answer.substr(1);
    if (mode == "deep_nesting") answer = deep(200000);
    if (mode == "deep_in_result") {
      answer = "{\"type\":\"result\",\"id\":\"" + id + "\",\"ok\":true,\"pack\":" + deep(100) + "}";
    }
    if (mode == "runs_bomb") {
      answer = "{\"type\":\"result\",\"id\":\"" + id +
               "\",\"ok\":true,\"pack\":{\"causal_rows\":{\"runs\":[0,1000000000000,1]}}}";
    }
    if (mode == "runs_malformed") {
      answer = "{\"type\":\"result\",\"id\":\"" + id + "\",\"ok\":true,\"pack\":{\"causal_rows\":{\"runs\":[0,1]}}}";
    }
    if (mode == "huge_line") {
      // 60 MB: under the line limit, far past the value limit.
      std::string big = "{\"type\":\"result\",\"id\":\"" + id + "\",\"ok\":true,\"pack\":{\"x\":[";
      big.reserve(60'000'100);
      while (big.size() < 60'000'000) big += "0,";
      big += "0]}}";
      answer = std::move(big);
    }
    if (mode == "no_newline") {
      // Bytes as fast as the pipe takes them, never a newline.
      const std::string chunk(1 << 16, 'x');
      for (;;) {
        if (write(1, chunk.data(), chunk.size()) < 0) return 1;
      }
    }
    if (mode == "slow_no_newline") {
      std::cout << "{\"type\":\"result\"" << std::flush;
      hang();
    }
    if (mode == "stderr_flood") {
      const std::string chunk(1 << 16, 'e');
      for (int k = 0; k < 16; ++k) std::cerr << chunk;  // 1 MiB a case
      std::cerr << std::endl;
    }
    say(answer);
  }
  return 0;
}
