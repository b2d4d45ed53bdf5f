// The protocol's case type (seqpack/protocol/case.hpp), under the names the
// generators and the catalogue use. The type and its JSON belong to the
// protocol library, which ports link without RapidCheck; the properties only
// produce and check cases.
#pragma once

#include "seqpack/protocol/case.hpp"

namespace seqpack::properties {

using protocol::build_case;
using protocol::Case;
using protocol::case_from_json;
using protocol::case_rows;
using protocol::category;
using protocol::list_und_tokens;
using protocol::Profile;
using protocol::to_json;

}  // namespace seqpack::properties
