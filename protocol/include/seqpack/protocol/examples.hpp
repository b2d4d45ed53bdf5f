// The worked examples of NOTES.md section 5 as cases: `seqpack check` prints
// them and the golden vectors carry them under the same names.
#pragma once

#include <string>
#include <vector>

#include "seqpack/protocol/case.hpp"

namespace seqpack::protocol {

struct WorkedExample {
  std::string name;  ///< "E1" ... "E7", as NOTES.md names them (E3b, E6a-c for the variants)
  std::string what;  ///< one line for people
  Case c;            ///< und lists every causal token; E7 expects pad_segment_pairing
};

/// E1 to E7 in order.
const std::vector<WorkedExample>& worked_examples();

}  // namespace seqpack::protocol
