// Bounded-exhaustive cases: every case of a named scope, in order of size,
// so that the first failure a run meets is a smallest one without shrinking
// (the small-scope hypothesis; SmallCheck and Korat enumerate the same way).
// `seqpack exhaustive` runs a scope in process through the catalogue and the
// engines, `seqpack conform --exhaustive` over the protocol; the scopes, their
// sizes and what a run proves are in docs/exhaustive.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "seqpack/properties/case.hpp"

namespace seqpack::properties {

/// A scope: what the enumeration bounds. Every value of each list is crossed
/// with every value of the others; nothing is reduced by symmetry (the row
/// contents are the one value fixed per case: docs/exhaustive.md says why).
struct Scope {
  std::string name;
  std::int64_t max_samples = 2;  ///< batches of 1 to max_samples samples
  /// The packer's layouts (every sample [causal, full], or every sample
  /// [full], NOTES.md section 2): split lengths 0 to max_len.
  std::int64_t max_len = 2;
  /// Layouts beyond the packer's: samples of 1 to beyond_splits splits of
  /// either mode in any order, lengths 0 to beyond_len (0 splits: none).
  std::int64_t beyond_splits = 2;
  std::int64_t beyond_len = 1;
  std::int64_t beyond_samples = 2;                ///< batches of 1 to beyond_samples such samples
  std::vector<std::int64_t> alignments = {1, 2};  ///< each of causal and full
  std::vector<std::int64_t> cp_sizes = {1, 2};
  /// The CUDA-graph marks an earlier, larger batch leaves (graph states).
  std::int64_t large_mark = 16;
  std::vector<std::size_t> row_bytes = {4};
  /// The und indexes listed ascending, and also reversed (the spec takes a set).
  bool und_reversed = true;
  /// Every single planted fault of each error class on every layout.
  bool invalid = true;
};

/// The named scopes, smallest first: tiny (CI), small, medium (overnight).
const std::vector<Scope>& scopes();

/// The scope called `name`; throws std::invalid_argument naming it and the
/// scopes there are.
const Scope& scope_named(const std::string& name);

/// The CUDA-graph states each layout is crossed with: graphs off with no
/// marks and after a large batch (the marks must stay as they are), on with
/// no marks (image, video), after a large batch of the same kind (image,
/// video) and after a large video batch on an image batch (the kinds'
/// marks are apart).
inline constexpr int kGraphStates = 7;

/// Every case of a scope, indexed in order of size: layouts by their rows,
/// then splits, then samples; each layout's valid crossings of the options
/// first, then its planted faults. A case's `expect_error` and `fault` are
/// the enumerator's own (its planted fault, or the pad segment's pairing
/// that NOTES.md 4.4-4.9 makes due), never a build's.
class Enumeration {
 public:
  explicit Enumeration(Scope scope);
  const Scope& scope() const { return scope_; }
  std::int64_t size() const { return total_; }
  /// Case `i` (0 <= i < size()); its data_seed is i.
  Case at(std::int64_t i) const;
  /// The number of layouts (of the packer's, and beyond).
  std::int64_t layouts() const { return static_cast<std::int64_t>(layouts_.size()); }
  std::int64_t packer_layouts() const { return packer_layouts_; }
  /// Whether case `i`'s layout is one of the framework packer's (NOTES.md section 2).
  bool packer_layout(std::int64_t i) const;
  /// The number of valid crossings of options per layout and und listing.
  std::int64_t option_crossings() const { return crossings_; }

 private:
  /// A planted fault: its kind (a detail::Fault of properties/src/faults.hpp,
  /// the strict generator's table), where, and the value planted.
  struct Fault {
    std::uint8_t kind;
    std::int64_t at = 0;
    std::int64_t value = 0;
  };
  struct Layout {
    reference::Layout layout;
    std::int64_t rows = 0;
    bool packer = false;
    std::int64_t und_listings = 1;
    std::vector<Fault> faults;
  };
  Case valid_case(const Layout& l, std::int64_t k) const;
  Case planted_case(const Layout& l, const Fault& f) const;

  Scope scope_;
  std::vector<Layout> layouts_;
  std::vector<std::int64_t> first_;  ///< first case index of each layout
  std::int64_t packer_layouts_ = 0;
  std::int64_t crossings_ = 0;
  std::int64_t total_ = 0;
};

/// The class of a case for the counts: "valid" or its expected error class.
std::string case_class(const Case& c);

}  // namespace seqpack::properties
