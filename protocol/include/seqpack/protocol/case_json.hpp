// Case parsing from an already parsed JSON value (for protocol handlers).
#pragma once

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/case.hpp"

namespace seqpack::protocol {

/// As case_from_json, from a parsed value.
Case case_from_json_value(const nlohmann::json& j);

/// Whether JSON writes `s` as it is between its quotes (printable ASCII
/// without `"` or `\`): the writers copy such text instead of calling the
/// serializer, which would write the same bytes.
inline bool writes_as_is(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= 0x20 && ch <= 0x7E && ch != '"' && ch != '\\'; });
}

}  // namespace seqpack::protocol
