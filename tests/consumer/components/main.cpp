// Uses the installed conformance, properties and gpu components: the golden
// vectors' first worked example answered by the oracle, a case from the
// generators, and E1 built by the gpu backend this program links (cpp or omp)
// against the reference.
#include <iostream>

#include <rapidcheck.h>

#include "seqpack/gpu/pack.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/protocol/examples.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "seqpack/reference/pack.hpp"

namespace ref = seqpack::reference;
namespace sp = seqpack::protocol;

int main() {
  const sp::Case& e1 = sp::worked_examples().front().c;
  const std::string line = sp::result_line(e1, "E1", sp::oracle_views());
  bool ok = line.find("\"ok\":true") != std::string::npos;

  const sp::Case generated = seqpack::properties::gen_packer_case()(rc::Random(7), 20).value();
  ok = ok && !generated.layout.sample_lens.empty();

  ref::GraphMarks marks;
  const ref::Pack want = ref::build_pack(sp::case_rows(e1), e1.layout, e1.options, marks);
  ref::GraphMarks gpu_marks;
  namespace gpu = seqpack::gpu;
  const auto pack = gpu::build_pack(gpu::to_device(sp::case_rows(e1)), e1.layout, e1.options, gpu_marks);
  ok = ok && gpu::to_host(pack.causal_seq) == want.causal_seq &&
       gpu::to_host(pack.full_only_seq) == want.full_only_seq && gpu_marks == marks;
  std::cout << "components: " << (ok ? "ok" : "WRONG") << "\n";
  return ok ? 0 : 1;
}
