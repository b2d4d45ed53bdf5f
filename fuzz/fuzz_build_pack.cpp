// Fuzz target: the reference's build on a decoded case, then the whole
// property catalogue on it (the property suite's own functions), with one
// build shared by every property that only reads it. A violation aborts with
// the property's name and the case.
//
// The same source is fuzz_large_pack, built with SEQPACK_FUZZ_LARGE: the
// large budget (streams past the 16384-row bucket edge, wide rows) and the
// rank sweeps too, slower on purpose (fuzz/README.md).
#include <cstddef>
#include <cstdint>

#include "seqpack/fuzz/decode.hpp"
#include "seqpack/properties/catalogue.hpp"
#include "seqpack/reference/errors.hpp"

namespace sf = seqpack::fuzz;
namespace ref = seqpack::reference;

namespace {
namespace sp = seqpack::properties;
#ifdef SEQPACK_FUZZ_LARGE
constexpr const sf::Budget& kBudget = sf::kLargeBudget;
constexpr sp::Sweeps kSweeps = sp::Sweeps::include;
#else
// The rank sweeps (cp.shards_tile, cp.gather_identity, cp.local_counts,
// cp.position_ids) are fuzz_context_parallel's: it checks the same invariants
// on every rank of the case's world and of a second one.
constexpr const sf::Budget& kBudget = sf::kFastBudget;
constexpr sp::Sweeps kSweeps = sp::Sweeps::skip;
#endif
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  seqpack::protocol::Case c = sf::decode_case(data, size, kBudget);
  if (!sf::small_enough(c, kBudget)) return 0;
  const seqpack::properties::Subject subject(c);  // sees the class set below
  if (c.expect_error.empty() && size > 0 && (data[0] & 1)) {
    // Raw form: the class is the reference's answer; the properties then check
    // everything else about it (marks untouched, the same class everywhere, ...).
    try {
      subject.pack();
    } catch (const ref::Error& e) {
      c.expect_error = ref::to_string(e.code());
      c.fault = "raw";
    } catch (const std::exception& e) {
      sf::report(std::string("build_pack threw something else than a seqpack error: ") + e.what(), c);
    }
  }
  const std::vector<std::string> violations = seqpack::properties::check_all(subject, kSweeps);
  if (!violations.empty()) sf::report("property " + violations.front(), c);
  return 0;
}
