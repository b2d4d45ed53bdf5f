// The invariant catalogue: named properties, each a plain function of a case,
// so that RapidCheck, the fuzz targets and the corpus replay share them.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "seqpack/attention/consequences.hpp"
#include "seqpack/properties/case.hpp"

namespace seqpack::properties {

/// Thrown by a property that does not hold; the message names the property.
class Violation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A case and what the reference makes of it, made once and shared by every
/// property that only reads it: the input rows, the pack and the marks after
/// the build. A property that changes a pack copies it first. The case must
/// outlive the subject.
class Subject {
 public:
  explicit Subject(const Case& c) : case_(c) {}
  Subject(Case&&) = delete;  // it would dangle
  const Case& c() const { return case_; }
  /// The input rows, `case_rows(c())`.
  const reference::Rows& rows() const;
  /// The reference's pack of the case; rethrows the build's error on every call.
  const reference::Pack& pack() const;
  /// The graph marks after the build (throws as pack() does).
  const reference::GraphMarks& marks_after() const;
  /// What the pack does to the attention passes it feeds (built once; throws as pack() does).
  const attention::Report& consequences() const;
  /// The attention work (query-key pairs) past which consequences() checks from the offsets alone.
  static constexpr std::int64_t kConsequencePairs = 200'000;

 private:
  void build() const;
  const Case& case_;
  mutable std::optional<reference::Rows> rows_;
  mutable std::optional<reference::Pack> pack_;
  mutable reference::GraphMarks marks_after_;
  mutable std::exception_ptr error_;
  mutable std::optional<attention::Report> consequences_;
};

struct Property {
  std::string name;                           ///< e.g. "pad_segment.non_empty"
  std::string guards;                         ///< the spec sentence or line it guards
  bool valid_only;                            ///< runs on valid cases only (others are skipped)
  std::function<void(const Subject&)> check;  ///< throws Violation when the property fails
  bool sweeps_ranks = false;                  ///< visits every CP rank: O(world x rows), not O(rows)
};

/// Which properties check_all runs.
enum class Sweeps {
  include,  ///< every property
  skip,     ///< all but the rank sweeps (fuzz_build_pack: fuzz_context_parallel checks them per rank)
};

/// Every property, in catalogue order.
const std::vector<Property>& catalogue();

/// The padded (causal, full) stream lengths the spec gives a valid case, with
/// its marks (the catalogue's own restatement, independent of the reference).
std::pair<std::int64_t, std::int64_t> expected_stream_lengths(const Case& c);

/// Runs every applicable property on `c`; returns the violations, one line each.
std::vector<std::string> check_all(const Case& c);

/// The same on a subject whose case and build the caller holds.
std::vector<std::string> check_all(const Subject& subject, Sweeps sweeps = Sweeps::include);

}  // namespace seqpack::properties
