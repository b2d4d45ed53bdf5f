// Uses the installed conformance, properties and gpu components: the golden
// vectors' first worked example answered by the oracle, a case from the
// generators, and E1 built by the gpu backend this program links (cpp or omp)
// against the reference.
#include <iostream>

#include <rapidcheck.h>

#include "seqpack/conformance/examples.hpp"
#include "seqpack/conformance/protocol.hpp"
#include "seqpack/gpu/pack.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/reference/pack.hpp"

namespace ref = seqpack::reference;
namespace sc = seqpack::conformance;

int main() {
  const sc::Case& e1 = sc::worked_examples().front().c;
  const std::string line = sc::result_line(e1, "E1", sc::oracle_views());
  bool ok = line.find("\"ok\":true") != std::string::npos;

  const sc::Case generated = seqpack::properties::gen_packer_case()(rc::Random(7), 20).value();
  ok = ok && !generated.layout.sample_lens.empty();

  ref::GraphMarks marks;
  const ref::Pack want = ref::build_pack(sc::case_rows(e1), e1.layout, e1.options, marks);
  ref::GraphMarks gpu_marks;
  namespace gpu = seqpack::gpu;
  const auto pack = gpu::build_pack(gpu::to_device(sc::case_rows(e1)), e1.layout, e1.options, gpu_marks);
  ok = ok && gpu::to_host(pack.causal_seq) == want.causal_seq &&
       gpu::to_host(pack.full_only_seq) == want.full_only_seq && gpu_marks == marks;
  std::cout << "components: " << (ok ? "ok" : "WRONG") << "\n";
  return ok ? 0 : 1;
}
