// Fuzz target: the reference's build on a decoded case, then the whole
// property catalogue on it (the property suite's own functions). A violation
// aborts with the property's name and the case.
#include <cstddef>
#include <cstdint>

#include "seqpack/fuzz/decode.hpp"
#include "seqpack/properties/catalogue.hpp"
#include "seqpack/reference/errors.hpp"

namespace sf = seqpack::fuzz;
namespace ref = seqpack::reference;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  seqpack::properties::Case c = sf::decode_case(data, size);
  if (!sf::small_enough(c)) return 0;
  if (c.expect_error.empty() && size > 0 && (data[0] & 1)) {
    // Raw form: the class is the reference's answer; the properties then check
    // everything else about it (marks untouched, the same class everywhere, ...).
    try {
      seqpack::properties::build_case(c);
    } catch (const ref::Error& e) {
      c.expect_error = ref::to_string(e.code());
      c.fault = "raw";
    } catch (const std::exception& e) {
      sf::report(std::string("build_pack threw something else than a seqpack error: ") + e.what(), c);
    }
  }
  const std::vector<std::string> violations = seqpack::properties::check_all(c);
  if (!violations.empty()) sf::report("property " + violations.front(), c);
  return 0;
}
