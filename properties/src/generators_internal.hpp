// The generators' private parts (not installed): the draws and layouts that
// the generator files share. generators.cpp holds the public entry points
// and the common draws (options, marks, lengths); generators_edges.cpp the
// boundary-directed draws; generators_packer.cpp the packer profile's
// layouts; generators_strict.cpp the layouts beyond the packer's and the
// planted faults (strict profile); generators_classes.cpp the classes of a
// case (classify, required_classes).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "seqpack/properties/case.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::properties::detail {

namespace gen = rc::gen;
using I64 = std::vector<std::int64_t>;
__extension__ typedef __int128 Wide;  // sums of int64 lengths, exact

// Common draws (generators.cpp), each inside a RapidCheck generator.

/// The sum of `v`.
std::int64_t sum(const I64& v);
/// The sum of `v`, exact.
Wide wide_sum(const I64& v);
/// True `yes` times in `yes + no`.
bool coin(int yes, int no);
/// Lists the und indexes out of order in one case in four (a hash of the layout).
void maybe_unorder_und(Case& c);
/// `total` rows spread over `parts` lengths (some may be 0).
I64 spread(std::int64_t total, std::size_t parts);
/// Short split lengths with a fair share of zeros.
std::int64_t short_len(std::int64_t max);
/// Options for a layout (`pairs`: one whose splits pair up for a pad segment).
reference::Options gen_options(bool pairs);
/// Marks as earlier calls leave them, or none.
reference::GraphMarks gen_marks();

// Boundary-directed draws (generators_edges.cpp).

/// An alignment for an edge case, mostly not a power of two.
std::int64_t edge_alignment(std::int64_t cp);
/// A stream's alignment and rows whose need (rows plus `reserve`) sits on,
/// one below or one above an edge of the padding arithmetic.
std::pair<std::int64_t, std::int64_t> edge_stream(std::int64_t a, std::int64_t cp, bool graphs, std::int64_t reserve);
/// A stream length on a multiple of everything that pads it.
std::int64_t aligned_total(std::int64_t a, std::int64_t cp, bool graphs, bool may_be_empty);

// Layouts (generators_packer.cpp, generators_strict.cpp).

/// A case of the packer's layouts (the packer profile's mainstay).
Case packer_case();
/// A valid case beyond the packer's layouts.
Case unusual_case();
/// A case with one planted fault of a PROTOCOL.md error class.
Case planted_case();
/// A case with several planted faults (the first class in PROTOCOL.md's order wins).
Case precedence_case();

struct SplitCounts {
  std::int64_t causal = 0, full = 0, samples = 0;
};

/// How many causal and full splits, and samples, a layout has.
SplitCounts split_counts(const reference::Layout& L);
/// The rows of the non-empty full splits.
std::int64_t full_rows(const reference::Layout& L);

// Classes (generators_classes.cpp).

/// The tags of a case with a planted fault (its classes and edges).
void error_tags(const Case& c, std::vector<std::string>& tags);

}  // namespace seqpack::properties::detail
