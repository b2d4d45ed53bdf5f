// The protocol's case type (seqpack/conformance/case.hpp), under the names the
// generators and the catalogue use. The type and its JSON belong to the
// protocol library, which ports link without RapidCheck; the properties only
// produce and check cases.
#pragma once

#include "seqpack/conformance/case.hpp"

namespace seqpack::properties {

using conformance::build_case;
using conformance::Case;
using conformance::case_from_json;
using conformance::case_rows;
using conformance::category;
using conformance::list_und_tokens;
using conformance::Profile;
using conformance::to_json;

}  // namespace seqpack::properties
