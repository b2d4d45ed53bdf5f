// property_exhaustive: the property catalogue over a bounded-exhaustive
// scope, or over as many random cases, stopping at the first violation.
// The mutant table of docs/exhaustive.md runs it on every mutant
// (tests/properties/mutation/run.sh --exhaustive):
//
//   property_exhaustive --scope S        every case of S, in order of size
//   property_exhaustive --size S         the number of cases of S
//   property_exhaustive --random N       N cases of the default random run
//                                        (the packer and strict profiles in
//                                        turn, sizes 0 to 100, seed 1)
//
// Prints "killed at case I of N by PROPERTY" (exit 1) or "survived N cases".
#include <cstdlib>
#include <iostream>
#include <string>

#include "seqpack/properties/catalogue.hpp"
#include "seqpack/properties/exhaustive.hpp"
#include "seqpack/properties/generators.hpp"

namespace {

namespace props = seqpack::properties;

// The first violation's property name, or "".
std::string first_violation(const props::Case& c) {
  const props::Subject subject(c);
  const std::vector<std::string> v = props::check_all(subject);
  return v.empty() ? "" : v.front().substr(0, v.front().find(": "));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage = "usage: property_exhaustive --scope S | --size S | --random N\n";
  if (argc != 3) {
    std::cerr << usage;
    return 2;
  }
  const std::string mode = argv[1], value = argv[2];
  try {
    if (mode == "--scope") {
      const props::Enumeration all(props::scope_named(value));
      for (std::int64_t i = 0; i < all.size(); ++i) {
        const std::string killer = first_violation(all.at(i));
        if (!killer.empty()) {
          std::cout << "killed at case " << i << " of " << all.size() << " by " << killer << "\n";
          return 1;
        }
      }
      std::cout << "survived " << all.size() << " cases\n";
      return 0;
    }
    if (mode == "--size") {
      std::cout << props::Enumeration(props::scope_named(value)).size() << "\n";
      return 0;
    }
    if (mode == "--random") {
      const std::int64_t n = std::stoll(value);
      const auto packer = props::gen_case(props::Profile::packer);
      const auto strict = props::gen_case(props::Profile::strict);
      for (std::int64_t i = 0; i < n; ++i) {
        const rc::Random random(0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i));
        const props::Case c = (i % 2 == 0 ? packer : strict)(random, static_cast<int>(i % 101)).value();
        const std::string killer = first_violation(c);
        if (!killer.empty()) {
          std::cout << "killed at case " << i << " of " << n << " by " << killer << "\n";
          return 1;
        }
      }
      std::cout << "survived " << n << " cases\n";
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "property_exhaustive: " << e.what() << "\n";
    return 2;
  }
  std::cerr << usage;
  return 2;
}
