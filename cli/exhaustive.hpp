// `seqpack exhaustive`: every case of a scope in process (the property
// catalogue on the reference, and the GPU implementation's CPP and OMP builds
// against the reference on every view), and `--list`, the scopes and their
// sizes. The LibTorch binding is checked on a scope over the protocol
// (`seqpack conform --exhaustive S --port torch_port`): linking LibTorch
// into this program would cost every command a second of start-up.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace seqpack::cli {

struct ExhaustiveCli {
  std::string scope = "tiny";
  std::string shard;                 ///< "I/N", or empty
  std::int64_t limit = 0;            ///< the shard's first cases only
  std::vector<std::string> engines;  ///< reference, gpu-cpp, gpu-omp (empty: every one this build has)
  bool list = false;
  int jobs = 1;
};

/// The engines this build links ("reference" and, with gpu/, "gpu-cpp" and "gpu-omp").
std::vector<std::string> exhaustive_engines();

/// Runs it; 0 when every check holds, 1 on a failure, 2 on bad options.
int run_exhaustive_cli(const ExhaustiveCli& options, std::ostream& out, std::ostream& err);

}  // namespace seqpack::cli
