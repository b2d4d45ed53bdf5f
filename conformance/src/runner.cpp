// `seqpack conform`'s case loop: the options checked, the vectors and the
// random cases of each profile sent to the port in pipelined batches, and
// each answer compared with the reference's. The Runner class is declared in
// runner_internal.hpp; its grouping is in groups.cpp, shrinking in
// shrink.cpp, reporting in report.cpp; reading the vectors in vectors.cpp.
#include "seqpack/conformance/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <optional>

#include "runner_internal.hpp"
#include "seqpack/conformance/port.hpp"
#include "seqpack/properties/exhaustive.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::conformance {

// The runner speaks the protocol's vocabulary (seqpack/protocol/).
using namespace seqpack::protocol;  // NOLINT(google-build-using-namespace)
namespace detail {
namespace {

std::string request_of(const Pending& p, const std::vector<std::string>& views) {
  return p.steps.empty() ? request_line(p.c, p.id, views) : session_request_line(p.steps, p.id, views);
}

std::vector<std::string> views_of(const Pending& p, const std::vector<std::string>& declared) {
  return p.steps.empty() ? views_for(p.c, declared) : views_for(p.steps, declared);
}

}  // namespace

int Runner::run() {
  std::string why;
  if (const std::string bad = check_conform_options(o_); !bad.empty()) {
    err_ << "conform: " << bad << "\n";
    return 2;
  }
  try {
    known_ = read_known(o_.known_failures);
  } catch (const std::exception& e) {
    err_ << "conform: " << e.what() << "\n";
    return 2;
  }
  // The --jobs ports start side by side: a port's start-up (an interpreter,
  // torch) is paid once in wall time, not once per port.
  std::vector<std::future<std::optional<std::string>>> starting;  // why a port did not start
  starting.reserve(static_cast<std::size_t>(o_.jobs));
  for (int k = 1; k < o_.jobs; ++k) {
    more_ports_.push_back(std::make_unique<Port>(o_.port, o_.timeout_s, o_.offer_runs));
    starting.push_back(std::async(std::launch::async, [port = more_ports_.back().get()] {
      std::string failed;
      return port->start(&failed) ? std::nullopt : std::optional<std::string>(failed);
    }));
  }
  const bool first_started = port_.start(&why);
  std::vector<std::optional<std::string>> failures;
  failures.reserve(starting.size());
  for (auto& f : starting) failures.push_back(f.get());
  if (!first_started) {
    err_ << "conform: cannot start the port '" << printable(o_.port, 300) << "': " << why << "\n";
    return 2;
  }
  for (int k = 1; k < o_.jobs; ++k) {
    if (const auto& failed = failures[static_cast<std::size_t>(k - 1)]) {
      err_ << "conform: cannot start port " << k + 1 << " of --jobs " << o_.jobs << " '" << printable(o_.port, 300)
           << "': " << *failed << "\n";
      return 2;
    }
    const Port& more = *more_ports_[static_cast<std::size_t>(k - 1)];
    if (more.views() != port_.views() || more.options() != port_.options() || more.encoding() != port_.encoding()) {
      err_ << "conform: port " << k + 1 << " of --jobs " << o_.jobs
           << " said another hello than the first (views, options or encoding): one command, one port\n";
      return 2;
    }
  }
  port_views_ = port_.views();
  if (port_.options()) {
    for (const char* name : kCaseOptions) {
      const auto& declared = *port_.options();
      if (std::find(declared.begin(), declared.end(), name) == declared.end()) undeclared_options_.emplace_back(name);
    }
  }
  port_encoding_ = port_.encoding();
  start_ = Clock::now();
  if (!o_.vectors_dir.empty()) {
    std::vector<Vector> vectors;
    try {
      vectors = read_vectors(o_.vectors_dir);
    } catch (const std::exception& e) {
      err_ << "conform: " << e.what() << "\n";
      return 2;
    }
    std::vector<Pending> batch;
    const bool sessions = std::find(port_views_.begin(), port_views_.end(), "session") != port_views_.end();
    std::int64_t index = -1;
    for (auto& v : vectors) {
      if (stop_) break;
      if (!v.steps.empty() && !sessions) continue;  // a session vector, for ports that declare sessions
      if (!in_shard(++index)) continue;
      Pending p{v.id, v.c, v.expect, true, v.steps};
      if (!in_scope(p)) continue;
      batch.push_back(std::move(p));
      if (batch.size() >= batch_size_) run_batch(batch);
    }
    // The bucket edges by rule, with the vectors (their results computed now).
    for (auto& [id, c] : rule_cases()) {
      if (stop_) break;
      if (!in_shard(++index)) continue;
      Pending p{id, std::move(c), "", true, {}};
      if (!in_scope(p)) continue;
      batch.push_back(std::move(p));
      if (batch.size() >= batch_size_) run_batch(batch);
    }
    run_batch(batch);  // the vectors' last batches are still in flight as the random cases start
  }
  if (!o_.exhaustive.empty()) {
    const properties::Enumeration all(properties::scope_named(o_.exhaustive));
    std::vector<Pending> batch;
    for (std::int64_t i = 0; i < all.size() && !stop_; ++i) {
      if (!in_shard(i)) continue;
      Pending p{"x" + o_.exhaustive + "-" + std::to_string(i), all.at(i), "", false, {}};
      if (!in_scope(p)) continue;
      batch.push_back(std::move(p));
      if (batch.size() >= batch_size_) run_batch(batch);
    }
    run_batch(batch);
  }
  const bool sessions = std::find(port_views_.begin(), port_views_.end(), "session") != port_views_.end();
  for (const sp::Profile profile : o_.exhaustive.empty() ? o_.profiles : std::vector<sp::Profile>{}) {
    if (stop_) break;
    const auto gen = sp::gen_case(profile);
    const auto gen_valid = sp::gen_valid_case(profile);
    const Clock::time_point profile_start = Clock::now();
    std::vector<Pending> batch;
    for (std::int64_t i = 0; o_.cases <= 0 ? o_.time_s > 0 : i < o_.cases; ++i) {
      if (stop_ || (o_.time_s > 0 && std::chrono::duration<double>(Clock::now() - profile_start).count() > o_.time_s))
        break;
      if (!in_shard(i)) continue;
      const std::uint64_t seed = o_.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i);
      const std::string id =
          std::string(profile == sp::Profile::packer ? "p" : "s") + std::to_string(o_.seed) + "-" + std::to_string(i);
      Pending p;
      if (sessions && i % kSessionEvery == kSessionEvery - 1) {
        p = {id, {}, "", false, session_steps(gen_valid, seed)};
      } else {
        p = {id, gen(rc::Random(seed), 100).value(), "", false, {}};  // expected result computed while the port works
      }
      if (!in_scope(p)) continue;
      batch.push_back(std::move(p));
      if (batch.size() >= batch_size_) run_batch(batch);
    }
    run_batch(batch);
  }
  finish_in_flight();
  if (o_.progress) err_ << "\n";
  shrink_groups();
  return summary();
}

void Runner::ref_check(const sp::Case& c) {
  const reference::Metadata meta = (reference::validate_options(c.options, c.marks),
                                    reference::validate_layout(c.layout), reference::prepare_metadata(c.layout));
  (void)reference::plan_pack(meta, c.rows, c.options, c.marks);
}

std::vector<sp::Case> Runner::session_steps(const rc::Gen<sp::Case>& gen, std::uint64_t seed) {
  rc::Random r(seed ^ 0x5E5510Full);
  const std::size_t n = 2 + static_cast<std::size_t>(r.split().next() % 3);
  const bool image = r.split().next() % 2 == 0;
  std::vector<sp::Case> steps;
  for (std::size_t k = 0; k < n; ++k) {
    const sp::Case generated = gen(r.split(), 100).value();
    sp::Case c = generated;
    c.options.pad_for_cuda_graphs = r.split().next() % 4 != 0;
    if (r.split().next() % 4 != 0) c.options.is_image_batch = image;
    // Graphs make a pad segment due, which a layout that cannot pair
    // refuses: such a step stays as generated (sessions hold valid calls;
    // a failing step is a golden vector of its own).
    try {
      ref_check(c);
    } catch (const std::exception&) {
      c = generated;
    }
    steps.push_back(std::move(c));
  }
  return steps;
}

std::string Runner::ask_one(const sp::Case& c, const std::string& id, bool* hung) {
  const std::vector<std::string> views = views_for(c, port_.views());
  return ask(request_line(c, id, views), result_line(c, id, views, port_.encoding()), views, hung);
}

std::string Runner::ask_session(const std::vector<sp::Case>& steps, const std::string& id, bool* hung) {
  const std::vector<std::string> views = views_for(steps, port_.views());
  return ask(session_request_line(steps, id, views), session_line(steps, id, views, port_.encoding()), views, hung);
}

std::string Runner::ask(const std::string& request, const std::string& expect, const std::vector<std::string>& views,
                        bool* hung) {
  std::string why;
  if (!port_.running() && !port_.start(&why)) {
    *hung = true;
    return "the port does not restart: " + why;
  }
  const auto answers = port_.exchange({request}, &why);
  last_expect_ = expect;
  last_answer_ = answers.empty() ? std::string() : answers[0];
  if (answers.empty()) {
    ++crashes_;  // a crash or hang while shrinking counts as any other
    *hung = port_.failure() == PortFailure::hung || port_.failure() == PortFailure::line_too_long;
    return why;
  }
  return first_difference(expect, answers[0], views);
}

void Runner::run_batch(std::vector<Pending>& batch) {
  // One batch in flight per port: with every port busy, the oldest batch is
  // judged first, and this one goes to its port. The reference's expected
  // results are computed while the ports work: before the wait when every
  // port is busy, after sending when one is free. A port done with a younger
  // batch waits until the oldest is answered and judged (a port is at most
  // one batch ahead).
  if (batch.empty() || !breaker_.empty() || past_stop(next_seq_)) {  // nothing to send, or the run stops
    batch.clear();
    return;
  }
  const std::size_t seq = next_seq_++;
  const std::size_t jobs = 1 + more_ports_.size();
  const auto expect = [this](std::vector<Pending>& cases) {
    for (Pending& p : cases) {
      if (!p.expect.empty()) continue;
      p.expect = p.steps.empty() ? result_line(p.c, p.id, p.views, port_encoding_)
                                 : session_line(p.steps, p.id, p.views, port_encoding_);
    }
  };
  std::vector<Pending> cases = std::move(batch);
  batch.clear();
  batch_size_ = std::min(kBatch, 2 * batch_size_);
  std::vector<std::string> lines, ids;
  lines.reserve(cases.size());
  for (Pending& p : cases) {
    p.views = views_of(p, port_views_);
    lines.push_back(request_of(p, p.views));
    ids.push_back(p.id);
  }
  const bool wait = flights_.size() >= jobs;
  if (wait) {
    expect(cases);
    finish_oldest();
    if (!breaker_.empty() || past_stop(seq)) return;
  }
  // The first port no batch in flight holds (with batches judged oldest
  // first, the ports take them in turn).
  Port* port = &port_;
  for (std::size_t j = 0; j < jobs; ++j) {
    port = j == 0 ? &port_ : more_ports_[j - 1].get();
    if (std::none_of(flights_.begin(), flights_.end(), [port](const Flight& g) { return g.port == port; })) break;
  }
  Flight& f = flights_.emplace_back();
  f.seq = seq;
  f.cases = std::move(cases);
  f.port = port;
  f.log = std::make_unique<IoLog>();
  f.cancel = std::make_unique<std::atomic<bool>>(false);
  f.answers =
      std::async(std::launch::async, [this, port, log = f.log.get(), cancel = f.cancel.get(), lines = std::move(lines),
                                      ids = std::move(ids)] { return exchange_all(*port, lines, ids, *log, *cancel); });
  if (!wait) expect(f.cases);
}

void Runner::finish_in_flight() {
  while (!flights_.empty()) finish_oldest();
}

void Runner::finish_oldest() {
  Flight& f = flights_.front();
  const std::vector<Outcome> outcome = f.answers.get();
  if (past_stop(f.seq)) {  // sent to another port before the stop: one port would not have
    cancelled_crashes_ += f.log->crashes;
    flights_.pop_front();
    return;
  }
  const bool stopped = stop_;
  crashes_ += f.log->crashes;
  for (const auto& m : f.log->messages) err_ << m;
  if (breaker_.empty()) breaker_ = f.log->breaker;  // the first batch's (in batch order) that tripped
  for (std::size_t k = 0; k < f.cases.size(); ++k) {
    if (outcome[k].skipped) continue;
    record(
        f.cases[k],
        outcome[k].answered ? first_difference(f.cases[k].expect, outcome[k].text, f.cases[k].views) : outcome[k].text,
        outcome[k].hung, outcome[k].answered);
  }
  if (!stopped && stop_) last_recorded_ = f.seq + 1;  // --max-failures
  failed_cases_ += f.log->failed_cases;
  if (!stop_ && breaker_.empty() && o_.max_hangs > 0 && failed_cases_ >= o_.max_hangs) {
    stop_ = true;
    hang_stop_ = "the port crashed or hung on " + std::to_string(failed_cases_) + " cases (--max-hangs " +
                 std::to_string(o_.max_hangs) + "; each waits --timeout or restarts the port)";
    if (o_.progress) err_ << "\n";
    out_ << "STOP: " << hang_stop_ << "\n" << std::flush;
    last_recorded_ = f.seq;  // no later batch: one port would not have sent one
  }
  flights_.pop_front();
  if (!breaker_.empty() && !stop_) {
    stop_ = true;
    // No later batch: one port would have sent none.
    if (!last_recorded_) last_recorded_ = f.seq;
    if (o_.progress) err_ << "\n";
    out_ << "STOP: " << breaker_ << "\n" << std::flush;
  }
  cancel_past_stop();
  progress();
}

void Runner::cancel_past_stop() {
  for (Flight& g : flights_) {
    if (past_stop(g.seq)) g.cancel->store(true, std::memory_order_relaxed);
  }
}

std::vector<Runner::Outcome> Runner::exchange_all(Port& port, const std::vector<std::string>& lines,
                                                  const std::vector<std::string>& ids, IoLog& log,
                                                  const std::atomic<bool>& cancel) {
  std::vector<Outcome> outcome(lines.size());
  std::size_t done = 0;
  // What this batch's answers may hold in all, the same at any --jobs (so
  // is the verdict): N batches in flight hold at most N times the limit.
  std::size_t budget = kMaxBatchAnswerBytes;
  while (done < lines.size()) {
    std::string why;
    auto answers =
        port.exchange(std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(done), lines.end()), &why,
                      budget, 0, &cancel);
    for (std::size_t k = 0; k < answers.size(); ++k) {
      budget -= answers[k].size();
      outcome[done + k] = {true, std::move(answers[k])};
    }
    done += answers.size();
    if (done < lines.size() && port.failure() == PortFailure::too_many_bytes) {
      // The rest of the batch fails unread; the next batch starts afresh.
      for (; done < lines.size(); ++done) outcome[done] = {false, why, true};
      std::string restart_why;
      if (!port.start(&restart_why)) {
        log.messages.push_back("conform: the port does not restart: " + restart_why + "\n");
      }
      break;
    }
    const auto skip_rest = [&] {
      for (; done < lines.size(); ++done) outcome[done] = Outcome{false, "", false, true};
    };
    if (done < lines.size() && port.failure() == PortFailure::cancelled) {
      skip_rest();  // the run stopped; this batch is past it and is dropped
      break;
    }
    if (done < lines.size()) {
      const bool hung = port.failure() == PortFailure::hung || port.failure() == PortFailure::line_too_long;
      outcome[done++] = {false, why, hung};
      ++log.crashes;
      ++log.failed_cases;
      // --max-hangs reached within this batch: the run stops once it is
      // judged, whatever the batches before it held; no more waiting here.
      if (o_.max_hangs > 0 && log.failed_cases >= o_.max_hangs) {
        port.stop();
        skip_rest();
        break;
      }
      if (!restart_and_probe(port, ids[done - 1] + ": " + why, hung, log, &cancel)) {
        const bool tripped = !log.breaker.empty() || cancel.load(std::memory_order_relaxed);
        for (; done < lines.size(); ++done) {
          outcome[done] = tripped ? Outcome{false, "", false, true} : Outcome{false, "the port does not restart", true};
        }
      }
    }
  }
  return outcome;
}

double Runner::probe_timeout_s(const Port& port) const {
  return std::min(o_.timeout_s, std::max(kProbeFloorS, 4 * port.fresh_answer_s()));
}

bool Runner::restart_and_probe(Port& port, const std::string& failure, bool hung, IoLog& log,
                               const std::atomic<bool>* cancel) {
  // The probe: one causal row, default options (PROTOCOL.md's smallest case).
  sp::Case probe;
  probe.layout.sample_lens = {1};
  probe.layout.split_lens = {1};
  probe.layout.attn_modes = {"causal"};
  probe.layout.und_token_indexes = {0};
  probe.rows = 1;
  const std::string line = request_line(probe, "probe", views_for(probe, port_views_));
  std::string detail = failure;
  int streak = 1, hangs = hung ? 1 : 0;
  for (;;) {
    if (streak >= kBreakerStreak) {
      port.stop();
      log.breaker = std::string("the port ") +
                    (hangs == streak ? "hangs"
                     : hangs == 0    ? "crashes"
                                     : "hangs or crashes") +
                    " on every case (" + detail + ")";
      return false;
    }
    std::string why;
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return false;
    if (!port.start(&why)) {
      log.messages.push_back("conform: the port does not restart: " + why + "\n");
      return false;
    }
    if (!port.exchange({line}, &why, SIZE_MAX, probe_timeout_s(port), cancel).empty()) return true;  // alive
    if (port.failure() == PortFailure::cancelled) return false;
    ++log.crashes;
    ++streak;
    if (port.failure() == PortFailure::hung || port.failure() == PortFailure::line_too_long) ++hangs;
    detail += "; then probe " + std::to_string(streak - 1) + ", a one-row case to the restarted port: " + why;
  }
}

}  // namespace detail

std::string check_conform_options(const ConformOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (o.port.empty()) return "--port: the port's command line is empty";
  if (o.cases < 0) return "--cases: expected a count >= 0, got " + std::to_string(o.cases);
  if (!std::isfinite(o.time_s) || o.time_s < 0) return "--time: expected seconds >= 0, got " + std::to_string(o.time_s);
  if (!std::isfinite(o.timeout_s) || o.timeout_s <= 0 || o.timeout_s > 86400) {
    return "--timeout: expected seconds in (0, 86400], got " + std::to_string(o.timeout_s);
  }
  if (o.jobs < 1 || o.jobs > 64) return "--jobs: expected 1 to 64 port processes, got " + std::to_string(o.jobs);
  if (o.max_hangs < 0) return "--max-hangs: expected a count >= 0, got " + std::to_string(o.max_hangs);
  if (o.shrink_budget < 0) return "--shrink-budget: expected a count >= 0, got " + std::to_string(o.shrink_budget);
  if (!o.exhaustive.empty()) {
    try {
      const properties::Enumeration all(properties::scope_named(o.exhaustive));
      if (o.shard_index >= all.size()) {
        return "--shard: shard " + std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count) +
               " holds no case of " + o.exhaustive + " (" + std::to_string(all.size()) + " cases)";
      }
    } catch (const std::invalid_argument& e) {
      return std::string("--exhaustive") + (e.what() + std::string(e.what()).find(':'));
    }
  }
  for (const std::string& f : o.require_features) {
    bool known = false;
    for (const char* name : kCaseOptions) known = known || f == std::string("option:") + name;
    for (const std::string& v : oracle_views()) known = known || f == "view:" + v;
    if (!known) {
      return "--require-feature: " + f +
             " is not a feature (option:NAME of a case option, or view:NAME of a view "
             "seqpack oracle declares)";
    }
  }
  if (!o.known_failures.empty() &&
      (!fs::is_regular_file(o.known_failures, ec) || access(o.known_failures.c_str(), R_OK) != 0)) {
    return "--known-failures: " + o.known_failures + " is not a readable file";
  }
  if (!o.vectors_dir.empty()) {
    if (!fs::is_directory(o.vectors_dir, ec)) return "--vectors: " + o.vectors_dir + " is not a directory";
    bool any = false;
    for (const auto& e : fs::directory_iterator(o.vectors_dir, ec)) any = any || e.path().extension() == ".jsonl";
    if (ec || !any) return "--vectors: " + o.vectors_dir + " holds no readable *.jsonl vector file";
  }
  // A report file: a file (not a directory) in a writable directory.
  const auto writable_file = [&ec](const std::string& flag, const std::string& file) -> std::string {
    if (file.empty()) return "";
    if (fs::is_directory(file, ec)) return flag + ": " + file + " is a directory, not a file";
    const fs::path parent = fs::absolute(file, ec).parent_path();
    if (!fs::is_directory(parent, ec) || access(parent.c_str(), W_OK) != 0) {
      return flag + ": cannot write " + file + " (" + parent.string() + " is not a writable directory)";
    }
    return "";
  };
  if (std::string bad = writable_file("--report", o.report); !bad.empty()) return bad;
  if (std::string bad = writable_file("--junit", o.junit); !bad.empty()) return bad;
  if (!o.save_failures.empty()) {
    if (fs::exists(o.save_failures, ec) && !fs::is_directory(o.save_failures, ec)) {
      return "--save-failures: " + o.save_failures + " is not a directory";
    }
    fs::create_directories(o.save_failures, ec);
    if (ec || access(o.save_failures.c_str(), W_OK) != 0) {
      return "--save-failures: cannot create or write the directory " + o.save_failures +
             (ec ? " (" + ec.message() + ")" : std::string());
    }
  }
  return "";
}

int run_conform(const ConformOptions& options, std::ostream& out, std::ostream& err) {
  return detail::Runner(options, out, err).run();
}

}  // namespace seqpack::conformance
