// The conformance port of the GPU implementation (this build's backend):
// `seqpack oracle`'s protocol loop with the GPU implementation
// (gpu_implementation.hpp) building each case and computing every view;
// results are copied back to the host and written like the reference's.
#include <iostream>

#include "gpu_implementation.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  return seqpack::protocol::serve(std::cin, std::cout, true, seqpack::ports::SEQPACK_GPU_ENGINE_FUNCTION());
}
