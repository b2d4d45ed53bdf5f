// Helpers shared by the unit tests: self-describing row buffers, layouts, and
// an expectation on the error class and message of a call.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "seqpack/reference/reference.hpp"

namespace seqpack::testing {

namespace ref = seqpack::reference;

/// `n` rows of `width` (>= 4) bytes; row r starts with the uint32 r + 1 and
/// continues with bytes derived from r, so 0 marks a padding row.
inline ref::Rows numbered_rows(std::size_t n, std::size_t width = 4) {
  if (width < 4) throw std::invalid_argument("numbered_rows needs rows of at least 4 bytes");
  ref::Rows rows(n, width);
  for (std::size_t r = 0; r < n; ++r) {
    const auto tag = static_cast<std::uint32_t>(r + 1);
    std::memcpy(rows.row(r), &tag, sizeof tag);
    for (std::size_t b = sizeof tag; b < width; ++b) rows.row(r)[b] = static_cast<std::byte>((r * 31 + b * 7) | 1);
  }
  return rows;
}

/// The packed row each row of a numbered buffer holds, -1 for an all-zero row.
inline std::vector<std::int64_t> row_ids(const ref::Rows& rows) {
  std::vector<std::int64_t> out;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    std::uint32_t tag = 0;
    std::memcpy(&tag, rows.row(r), sizeof tag);
    bool zero = tag == 0;
    for (std::size_t b = sizeof tag; b < rows.row_bytes(); ++b) zero = zero && rows.row(r)[b] == std::byte{0};
    out.push_back(zero ? -1 : static_cast<std::int64_t>(tag) - 1);
  }
  return out;
}

/// `n` rows of `width` bytes from a fixed pseudo-random stream (any width).
inline ref::Rows random_rows(std::size_t n, std::size_t width, std::uint64_t seed) {
  ref::Rows rows(n, width);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < rows.size_bytes(); ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    rows.data()[i] = static_cast<std::byte>(s);
  }
  return rows;
}

/// A layout from sample lengths and (mode, length) splits; und defaults to
/// every causal token.
inline ref::Layout make_layout(std::vector<std::int64_t> samples, std::vector<std::string> modes,
                               std::vector<std::int64_t> splits) {
  ref::Layout layout{std::move(samples), std::move(splits), std::move(modes), {}};
  layout.und_token_indexes = ref::packer_und_tokens(layout);
  return layout;
}

inline std::int64_t total_rows(const ref::Layout& layout) {
  std::int64_t n = 0;
  for (const std::int64_t s : layout.sample_lens) n += s;
  return n;
}

/// Builds `layout` over numbered rows with fresh (or given) marks.
inline ref::Pack build(const ref::Layout& layout, const ref::Options& options = {}, std::size_t width = 4) {
  ref::GraphMarks marks;
  return ref::build_pack(numbered_rows(static_cast<std::size_t>(total_rows(layout)), width), layout, options, marks);
}

/// Runs `call`, expecting an Error of class `code` whose message names `field`
/// and contains `text`.
template <typename F>
void expect_error(F&& call, ref::Errc code, const std::string& field, const std::string& text) {
  try {
    call();
    ADD_FAILURE() << "expected " << ref::to_string(code) << ", but the call succeeded";
  } catch (const ref::Error& e) {
    EXPECT_EQ(ref::to_string(e.code()), std::string(ref::to_string(code))) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << "message: " << e.what() << "\nwanted: " << text;
    EXPECT_EQ(std::string(e.what()).rfind(std::string(ref::to_string(code)) + ": " + field + ": ", 0), 0u) << e.what();
  }
}

using I32 = std::vector<std::int32_t>;
using I64 = std::vector<std::int64_t>;

}  // namespace seqpack::testing
