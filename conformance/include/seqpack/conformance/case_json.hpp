// Case parsing from an already parsed JSON value (for protocol handlers).
#pragma once

#include <nlohmann/json.hpp>

#include "seqpack/conformance/case.hpp"

namespace seqpack::conformance {

/// As case_from_json, from a parsed value.
Case case_from_json_value(const nlohmann::json& j);

}  // namespace seqpack::conformance
