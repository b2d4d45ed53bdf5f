// Uses the installed LibTorch binding: E1 of NOTES.md over a float tensor.
#include <iostream>

#include <ATen/ATen.h>

#include "seqpack/torch/sequence_pack.hpp"

int main() {
  namespace tb = seqpack::torch_binding;
  tb::GraphMarks marks;
  const at::Tensor rows = at::arange(1, 5, at::kFloat).reshape({4, 1});
  const tb::SequencePack p =
      tb::sequence_pack_from_packed_sequence(rows, {"causal", "full", "causal", "full"}, {1, 1, 1, 1}, {2, 2},
                                             at::tensor({0, 2}, at::kLong), at::Tensor(), marks);
  // E1 with alignment 1: causal rows 1 and 3, then the pad segment's row.
  const bool ok = p.causal_seq.size(0) == 3 && p.causal_seq[0].item<float>() == 1.0f &&
                  p.causal_seq[1].item<float>() == 3.0f && at::equal(tb::get_all_seq(p), rows);
  std::cout << "components (torch): " << (ok ? "ok" : "WRONG") << "\n";
  return ok ? 0 : 1;
}
