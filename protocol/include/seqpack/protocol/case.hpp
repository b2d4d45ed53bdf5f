// A property case: one build's inputs (layout, options, marks, rows), as the
// generators, the fuzz targets and the case files of PROTOCOL.md describe it.
#pragma once

#include <cstdint>
#include <string>

#include "seqpack/reference/types.hpp"

namespace seqpack::protocol {

/// Which inputs a generator produces: the framework packer's layouts only, or
/// anything, including every invalid input class of PROTOCOL.md.
enum class Profile { packer, strict };

struct Case {
  reference::Layout layout;
  reference::Options options;
  reference::GraphMarks marks;  ///< before the call
  std::int64_t rows = 0;        ///< packed rows; differs from sum(sample_lens) only to test that error
  std::size_t row_bytes = 4;    ///< width of each row in bytes (the dtype and trailing shape)
  std::uint64_t data_seed = 0;  ///< seeds the row bytes
  std::string expect_error;     ///< the error class planted by the strict generator, empty if valid
  std::string fault;            ///< the planted fault ("option", "tiling_sum", ...), empty if valid
};

/// Sets the case's und_token_indexes to every causal position, in packed
/// order (a negative split length counts as 0), as the packer lists them.
void list_und_tokens(Case& c);

/// The case's category for known-failure lists: "valid", or "<class>/<fault>".
std::string category(const Case& c);

/// The packed rows of a case: bytes from `data_seed`, with NaN payloads and
/// -0.0 of the widths that hold them planted in every few rows.
reference::Rows case_rows(const Case& c);

/// Builds the case with the reference on a copy of its marks.
reference::Pack build_case(const Case& c, reference::GraphMarks* marks_after = nullptr);

/// The case as a PROTOCOL.md case object (plus "row_bytes", "data_seed" and
/// "expect_error"), one line of JSON.
std::string to_json(const Case& c, const std::string& id = "case");
/// Parses what to_json writes (and any PROTOCOL.md case line), strictly:
/// integers must be JSON integers that fit int64, booleans booleans, strings
/// strings. Throws std::runtime_error naming the field on malformed input.
/// A case file: the layout's lists may be runs (case_json.hpp, with_runs),
/// at most kMaxJsonValues values together.
Case case_from_json(const std::string& text);

}  // namespace seqpack::protocol
