// The conformance runner's private parts (not installed): the Runner class
// that `seqpack conform` is, and what its files share. The case loop and the
// port exchange are in runner.cpp, shrinking in shrink.cpp, grouping and the
// known failures in groups.cpp, reporting in report.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "seqpack/attention/consequences.hpp"
#include "seqpack/conformance/port.hpp"
#include "seqpack/conformance/runner.hpp"
#include "seqpack/properties/case.hpp"
#include "seqpack/protocol/protocol.hpp"

namespace seqpack::conformance::detail {

namespace sp = seqpack::properties;
using Clock = std::chrono::steady_clock;

struct Pending {
  std::string id;
  sp::Case c;
  std::string expect;  // expected result line
  bool vector = false;
  std::vector<sp::Case> steps;          // a session's cases (PROTOCOL.md, "Sessions"); empty for a single case
  std::vector<std::string> views = {};  // the views asked for and compared (views_for), set when sent
};

struct Failure {
  std::string id, category, diff;
  sp::Case minimal;
  bool known = false;
  std::vector<sp::Case> steps;  // a session's minimal steps
  std::string minimal_json() const {
    return steps.empty() ? sp::to_json(minimal, id) : session_request_line(steps, id);
  }
};

// A known-failures entry: a key (a category, or vector:<id>), then
// optionally ` @FIELD`: the entry then covers only failures whose first
// difference is at FIELD (a field path prefix, e.g. graph_bounds), so that a
// known disagreement on one field does not hide another fault of the same
// category.
std::pair<std::string, std::string> entry_parts(const std::string& entry);

/// Every entry of a known-failures file (comments and blanks dropped).
/// Throws std::runtime_error naming the file and the malformed entry.
std::set<std::string> read_known(const std::string& path);

// The real category: a vector that names no class takes its expected
// result's (only vectors: parsing every random result would cost).
std::string category_of(const Pending& p);

// One failure group: the failures of one signature (failure_signature).
struct Group {
  std::string signature;
  std::int64_t count = 0;
  std::vector<std::string> members;  // the first few ids
  std::map<std::string, std::int64_t> categories;
  // The kinds of its differences (difference_kind: value, length, missing;
  // "" for a crash, hang or unreadable answer), with their counts.
  std::map<std::string, std::int64_t> kinds;
  Pending smallest;
  std::string smallest_diff;
  std::int64_t smallest_size = 0;
  bool smallest_hung = false;  // the port hung on it: not shrunk
  double first_s = 0;
  // The smallest member shrunk: its id is the member's with "~min" appended
  // when shrinking changed the case (kShrunkSuffix), the member's own when
  // not (a hang, a stopped run, or no smaller case failing alike).
  std::optional<Failure> shrunk;
  std::string explanation;
  // The shrunk case as printed: its runs-encoded JSON when that fits
  // kPrintedCaseBytes, else the file it was saved to (show_minimal).
  std::string minimal_line;
  attention::Verdict consequence;  // the group's consequence: the worst over its judged members
  // Members kept for judging the consequence: the 1st, 2nd, 4th, 8th ... seen
  // (at most kConsequenceSample), their expected lines dropped (recomputed).
  struct Member {
    Pending p;
    std::string diff;
    bool hung = false;
    std::int64_t size = 0;
  };
  std::vector<Member> sample;
  std::int64_t judged = 0;    // members whose consequence was judged
  std::string shrink_origin;  // the member shrinking started from ("" : the smallest)
  bool shrink_origin_hung = false;
  std::string worst_member;  // the member (or shrunk case) the consequence line is about
};

/// Members of a group whose consequence is judged besides the smallest: the
/// 1st, 2nd, 4th, 8th, 16th and 32nd seen (PROTOCOL.md, "Consequences").
constexpr std::size_t kConsequenceSample = 6;

/// Bytes of a minimal case printed in the log and the JUnit report; a longer
/// one is saved to a file, and the line names the file.
constexpr std::size_t kPrintedCaseBytes = 2048;
/// Member ids a group prints.
constexpr std::size_t kGroupMembersShown = 5;
/// What a shrunk case's id adds to its origin's: `s1-287~min`.
constexpr const char* kShrunkSuffix = "~min";

/// The member ids a group names: the first ones seen, and its smallest member
/// (named last, after "...", when it is not among them).
std::vector<std::string> shown_members(const Group& g);

class Runner {
 public:
  Runner(const ConformOptions& o, std::ostream& out, std::ostream& err)
      : o_(o), out_(out), err_(err), port_(o.port, o.timeout_s, o.offer_runs) {}

  int run();

 private:
  static constexpr std::size_t kBatch = 256;
  // Batches start small and double up to kBatch: the first cases come back
  // after a few answers (a slow port's first verdict does not wait for 256 of
  // them), and a long run still pipelines whole batches.
  static constexpr std::size_t kFirstBatch = 4;
  std::size_t batch_size_ = kFirstBatch;
  /// One random case in this many is a session, when the port declares sessions.
  static constexpr std::int64_t kSessionEvery = 16;

  // A session: 2 to 4 valid cases with CUDA graphs on (the marks are what a
  // session checks), most of one batch kind so that the marks build up.
  // Throws the reference's error if it refuses the case (nothing is built).
  static void ref_check(const sp::Case& c);

  bool in_shard(std::int64_t i) const { return o_.shard_count <= 1 || i % o_.shard_count == o_.shard_index; }

  static std::vector<sp::Case> session_steps(const rc::Gen<sp::Case>& gen, std::uint64_t seed);

  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Asks the port about one case; returns the difference ("" if it agrees).
  // `*hung` is set when the port gave no answer in time (or did not restart).
  std::string ask_one(const sp::Case& c, const std::string& id, bool* hung);
  std::string ask_session(const std::vector<sp::Case>& steps, const std::string& id, bool* hung);
  std::string ask(const std::string& request, const std::string& expect, const std::vector<std::string>& views,
                  bool* hung);
  // The consequence of one case (asking the port for it once more, unless
  // it hung on it, or failed it as a whole (`diff`: its difference); a
  // breaker-stopped run asks nothing).
  attention::Verdict judge_case(const sp::Case& c, const std::vector<sp::Case>& steps, const std::string& id, bool hung,
                                const std::string& diff);
  // The group's members judged before shrinking (its smallest and its
  // sample): the worst severity, and the smallest member that has it.
  struct Judged {
    attention::Verdict verdict;
    const Pending* start = nullptr;  // the member shrinking starts from
    std::string diff;
    bool hung = false;
    std::string id;
  };
  Judged judge_members(Group& g);
  // "silent-wrong-gradient 1, metadata-only 2": the groups by severity, worst first.
  std::string severity_counts() const;
  std::string last_expect_, last_answer_;  // ask()'s last exchange ("" answer: none came)

  struct Outcome {
    bool answered = false;
    std::string text;      // the answer, or why there is none
    bool hung = false;     // no answer in time, or a line past the limit: the case is not shrunk
    bool skipped = false;  // not asked: the circuit breaker stopped the run
  };

  // What an I/O thread saw besides the answers: merged into the run on the
  // main thread (finish_oldest), so that the threads share nothing.
  struct IoLog {
    std::int64_t crashes = 0;
    std::int64_t failed_cases = 0;  // cases the port crashed or hung on (probes not counted)
    std::vector<std::string> messages;
    std::string breaker;  // the circuit breaker's verdict, "" while it holds
  };
  // Wall time of the stops at any --jobs (PROTOCOL.md, "Stops"): a batch
  // ends at its own --max-hangs-th crash or hang (its later cases skipped;
  // the run stops once it is judged, so a one-port run records the same
  // cases), and once the run stops, every younger batch in flight is
  // cancelled (`cancel`: its exchange ends within 0.1 s, its port stopped),
  // not waited for. The crashes and hangs of the batches dropped at a stop
  // are counted apart, in cancelled_crashes_.
  std::int64_t cancelled_crashes_ = 0;
  void cancel_past_stop();
  // The circuit breaker (PROTOCOL.md, "Limits"): after a case's crash or
  // hang the port is restarted and sent a probe, a one-row case, with a
  // short time limit (probe_timeout_s). An answer, right or wrong, shows the
  // port alive; kBreakerStreak crashes or hangs in a row (the case, then its
  // probes, each from a freshly restarted port) stop the run with one
  // verdict, "the port hangs on every case" (or crashes).
  static constexpr int kBreakerStreak = 3;
  static constexpr double kProbeFloorS = 1.0;
  // At least kProbeFloorS, at most --timeout; 4 times the slowest first
  // answer a fresh port gave so far.
  double probe_timeout_s(const Port& port) const;
  // On the I/O thread, after the case `id` failed (`hung`, or a crash):
  // restarts the port and probes it. False when the run must stop: the
  // breaker tripped (log.breaker says why) or the port does not restart.
  bool restart_and_probe(Port& port, const std::string& id, bool hung, IoLog& log,
                         const std::atomic<bool>* cancel = nullptr);
  std::string breaker_;  // the breaker's verdict, "" while it holds (from the I/O threads' logs)
  // --max-hangs: the cases the port crashed or hung on, in batch order, and
  // the stop's verdict once they reach the limit ("" until then).
  std::int64_t failed_cases_ = 0;
  std::string hang_stop_;

  // Pipelining, one batch in flight per port: each port answers a batch (on
  // an I/O thread) while this thread computes the reference's expected
  // results for it and for the other ports' batches, and generates the next;
  // batches are judged and recorded in the order they were made, so the
  // verdict is the same at any --jobs.
  void run_batch(std::vector<Pending>& batch);
  void finish_in_flight();  // every batch in flight
  void finish_oldest();
  // On an I/O thread: every line's answer from `port`; a crash or hang fails
  // that case and restarts the port.
  std::vector<Outcome> exchange_all(Port& port, const std::vector<std::string>& lines,
                                    const std::vector<std::string>& ids, IoLog& log, const std::atomic<bool>& cancel);
  // --jobs: the ports besides port_, started after it; each batch goes to a
  // port that holds none, answered on an I/O thread of its own.
  std::vector<std::unique_ptr<Port>> more_ports_;
  struct Flight {
    std::size_t seq = 0;  // the batch's number, in the order batches are made
    std::vector<Pending> cases;
    Port* port = nullptr;  // port_ or one of more_ports_
    // Written by the I/O thread until `answers` is ready (`cancel` read by
    // it); declared first, so that they go last (a future of std::async
    // waits for its thread when destroyed, on the way out of an exception).
    std::unique_ptr<std::atomic<bool>> cancel;
    std::unique_ptr<IoLog> log;
    std::future<std::vector<Outcome>> answers;
  };
  std::size_t next_seq_ = 0;
  // The last batch recorded after a stop (not the breaker's) set while
  // judging batch k: at --max-failures, batch k + 1, sent before the judging
  // as with one port; at --max-hangs, batch k itself, so that no more hangs
  // are waited for than one port would. Later batches are not sent, or,
  // already sent to another port, are waited for and dropped unrecorded. The
  // cases recorded are thus those of a one-port run at any --jobs.
  std::optional<std::size_t> last_recorded_;
  bool past_stop(std::size_t seq) const { return last_recorded_ && seq > *last_recorded_; }

  // Grouping (groups.cpp): counts a case's verdict, and files a failure
  // under its known-failures entry or its group.
  // `answered`: false when the port crashed or hung on the case (only a
  // `KEY @port` entry makes that a known failure).
  void record(Pending& p, const std::string& diff, bool hung, bool answered = true);

  // Shrinking (shrink.cpp).
  // Each group's smallest member, shrunk once (keeping the group's
  // signature), then printed once with its count and a few member ids.
  void shrink_groups();
  // Shrinks a failing case by steps that know the layout (plainer options,
  // fewer samples, shorter splits), asking the port each time, greedily.
  // With `floor`, a smaller case must also keep a consequence at least that
  // severe: shrinking never lowers a group's severity.
  void shrink(Pending& p, Failure& f, const std::string& sig, std::optional<attention::Severity> floor = std::nullopt);

  // Reporting (report.cpp).
  static std::string seconds_text(double s);
  void report_group(const Group& g, std::size_t n, const Failure& f);
  // Saves the shrunk case in the runs encoding (to --save-failures DIR, or
  // when it is too long to print, to a directory of its own under the
  // temporary directory) and returns the line that shows it.
  std::string show_minimal(const Failure& f);
  std::string auto_save_dir_;  // made at the first case too long to print
  // A progress line: rewritten in place on a terminal; otherwise, when
  // progress_every_s is set, a whole line that often (overnight logs).
  void progress();
  int summary();
  // One testcase per vector family (failing with its unexpected failures'
  // ids) and per failure group.
  void write_junit(double s);
  std::vector<std::string> profile_names() const;

  const ConformOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  Port port_;
  Clock::time_point start_;
  std::set<std::string> known_, seen_keys_, failed_keys_;
  std::map<std::string, std::int64_t> mix_;
  // Capability scoping (scope.cpp, PROTOCOL.md "Features"): the options the
  // port did not declare; per feature, the vectors skipped and the random
  // cases run without it; per feature checked, its cases and failures.
  std::vector<std::string> undeclared_options_;
  std::map<std::string, std::int64_t> skipped_, projected_;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> features_;
  // False when the case uses an undeclared option and cannot run without it
  // (a vector, or a planted invalid case); a random valid case (and a
  // session's steps) instead runs with each undeclared option at its default.
  bool in_scope(Pending& p);
  // Counts a case's features as checked (and failing).
  void count_features(const Pending& p, bool failing);
  // The feature table and the "not checked" lines; false when a required
  // feature is not checked.
  bool report_features();
  std::map<std::string, Group> groups_;
  std::vector<std::string> group_order_;  // signatures in the order first seen
  std::map<std::string, std::int64_t> known_hits_;
  // Per vector family: vectors run, and the ids of those that failed.
  std::map<std::string, std::pair<std::int64_t, std::vector<std::string>>> families_;
  std::int64_t ran_ = 0, vectors_ = 0, crashes_ = 0, unexpected_ = 0, known_failures_ = 0;
  double first_verdict_s_ = -1, last_progress_s_ = 0;
  bool stop_ = false;
  std::int64_t past_stop_ = 0;  // unexpected failures of new signatures after the stop
  bool write_failed_ = false;
  std::vector<std::string> port_views_;  // as declared at the first hello
  // The batches in flight, oldest first. Declared after the ports, so that on
  // the way out (an exception mid-run) each I/O thread is waited for (a
  // future of std::async blocks in its destructor) before its port goes.
  std::deque<Flight> flights_;
  protocol::Encoding port_encoding_ = protocol::Encoding::plain;
};

}  // namespace seqpack::conformance::detail
