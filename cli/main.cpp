// The seqpack command line: check (the main job), oracle, conform, replay,
// exhaustive, audit, report, vectors, paths.
#include <malloc.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "check.hpp"
#include "exhaustive.hpp"
#include "paths.hpp"
#include "seqpack/attention/audit.hpp"
#include "seqpack/common/version.hpp"
#include "seqpack/conformance/port.hpp"
#include "seqpack/conformance/runner.hpp"
#include "seqpack/protocol/case.hpp"
#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "seqpack/reference/reference.hpp"
#include "verdict.hpp"

namespace {

namespace sc = seqpack::conformance;
namespace sp = seqpack::protocol;

// The protocol loop: one answer line per request line, flushed.
int run_oracle_loop(bool allow_runs) {
  std::ios::sync_with_stdio(false);
  try {
    return sp::serve(std::cin, std::cout, allow_runs);
  } catch (const sp::InputError& e) {  // stdin cannot be read
    std::cerr << "oracle: " << e.what() << "\n";
    return 2;
  }
}

// A seed: decimal digits that fit uint64 (CLI11 would wrap "-1" around).
std::string parse_seed(const std::string& text, std::uint64_t* seed) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) {
    return "--seed: expected an integer in [0, 2^64), got \"" + sp::printable(text, 40) + "\"";
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return "--seed: " + text + " does not fit 64 bits";
  *seed = v;
  return "";
}

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "seqpack";
}

}  // namespace

// SIGTERM, SIGINT, SIGHUP: the ports die with the runner (they run in
// process groups of their own), then the signal takes its default course.
extern "C" void on_stop_signal(int sig) {
  seqpack::conformance::kill_all_ports();
  signal(sig, SIG_DFL);
  raise(sig);
}

int main(int argc, char** argv) {
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) signal(sig, on_stop_signal);
  // Each case allocates and frees buffers of up to megabytes; served from
  // fresh mmap'd pages they cost a page fault each, which halved throughput.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  CLI::App app{"seqpack: the SequencePack reference and its verification suite"};
  app.set_version_flag("--version", std::string("seqpack ") + seqpack::kVersion);
  app.require_subcommand(1);
  const char* const subcommands[] = {"check",  "oracle",  "conform", "replay", "exhaustive",
                                     "report", "vectors", "paths",   "audit"};

  seqpack::cli::CheckOptions check_options;
  CLI::App* check =
      app.add_subcommand("check", "The main job: worked examples, then conformance of every port the build has");
  check->add_option("--example", check_options.only, "Run only this worked example (E1 ... E7) and nothing else");
  check->add_option("--time", check_options.time_s,
                    "Seconds of random conformance cases per port (the overnight campaign)");
  check->add_option("--cases", check_options.cases, "Random conformance cases per port and profile")
      ->capture_default_str();
  std::string check_seed = "1";
  check->add_option("--seed", check_seed, "Seed of the random cases")->capture_default_str();

  std::string oracle_case;
  CLI::App* oracle =
      app.add_subcommand("oracle", "The reference as a port: protocol requests on stdin, answers on stdout");
  oracle->add_option("--case", oracle_case, "Read one case file, print the pack readably and the result, and exit");
  bool plain_only = false;
  oracle->add_flag("--plain", plain_only, "Answer in the plain encoding even when the runner offers runs");

  sc::ConformOptions co;
  std::string profile = "all";
  bool no_vectors = false;
  CLI::App* conform = app.add_subcommand("conform", "Check a port against the reference");
  conform->add_option("--port", co.port, "The port's command line (run by /bin/sh -c)")->required();
  conform
      ->add_option("--profile", profile,
                   "packer, strict, or all (the golden vectors, then packer, then strict random cases)")
      ->check(CLI::IsMember({"packer", "strict", "all"}))
      ->capture_default_str();
  conform->add_option("--cases", co.cases, "Random cases per profile (0 with --time: until the time is up)")
      ->capture_default_str();
  conform->add_option("--time", co.time_s, "Stop each profile's random cases after this many seconds");
  std::string conform_seed = "1";
  conform->add_option("--seed", conform_seed, "Seed of the random cases")->capture_default_str();
  conform->add_option("--vectors", co.vectors_dir,
                      "Replay the golden vectors (*.jsonl) of this directory first (default: this build's or "
                      "install's vectors)");
  conform->add_flag("--no-vectors", no_vectors, "Do not replay any golden vectors");
  conform->add_option("--known-failures", co.known_failures,
                      "File of categories or vector:ID entries expected to fail");
  conform->add_option("--save-failures", co.save_failures, "Write each minimal failing case to this directory");
  conform->add_option("--report", co.report, "Write a JSON summary here");
  conform->add_option("--timeout", co.timeout_s, "Seconds the port may take per answer")->capture_default_str();
  conform->add_option("--shrink-budget", co.shrink_budget, "Port calls spent shrinking each failure")
      ->capture_default_str();
  bool no_runs = false;
  conform->add_flag("--plain", no_runs, "Do not offer the runs encoding (compare plain arrays only)");
  bool no_consequences = false;
  conform->add_flag("--no-consequences", no_consequences,
                    "Do not judge each failure group's packs against a consumer (no consequence or severity)");
  std::string consumer_name = "cosmos-5eee9ed", kernel_name = "fa3";
  const auto consumer_options = [&](CLI::App* sub) {
    sub->add_option("--consumer", consumer_name,
                    "The consumer the consequences are judged against: cosmos-5eee9ed (the public framework that "
                    "reads these packs, as it runs) or spec (the consumer the original's text describes); "
                    "attention/CONSUMERS.md")
        ->check(CLI::IsMember({"cosmos-5eee9ed", "spec"}))
        ->capture_default_str();
    sub->add_option("--kernel", kernel_name,
                    "The varlen attention kernel: fa3 (LSE -inf on an empty key range, grid from cu_seqlens) or "
                    "fa2 (LSE +inf, grid in 64-row blocks from max_seqlen)")
        ->check(CLI::IsMember({"fa2", "fa3"}))
        ->capture_default_str();
  };
  consumer_options(conform);
  // The cores this process may run on (its CPU affinity, as nproc counts
  // them; a container's cpuset narrows it), at most 8: each port process
  // holds its own interpreter (the Python adapter's, torch loaded, about
  // 0.5 GB).
  {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    const unsigned cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? static_cast<unsigned>(CPU_COUNT(&cpus))
                                                                         : std::thread::hardware_concurrency();
    co.jobs = static_cast<int>(std::clamp(cores, 1u, 8u));
  }
  conform
      ->add_option("--jobs", co.jobs,
                   "Port processes answering side by side, each a batch of cases at a time (the verdict is the "
                   "same at any count; by default the cores, at most 8: 2 ports ran the original 1.40x as fast as "
                   "1 on 2 cores, bench/jobs.sh, PROTOCOL.md)")
      ->capture_default_str();
  conform
      ->add_option("--require-feature", co.require_features,
                   "A feature the port must declare (option:NAME, view:NAME); one it does not is a failure")
      ->allow_extra_args(false);
  conform->add_option("--max-failures", co.max_failures,
                      "Stop after this many distinct failure groups (0: run every case)");
  conform
      ->add_option("--max-hangs", co.max_hangs,
                   "Stop after the port crashed or hung on this many cases (0: no limit); each costs --timeout "
                   "or a restart")
      ->capture_default_str();
  bool fail_fast = false;
  conform->add_flag("--fail-fast", fail_fast, "Stop at the first failure group (--max-failures 1)");
  conform->add_option("--junit", co.junit, "Write a JUnit XML report here (a testcase per vector family and group)");
  std::string shard;
  conform->add_option("--shard", shard, "Run shard I/N of the cases (I from 0 to N-1), for N-way CI matrices");

  conform->add_option("--exhaustive", co.exhaustive,
                      "Instead of random cases, every case of this scope (tiny, small, medium; `seqpack exhaustive "
                      "--list`), in order of size; with --shard, its share (--profile, --cases, --time and --seed "
                      "do not apply)");

  seqpack::cli::ExhaustiveCli ex;
  ex.jobs = co.jobs;
  CLI::App* exhaustive = app.add_subcommand(
      "exhaustive", "Every case of a scope in process: the property catalogue and every engine against the reference");
  seqpack::cli::add_exhaustive_options(*exhaustive, ex);

  std::vector<std::string> replay_paths;
  std::string replay_port;
  double replay_timeout = 10;
  bool replay_plain = false;
  CLI::App* replay =
      app.add_subcommand("replay", "Run saved case files against a port: the diff and the reference's pack");
  replay->add_option("cases", replay_paths, "Case files (JSON), or directories of them (*.json)")->required();
  replay->add_option("--port", replay_port, "The port's command line (run by /bin/sh -c)")->required();
  replay->add_option("--timeout", replay_timeout, "Seconds the port may take per answer")->capture_default_str();
  replay->add_flag("--plain", replay_plain, "Do not offer the runs encoding");
  consumer_options(replay);

  CLI::App* audit = app.add_subcommand(
      "audit",
      "Judge the reference's pack of every layout of a scope under each consumer profile (the findings table)");
  std::vector<std::string> audit_profiles;
  std::int64_t audit_max_len = 3;
  audit
      ->add_option("--profile", audit_profiles,
                   "CONSUMER/KERNEL to audit, e.g. cosmos-5eee9ed/fa3 (repeatable; default: spec and cosmos-5eee9ed, "
                   "each on fa3 and fa2)")
      ->check(CLI::IsMember({"spec/fa3", "spec/fa2", "cosmos-5eee9ed/fa3", "cosmos-5eee9ed/fa2"}));
  std::string audit_scope;
  audit->add_option("--scope", audit_scope,
                    "Audit the valid cases of this bounded-exhaustive scope (tiny, small, medium) instead");
  audit->add_option("--max-len", audit_max_len, "Longest split of the packer's layouts (1 to 8; not with --scope)")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();

  std::vector<std::string> merge_files;
  std::string merge_out;
  CLI::App* report = app.add_subcommand("report", "Work with `conform --report` files");
  report->require_subcommand(1);
  CLI::App* merge = report->add_subcommand("merge", "Merge the JSON reports of a sharded run into one summary");
  merge->add_option("reports", merge_files, "The shards' JSON reports")->required();
  merge->add_option("--out", merge_out, "Write the merged report (JSON) here");

  std::string vectors_out;
  CLI::App* vectors = app.add_subcommand("vectors", "Regenerate the golden vectors");
  vectors->add_option("--out", vectors_out, "Output file (JSON Lines)")->required();

  std::string paths_name;
  CLI::App* paths = app.add_subcommand(
      "paths", "Print where this build finds the golden vectors and the original module (absolute paths)");
  paths->add_option("name", paths_name, "Print this one's path alone: vectors or original (exit 1 if absent)")
      ->check(CLI::IsMember({"vectors", "original"}));

  // An unknown first word is named (CLI11 would only ask for a subcommand).
  if (argc > 1 && argv[1][0] != '-' && std::find_if(std::begin(subcommands), std::end(subcommands), [&](const char* s) {
                                         return std::string(argv[1]) == s;
                                       }) == std::end(subcommands)) {
    std::cerr
        << "seqpack: unknown subcommand \"" << sp::printable(argv[1], 60)
        << "\" (expected check, oracle, conform, replay, exhaustive, report, vectors, paths or audit; see --help)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // CLI11's message names the option
    return 2;
  }
  if (check->parsed()) {
    std::string bad = parse_seed(check_seed, &check_options.seed);
    if (bad.empty() && check_options.cases < 0)
      bad = "--cases: expected a count >= 0, got " + std::to_string(check_options.cases);
    if (bad.empty() && (!std::isfinite(check_options.time_s) || check_options.time_s < 0))
      bad = "--time: expected seconds >= 0, got " + std::to_string(check_options.time_s);
    if (!bad.empty()) {
      std::cerr << "check: " << bad << "\n";
      return 2;
    }
    check_options.self = self_path();
    return seqpack::cli::run_check(std::cout, check_options) == 0 ? 0 : 1;
  }
  if (oracle->parsed()) {
    return oracle_case.empty() ? run_oracle_loop(!plain_only)
                               : seqpack::cli::run_oracle_case(oracle_case, std::cout, std::cerr);
  }
  if (replay->parsed()) {
    if (!(replay_timeout > 0 && replay_timeout <= 86400)) {
      std::cerr << "replay: --timeout: expected seconds in (0, 86400], got " << replay_timeout << "\n";
      return 2;
    }
    const seqpack::attention::ConsumerOptions consumer{*seqpack::attention::parse_consumer(consumer_name),
                                                       *seqpack::attention::parse_kernel(kernel_name)};
    return seqpack::cli::run_replay(replay_paths, replay_port, replay_timeout, !replay_plain, consumer, std::cout,
                                    std::cerr);
  }
  if (exhaustive->parsed()) {
    if (const std::string bad = seqpack::cli::empty_option(*exhaustive, {"--scope", "--shard", "--limit"});
        !bad.empty()) {
      std::cerr << "exhaustive: " << bad << "\n";
      return 2;
    }
    return seqpack::cli::run_exhaustive_cli(ex, self_path(), std::cout, std::cerr);
  }
  if (paths->parsed())
    return seqpack::cli::run_paths(seqpack::cli::find_paths(self_path()), paths_name, std::cout, std::cerr);
  if (merge->parsed()) return seqpack::cli::run_report_merge(merge_files, merge_out, std::cout, std::cerr);
  if (audit->parsed()) {
    namespace at = seqpack::attention;
    if (const std::string bad = seqpack::cli::empty_option(*audit, {"--scope"}); !bad.empty()) {
      std::cerr << "audit: " << bad << "\n";
      return 2;
    }
    if (!audit_scope.empty() && audit->count("--max-len") > 0) {
      std::cerr << "audit: --max-len: the scope " << sp::printable(audit_scope, 60)
                << " bounds the lengths; give one or the other\n";
      return 2;
    }
    if (audit_profiles.empty()) audit_profiles = {"spec/fa3", "spec/fa2", "cosmos-5eee9ed/fa3", "cosmos-5eee9ed/fa2"};
    std::vector<at::ConsumerOptions> profiles;
    for (const std::string& p : audit_profiles) {
      const auto slash = p.find('/');
      profiles.push_back({*at::parse_consumer(p.substr(0, slash)), *at::parse_kernel(p.substr(slash + 1))});
    }
    if (!audit_scope.empty()) {
      try {
        std::cout << at::format_audit(at::audit_original(seqpack::cli::audit_cases_of(audit_scope), profiles));
      } catch (const std::invalid_argument& e) {
        std::cerr << "audit: " << e.what() << "\n";
        return 2;
      }
      return 0;
    }
    at::AuditScope scope;
    scope.max_len = audit_max_len;
    std::cout << at::format_audit(at::audit_original(scope, profiles));
    return 0;
  }
  if (conform->parsed()) {
    if (const std::string bad = seqpack::cli::empty_option(*conform, {"--exhaustive", "--shard"}); !bad.empty()) {
      std::cerr << "conform: " << bad << "\n";
      return 2;
    }
    if (!co.exhaustive.empty()) {
      for (const char* random_only : {"--profile", "--cases", "--time", "--seed"}) {
        if (conform->count(random_only) > 0) {
          std::cerr << "conform: " << random_only << ": the random cases' option does not apply with --exhaustive "
                    << sp::printable(co.exhaustive, 60) << " (its cases are the scope's, in order)\n";
          return 2;
        }
      }
    }
    if (const std::string bad = parse_seed(conform_seed, &co.seed); !bad.empty()) {
      std::cerr << "conform: " << bad << "\n";
      return 2;
    }
    if (profile == "packer") co.profiles = {sp::Profile::packer};
    if (profile == "strict") co.profiles = {sp::Profile::strict};
    if (no_vectors) {
      co.vectors_dir.clear();
    } else if (co.vectors_dir.empty()) {
      co.vectors_dir = seqpack::cli::find_paths(self_path()).vectors_dir;
    }
    co.progress = isatty(2) != 0;
    co.offer_runs = !no_runs;
    co.consequences = !no_consequences;
    co.consumer = {*seqpack::attention::parse_consumer(consumer_name), *seqpack::attention::parse_kernel(kernel_name)};
    if (fail_fast) co.max_failures = 1;
    if (co.max_failures < 0) {
      std::cerr << "conform: --max-failures: expected 0 or more, got " << co.max_failures << "\n";
      return 2;
    }
    if (!shard.empty() && !seqpack::cli::parse_shard(shard, &co.shard_index, &co.shard_count)) {
      std::cerr << "conform: --shard: expected I/N with 0 <= I < N <= 100000, got '" << shard << "'\n";
      return 2;
    }
    if (const std::string bad = sc::check_conform_options(co); !bad.empty()) {
      std::cerr << "conform: " << bad << "\n";
      return 2;
    }
    return sc::run_conform(co, std::cout, std::cerr);
  }
  if (vectors->parsed()) {
    std::ofstream out(vectors_out);
    if (!out) {
      std::cerr << "vectors: --out: cannot write " << vectors_out << ": " << std::strerror(errno) << "\n";
      return 2;
    }
    int n = 0;
    for (const auto& v : sc::make_vectors()) {
      out << sc::vector_line(v) << "\n";
      ++n;
    }
    out.close();
    if (!out) {
      std::cerr << "vectors: --out: writing " << vectors_out << " failed: " << std::strerror(errno) << "\n";
      return 2;
    }
    std::cout << "vectors: " << n << " cases written to " << vectors_out << "\n";
    return 0;
  }
  return 0;
}
