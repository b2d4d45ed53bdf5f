// property_replay CASE.json...: runs every applicable catalogue property on
// each case file (as written by a failing property run) and prints violations.
#include <fstream>
#include <iostream>
#include <sstream>

#include "seqpack/properties/catalogue.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: property_replay CASE.json...\n";
    return 2;
  }
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    if (!in) {
      std::cerr << argv[i] << ": cannot open\n";
      return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    try {
      const auto violations = seqpack::properties::check_all(seqpack::protocol::case_from_json(text.str()));
      for (const auto& v : violations) std::cout << argv[i] << ": " << v << "\n";
      std::cout << argv[i] << ": " << (violations.empty() ? "all properties hold" : "violations found") << "\n";
      failed += violations.empty() ? 0 : 1;
    } catch (const std::exception& e) {
      std::cerr << argv[i] << ": " << e.what() << "\n";
      return 2;
    }
  }
  return failed == 0 ? 0 : 1;
}
