// The invariant catalogue: named properties, each a plain function of a case,
// so that RapidCheck, the fuzz targets and the corpus replay share them.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "seqpack/properties/case.hpp"

namespace seqpack::properties {

/// Thrown by a property that does not hold; the message names the property.
class Violation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Property {
  std::string name;    ///< e.g. "pad_segment.non_empty"
  std::string guards;  ///< the spec sentence or line it guards
  bool valid_only;     ///< runs on valid cases only (others are skipped)
  std::function<void(const Case&)> check;  ///< throws Violation when the property fails
};

/// Every property, in catalogue order.
const std::vector<Property>& catalogue();

/// The padded (causal, full) stream lengths the spec gives a valid case, with
/// its marks (the catalogue's own restatement, independent of the reference).
std::pair<std::int64_t, std::int64_t> expected_stream_lengths(const Case& c);

/// Runs every applicable property on `c`; returns the violations, one line each.
std::vector<std::string> check_all(const Case& c);

}  // namespace seqpack::properties
