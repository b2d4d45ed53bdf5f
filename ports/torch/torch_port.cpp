// The conformance port of the LibTorch binding: `seqpack oracle`'s protocol
// loop with each case built through the binding (torch_implementation.hpp).
#include <iostream>

#include "torch_implementation.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  return seqpack::protocol::serve(std::cin, std::cout, true, seqpack::ports::torch_implementation());
}
