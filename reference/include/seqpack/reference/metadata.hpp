// Layout validation and reusable metadata (the original's
// prepare_sequence_pack_metadata and _build_sequence_pack_metadata).
#pragma once

#include "seqpack/reference/types.hpp"

namespace seqpack::reference {

/// Checks the options and the graph marks: cp size and alignments >= 1, marks
/// >= 0. Throws invalid_option naming the field.
void validate_options(const Options& options, const GraphMarks& marks = {});

/// Checks a layout, in protocol order: empty_batch, then invalid_layout
/// (split/mode count, negative lengths, unknown modes, splits that do not tile
/// the samples, und indexes out of range or repeated), then
/// und_token_in_full_split. Lengths past int32 are not checked here.
void validate_layout(const Layout& layout);

/// Validates `layout` (as validate_layout, then overflow: the token count must
/// fit int32) and builds its metadata in O(samples + splits + tokens + und).
Metadata prepare_metadata(const Layout& layout);

}  // namespace seqpack::reference
