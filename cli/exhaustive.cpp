// run_exhaustive_cli (exhaustive.hpp).
#include "exhaustive.hpp"

#include <algorithm>
#include <stdexcept>

#include "seqpack/conformance/exhaustive.hpp"
#include "seqpack/properties/exhaustive.hpp"
#include "verdict.hpp"

#ifdef SEQPACK_CLI_GPU_ENGINES
#include "gpu_implementation.hpp"
#endif

namespace seqpack::cli {

namespace {
namespace sc = seqpack::conformance;
namespace at = seqpack::attention;
}  // namespace

std::vector<std::string> exhaustive_engines() {
#ifdef SEQPACK_CLI_GPU_ENGINES
  return {"reference", "gpu-cpp", "gpu-omp"};
#else
  return {"reference"};
#endif
}

int run_exhaustive_cli(const ExhaustiveCli& cli, std::ostream& out, std::ostream& err) {
  if (cli.list) {
    out << "scope    layouts  (packer's)  crossings  cases\n";
    for (const properties::Scope& s : properties::scopes()) {
      const properties::Enumeration e(s);
      out << s.name << std::string(9 - std::min<std::size_t>(8, s.name.size()), ' ') << e.layouts() << "  ("
          << e.packer_layouts() << ")  " << e.option_crossings() << "  " << e.size() << "\n";
    }
    return 0;
  }
  sc::ExhaustiveOptions o;
  try {
    o.scope = properties::scope_named(cli.scope);
  } catch (const std::invalid_argument& e) {
    err << "exhaustive: " << e.what() << "\n";
    return 2;
  }
  if (!cli.shard.empty() && !parse_shard(cli.shard, &o.shard_index, &o.shard_count)) {
    err << "exhaustive: --shard: expected I/N with 0 <= I < N <= 100000, got '" << cli.shard << "'\n";
    return 2;
  }
  if (cli.limit < 0) {
    err << "exhaustive: --limit: expected 0 or more, got " << cli.limit << "\n";
    return 2;
  }
  o.limit = cli.limit;
  o.threads = std::clamp(cli.jobs, 1, 64);
  const std::vector<std::string> built = exhaustive_engines();
  const std::vector<std::string> engines = cli.engines.empty() ? built : cli.engines;
  o.catalogue = false;
  for (const std::string& name : engines) {
    if (std::find(built.begin(), built.end(), name) == built.end()) {
      err << "exhaustive: --engine: \"" << name << "\" is not an engine of this build (";
      for (std::size_t i = 0; i < built.size(); ++i) err << (i ? ", " : "") << built[i];
      err << ")\n";
      return 2;
    }
    if (name == "reference") o.catalogue = true;
#ifdef SEQPACK_CLI_GPU_ENGINES
    if (name == "gpu-cpp") o.engines.push_back(&ports::gpu_cpp_implementation());
    if (name == "gpu-omp") o.engines.push_back(&ports::gpu_omp_implementation());
#endif
  }
  for (const at::ConsumerId c : {at::ConsumerId::spec, at::ConsumerId::cosmos_5eee9ed})
    for (const at::Kernel k : {at::Kernel::fa3, at::Kernel::fa2}) o.consumers.push_back({c, k});
  const sc::ExhaustiveResult r = sc::run_exhaustive(o);
  sc::print_exhaustive(o, r, out);
  return r.failures.empty() ? 0 : 1;
}

}  // namespace seqpack::cli
