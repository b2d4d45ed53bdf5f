// `seqpack check` over the worked examples.
#include "check.hpp"

#include <cstring>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "paths.hpp"
#include "seqpack/conformance/runner.hpp"
#include "seqpack/protocol/examples.hpp"
#include "seqpack/protocol/render.hpp"

namespace seqpack::cli {
namespace {

namespace ref = seqpack::reference;

ref::Rows numbered(std::size_t n) {
  ref::Rows rows(n, 8);
  for (std::size_t r = 0; r < n; ++r) {
    const auto tag = static_cast<std::uint32_t>(r + 1);
    std::memcpy(rows.row(r), &tag, sizeof tag);
    std::memcpy(rows.row(r) + 4, &tag, sizeof tag);
  }
  return rows;
}

// Self-checks that need no expected values: round trips and CP identity.
int self_check(std::ostream& out, const ref::Pack& pack, const ref::Rows& input, std::int64_t cp) {
  int failed = 0;
  const auto check = [&](const char* name, const std::function<bool()>& ok) {
    bool passed = false;
    try {
      passed = ok();
    } catch (const ref::Error& e) {
      out << "    (" << e.what() << ")\n";
    }
    out << "  check    " << (passed ? "ok    " : "FAILED") << " " << name << "\n";
    failed += passed ? 0 : 1;
  };
  check("get_all_seq returns the input bit for bit", [&] { return ref::get_all_seq(pack) == input; });
  check("from_all_seq(get_all_seq) rebuilds both streams", [&] {
    const ref::Pack again = ref::from_all_seq(ref::get_all_seq(pack), pack);
    return again.causal_seq == pack.causal_seq && again.full_only_seq == pack.full_only_seq;
  });
  if (cp > 1) {
    check("gathering every rank's shard gives the pack back", [&] {
      const ref::Pack whole = ref::gather_shards(ref::shard_pack_all(pack, cp));
      return whole.causal_seq == pack.causal_seq && whole.full_only_seq == pack.full_only_seq &&
             whole.causal_sample_ids == pack.causal_sample_ids &&
             whole.full_only_sample_ids == pack.full_only_sample_ids;
    });
    for (std::int64_t r = 0; r < cp; ++r) {
      const auto [c, f] = ref::get_num_real_tokens(ref::shard_pack(pack, r, cp));
      out << "  rank " << r << "   local real rows: causal " << c << ", full " << f << "\n";
    }
  }
  return failed;
}

}  // namespace

int run_examples(std::ostream& out, const std::string& only) {
  int failed = 0;
  int ran = 0;
  for (const protocol::WorkedExample& ex : protocol::worked_examples()) {
    if (!only.empty() && ex.name != only) continue;
    ++ran;
    out << ex.name << ": " << ex.what << "\n";
    protocol::print_case(out, ex.c.layout, ex.c.options);
    std::size_t rows = 0;
    for (const std::int64_t s : ex.c.layout.sample_lens) rows += static_cast<std::size_t>(s);
    const ref::Rows input = numbered(rows);
    ref::GraphMarks marks;
    try {
      const ref::Pack pack = ref::build_pack(input, ex.c.layout, ex.c.options, marks);
      protocol::print_pack(out, pack);
      failed += self_check(out, pack, input, ex.c.options.cp_world_size);
    } catch (const ref::Error& e) {
      out << "  error    " << e.what() << "\n";
    }
    out << "\n";
  }
  if (ran == 0) {
    out << "no example is named '" << only << "'\n";
    return 1;
  }
  out << "check: " << ran << " examples, " << failed << " failed self-checks\n";
  return failed;
}

int run_check(std::ostream& out, const CheckOptions& options) {
  int failed = run_examples(out, options.only);
  if (!options.only.empty()) return failed;
  // Conformance of every port the build has, both profiles, golden vectors first.
  const Paths paths = find_paths(options.self);
  std::vector<Port> ports = {{"reference oracle", shell_quoted(options.self) + " oracle"}};
  ports.insert(ports.end(), paths.ports.begin(), paths.ports.end());
  if (paths.vectors_dir.empty()) out << "\nno golden vectors found (" << paths.source << "): random cases only\n";
  for (const auto& port : ports) {
    conformance::ConformOptions co;  // both profiles, as `seqpack conform` by default
    co.port = port.command;
    co.cases = options.time_s > 0 ? 0 : options.cases;
    co.time_s = options.time_s;
    co.seed = options.seed;
    co.vectors_dir = paths.vectors_dir;
    out << "\nconformance: " << port.name << ", golden vectors, packer and strict profiles\n";
    std::ostringstream err;
    // A campaign prints a progress line on stderr every 30 s (at least once
    // a minute, so overnight logs show life, terminal or not).
    int rc = 0;
    if (options.time_s > 0) {
      co.progress_every_s = 30;
      rc = conformance::run_conform(co, out, std::cerr);
    } else {
      rc = conformance::run_conform(co, out, err);
    }
    out << err.str();
    failed += rc == 0 ? 0 : 1;
  }
  out << "\ncheck: " << (failed == 0 ? "all passed" : std::to_string(failed) + " failed") << "\n";
  return failed;
}

}  // namespace seqpack::cli
