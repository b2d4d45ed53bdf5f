// seqpack-exhaustive-torch: `seqpack exhaustive` with the LibTorch binding
// linked in beside the reference and the GPU implementation's host builds
// (cli/exhaustive.hpp says why it is a program of its own). `seqpack
// exhaustive` runs it where the build has the binding; it takes the same
// options.
#include <sched.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "exhaustive.hpp"

int main(int argc, char** argv) {
  CLI::App app{"seqpack-exhaustive-torch: seqpack exhaustive with the LibTorch binding in process"};
  seqpack::cli::ExhaustiveCli ex;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const unsigned cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? static_cast<unsigned>(CPU_COUNT(&cpus))
                                                                       : std::thread::hardware_concurrency();
  ex.jobs = static_cast<int>(std::clamp(cores, 1u, 8u));
  seqpack::cli::add_exhaustive_options(app, ex);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (const std::string bad = seqpack::cli::empty_option(app, {"--scope", "--shard", "--limit"}); !bad.empty()) {
    std::cerr << "exhaustive: " << bad << "\n";
    return 2;
  }
  return seqpack::cli::run_exhaustive_cli(ex, argv[0], std::cout, std::cerr);
}
