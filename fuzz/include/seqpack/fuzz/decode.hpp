// The fuzz targets' input format: bytes -> a property case (layout, options,
// graph marks, rows, row width), valid or invalid. See fuzz/README.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "seqpack/protocol/case.hpp"

namespace seqpack::fuzz {

/// Reads bytes front to back. Never throws and never reads past the end: an
/// exhausted reader yields zeros, so a short input decodes to defaults.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool flag() { return (byte() & 1) != 0; }
  /// An unsigned LEB128 number (at most 10 bytes; extra high bits are dropped).
  std::uint64_t varint();
  /// A zig-zag encoded signed LEB128 number.
  std::int64_t svarint();
  /// A value in [lo, hi] from one or two bytes (lo when exhausted).
  std::int64_t in_range(std::int64_t lo, std::int64_t hi);
  std::uint64_t u64();
  bool empty() const { return pos_ >= size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

/// What one input may cost: the packed rows, the padded streams (causal plus
/// full) and their bytes (input rows plus streams, times the row width).
/// The targets skip a case past it (small_enough), unless the reference
/// refuses it before allocating any row, so that the cost of an input is
/// bounded before anything is allocated. The budget also steers the structured form's long streams onto
/// the CUDA-graph bucket edges that fit in it (fuzz/README.md).
struct Budget {
  std::int64_t rows;   ///< packed rows, and padded causal + full rows, each at most this
  std::int64_t bytes;  ///< (packed rows + padded rows) x row width at most this
};

/// The fast targets' budget: the first bucket edge (2048 rows: 2049 pad to
/// 2304 under CUDA graphs) with room for the other stream. The later edges
/// (4096, 8192, 16384) are fuzz_large_pack's.
inline constexpr Budget kFastBudget{std::int64_t{1} << 12, std::int64_t{1} << 17};

/// fuzz_context_parallel's budget: its checks visit every rank of two world
/// sizes, each an O(rows) gather, so its cases are shorter; the 2048-row
/// bucket edge still fits (2049 rows pad to 2304 under CUDA graphs).
inline constexpr Budget kShardBudget{3072, std::int64_t{1} << 17};

/// fuzz_large_pack's budget: streams past 16384 rows (the 2048-row bucket
/// tier) and wide rows.
inline constexpr Budget kLargeBudget{std::int64_t{1} << 18, std::int64_t{1} << 24};

/// Decodes a case. The first byte picks the form:
///  - even: structured. A packer-like or unusual valid layout built from the
///    bytes, with at most one planted fault of PROTOCOL.md's classes, whose
///    class goes to `expect_error` (as the strict generator does);
///  - odd: raw. Every field read as it is (any lengths, modes, indexes,
///    options, marks; see encode_raw); `expect_error` stays empty and the
///    targets take the reference's answer as the class.
/// The budget picks the long streams' lengths: the bucket edges it holds.
protocol::Case decode_case(const std::uint8_t* data, std::size_t size, const Budget& budget = kFastBudget);

/// The raw form of a case: decode_case(encode_raw(c)) has c's layout,
/// options, marks, rows, row width and data seed. Used to seed the corpora
/// from the golden vectors and the generators.
std::vector<std::uint8_t> encode_raw(const protocol::Case& c);

/// Whether the target builds the case: its rows, its padded streams and their
/// bytes fit the budget, or the reference refuses it before allocating (any
/// error class). Decided from the layout (and, past the budget, the
/// reference's plan) before any row is allocated.
bool small_enough(const protocol::Case& c, const Budget& budget = kFastBudget);

/// Prints "seqpack-fuzz: <what>" and the case as JSON on stderr, then aborts
/// (libFuzzer records the input; the overnight job groups findings by <what>).
[[noreturn]] void report(const std::string& what, const protocol::Case& c);

}  // namespace seqpack::fuzz
