// Case parsing from an already parsed JSON value (for protocol handlers).
#pragma once

#include <nlohmann/json.hpp>

#include "seqpack/properties/case.hpp"

namespace seqpack::properties {

/// As case_from_json, from a parsed value.
Case case_from_json_value(const nlohmann::json& j);

}  // namespace seqpack::properties
