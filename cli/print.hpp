// Readable text for packs, for people reading the command line's output.
#pragma once

#include <ostream>

#include "seqpack/reference/reference.hpp"

namespace seqpack::cli {

/// Prints the layout and options of a build on one or two lines.
void print_case(std::ostream& out, const reference::Layout& layout, const reference::Options& options);

/// Prints a pack whose rows were numbered (row r holds r + 1 in its first four
/// bytes): each stream as the packed rows it holds, '.' for padding.
void print_pack(std::ostream& out, const reference::Pack& pack);

}  // namespace seqpack::cli
