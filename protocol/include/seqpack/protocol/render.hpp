// Readable text for cases and packs, for people reading a verdict: the
// command line's `oracle --case`, `replay` and `check --examples`, and the
// in-process property failures (seqpack/properties/verdict.hpp).
#pragma once

#include <ostream>

#include "seqpack/protocol/case.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::protocol {

/// Prints the layout and options of a build on one or two lines.
void print_case(std::ostream& out, const reference::Layout& layout, const reference::Options& options);

/// Prints a pack whose rows were numbered (row r holds r + 1 in its first four
/// bytes): each stream as the packed rows it holds, '.' for padding.
void print_pack(std::ostream& out, const reference::Pack& pack);

/// Rows 0..n-1 of 4 bytes, row r holding r + 1 (0 is left for padding).
reference::Rows numbered_rows(std::int64_t n);

/// Rows a rendering builds at most (both streams together).
inline constexpr std::int64_t kRenderRows = std::int64_t{1} << 20;

/// The case's layout, options and marks, then the reference's pack built
/// from numbered rows, or its error class. The size is decided from the
/// layout before anything per token is built: a case whose padded streams
/// pass kRenderRows is described, not built.
void render_case_body(std::ostream& out, const Case& c);

}  // namespace seqpack::protocol
