// run_exhaustive_cli (exhaustive.hpp).
#include "exhaustive.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "seqpack/conformance/exhaustive.hpp"
#include "seqpack/properties/exhaustive.hpp"
#include "seqpack/protocol/limits.hpp"
#include "verdict.hpp"

#ifdef SEQPACK_CLI_GPU_ENGINES
#include "gpu_implementation.hpp"
#endif
#ifdef SEQPACK_CLI_TORCH_ENGINE
#include "torch_implementation.hpp"
#endif

namespace seqpack::cli {

namespace {
namespace sc = seqpack::conformance;
namespace at = seqpack::attention;

// The engines linked into this program.
std::vector<std::string> linked_engines() {
  std::vector<std::string> e = {"reference"};
#ifdef SEQPACK_CLI_GPU_ENGINES
  e.insert(e.end(), {"gpu-cpp", "gpu-omp"});
#endif
#ifdef SEQPACK_CLI_TORCH_ENGINE
  e.emplace_back("torch");
#endif
  return e;
}

// The LibTorch helper of this build or install, or "" (this program is it,
// or the build has no binding).
std::string torch_helper(const std::string& self) {
#ifdef SEQPACK_CLI_TORCH_ENGINE
  (void)self;
  return "";
#else
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(self).parent_path();
  for (const fs::path& p :
       {dir / "seqpack-exhaustive-torch", dir / SEQPACK_BIN_TO_LIBEXEC / "seqpack-exhaustive-torch"}) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
#endif
}

}  // namespace

std::optional<std::int64_t> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(text);  // 19 digits fit int64
}

std::string empty_option(const CLI::App& app, const std::vector<std::string>& options) {
  for (const std::string& name : options) {
    const CLI::Option* o = app.get_option_no_throw(name);
    if (o == nullptr || o->count() == 0) continue;
    for (const std::string& v : o->results())
      if (v.empty()) return name + ": expected a value, got an empty one";
  }
  return "";
}

void add_exhaustive_options(CLI::App& app, ExhaustiveCli& ex) {
  app.add_option("--scope", ex.scope, "tiny (CI), small or medium (overnight); --list gives their sizes")
      ->capture_default_str();
  app.add_option("--shard", ex.shard, "Run shard I/N of the cases (case i when i % N == I; N <= 100000)");
  app.add_option("--limit", ex.limit, "Run only the shard's first N cases (0: all)")->capture_default_str();
  app.add_option("--engine", ex.engines,
                 "reference (the catalogue), gpu-cpp, gpu-omp, torch (default: each this build has); repeatable");
  app.add_flag("--list", ex.list, "Print the scopes and their sizes, and exit");
  app.add_option("--jobs", ex.jobs, "Threads, 1 to 64 (default: the cores, at most 8)")->capture_default_str();
}

std::vector<at::AuditCase> audit_cases_of(const std::string& name) {
  const properties::Enumeration all(properties::scope_named(name));
  std::vector<at::AuditCase> out;
  for (std::int64_t i = 0; i < all.size(); ++i) {
    const properties::Case c = all.at(i);
    if (!c.expect_error.empty()) continue;
    const auto& o = c.options;
    const auto& m = c.marks;
    std::string graphs = o.pad_for_cuda_graphs ? "on" : "off";
    if (m.image_causal > 0 || m.video_causal > 0)
      graphs += m.image_causal > 0 ? " after-large-image" : " after-large-video";
    if (o.pad_for_cuda_graphs) graphs += o.is_image_batch ? " image" : " video";
    at::AuditCase a{c.layout, o, m, "", c.rows, !all.packer_layout(i)};
    a.text = at::layout_text(c.layout) + " align " + std::to_string(o.causal_seq_alignment) + "/" +
             std::to_string(o.full_seq_alignment) + " cp " + std::to_string(o.cp_world_size) + " graphs " + graphs +
             (o.pad_segment_only_when_padded ? " pso" : "");
    out.push_back(std::move(a));
  }
  return out;
}

int run_exhaustive_cli(const ExhaustiveCli& cli, const std::string& self, std::ostream& out, std::ostream& err) {
  std::vector<std::string> built = linked_engines();
  const std::string helper = torch_helper(self);
  if (!helper.empty()) built.emplace_back("torch");
  std::vector<std::string> engines;  // as asked, each once
  for (const std::string& name : cli.engines.empty() ? built : cli.engines) {
    if (std::find(built.begin(), built.end(), name) == built.end()) {
      err << "exhaustive: --engine: \"" << protocol::printable(name, 60) << "\" is not an engine of this build (";
      for (std::size_t i = 0; i < built.size(); ++i) err << (i ? ", " : "") << built[i];
      err << ")\n";
      return 2;
    }
    if (std::find(engines.begin(), engines.end(), name) == engines.end()) engines.push_back(name);
  }
  sc::ExhaustiveOptions o;
  try {
    o.scope = properties::scope_named(cli.scope);
  } catch (const std::invalid_argument& e) {
    err << "exhaustive: " << e.what() << "\n";
    return 2;
  }
  if (!cli.shard.empty() && !parse_shard(cli.shard, &o.shard_index, &o.shard_count)) {
    err << "exhaustive: --shard: expected I/N with 0 <= I < N <= 100000, got '" << protocol::printable(cli.shard, 60)
        << "'\n";
    return 2;
  }
  const std::optional<std::int64_t> limit = parse_count(cli.limit);
  if (!limit) {
    err << "exhaustive: --limit: expected a count of cases in [0, 2^63), got '" << protocol::printable(cli.limit, 60)
        << "'\n";
    return 2;
  }
  if (cli.jobs < 1 || cli.jobs > 64) {
    err << "exhaustive: --jobs: expected 1 to 64 threads, got " << cli.jobs << "\n";
    return 2;
  }
  const properties::Enumeration all(o.scope);
  if (o.shard_index >= all.size()) {
    err << "exhaustive: --shard: shard " << o.shard_index << "/" << o.shard_count << " holds no case of "
        << o.scope.name << " (" << all.size() << " cases)\n";
    return 2;
  }
  if (cli.list) {
    out << "scope    layouts  packer's  crossings      cases\n";
    for (const properties::Scope& s : properties::scopes()) {
      const properties::Enumeration e(s);
      char line[96];
      std::snprintf(line, sizeof line, "%-7s  %7lld  %8lld  %9lld  %9lld\n", s.name.c_str(),
                    static_cast<long long>(e.layouts()), static_cast<long long>(e.packer_layouts()),
                    static_cast<long long>(e.option_crossings()), static_cast<long long>(e.size()));
      out << line;
    }
    return 0;
  }
  if (!helper.empty() && std::find(engines.begin(), engines.end(), "torch") != engines.end()) {
    // The helper runs every engine asked for, the binding among them, in one process.
    std::vector<std::string> args = {
        helper, "--scope", cli.scope, "--limit", cli.limit, "--jobs", std::to_string(cli.jobs)};
    if (!cli.shard.empty()) args.insert(args.end(), {"--shard", cli.shard});
    for (const std::string& e : engines) args.insert(args.end(), {"--engine", e});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    out.flush();
    execv(helper.c_str(), argv.data());
    err << "exhaustive: cannot run " << helper << ": " << std::strerror(errno) << "\n";
    return 2;
  }
  o.limit = *limit;
  o.threads = cli.jobs;
  o.catalogue = std::find(engines.begin(), engines.end(), "reference") != engines.end();
  for (const std::string& name : engines) {
#ifdef SEQPACK_CLI_GPU_ENGINES
    if (name == "gpu-cpp") o.engines.push_back(&ports::gpu_cpp_implementation());
    if (name == "gpu-omp") o.engines.push_back(&ports::gpu_omp_implementation());
#endif
#ifdef SEQPACK_CLI_TORCH_ENGINE
    if (name == "torch") o.engines.push_back(&ports::torch_implementation());
#endif
    (void)name;
  }
  for (const at::ConsumerId c : {at::ConsumerId::spec, at::ConsumerId::cosmos_5eee9ed})
    for (const at::Kernel k : {at::Kernel::fa3, at::Kernel::fa2}) o.consumers.push_back({c, k});
  const sc::ExhaustiveResult r = sc::run_exhaustive(o);
  sc::print_exhaustive(o, r, out);
  return r.failures.empty() ? 0 : 1;
}

}  // namespace seqpack::cli
