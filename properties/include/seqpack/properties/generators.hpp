// RapidCheck generators for cases.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "seqpack/properties/case.hpp"

namespace seqpack::properties {

/// How RapidCheck prints a case: its JSON case line.
inline void showValue(const Case& c, std::ostream& os) { os << to_json(c); }

/// Cases of the packer's layouts (NOTES.md section 2), reaching the edges of
/// the catalogue on purpose: bucket boundaries, odd and large alignments, cp 1
/// to 16, marks left by earlier calls, empty splits, 1 and 64+ samples, long
/// streams, and every row width.
rc::Gen<Case> gen_packer_case();

/// Anything: packer cases, unusual valid layouts, and one planted fault of
/// each PROTOCOL.md error class (expect_error names it).
rc::Gen<Case> gen_strict_case();

rc::Gen<Case> gen_case(Profile profile);

/// The valid cases of a profile (strict: packer and unusual valid layouts).
rc::Gen<Case> gen_valid_case(Profile profile);

/// The edge classes a case belongs to (for RC_TAG and the distribution check).
std::vector<std::string> classify(const Case& c);

/// The classes a full default run of a profile must reach.
const std::vector<std::string>& required_classes(Profile profile);

}  // namespace seqpack::properties
