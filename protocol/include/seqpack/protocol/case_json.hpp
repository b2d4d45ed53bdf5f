// Case parsing from an already parsed JSON value (for protocol handlers).
#pragma once

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/case.hpp"

namespace seqpack::protocol {

/// As case_from_json, from a parsed value. With `runs_budget`, the layout's
/// integer lists may also be written in the runs encoding (PROTOCOL.md, "The
/// runs encoding"), as saved case files are (`seqpack conform
/// --save-failures`): each `{"runs":[first,count,step,...]}` is checked
/// before it is expanded (triples of int64 integers, count >= 0, values within
/// int64), and the counts of all runs read with one budget together may not
/// pass it (the budget is spent; a session's cases share one). Without it a
/// list must be a plain array: a port's request never carries runs.
Case case_from_json_value(const nlohmann::json& j, std::size_t* runs_budget = nullptr);

/// A case or session line (to_json, session_request_line) with each of the
/// layout's integer lists written in the runs encoding where that is
/// shorter: a long index range becomes one triple. What case_from_json_value
/// reads back with a runs budget; for people and saved files, not for ports.
std::string with_runs(const std::string& line);

/// Whether JSON writes `s` as it is between its quotes (printable ASCII
/// without `"` or `\`): the writers copy such text instead of calling the
/// serializer, which would write the same bytes.
inline bool writes_as_is(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= 0x20 && ch <= 0x7E && ch != '"' && ch != '\\'; });
}

}  // namespace seqpack::protocol
