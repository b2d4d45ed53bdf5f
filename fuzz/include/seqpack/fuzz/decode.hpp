// The fuzz targets' input format: bytes -> a property case (layout, options,
// graph marks, rows, row width), valid or invalid. See fuzz/README.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "seqpack/properties/case.hpp"

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

/// The largest case the targets build: decoded cases whose packed rows or
/// padded streams exceed this are answered by the checks alone (the
/// reference's validation still runs), so one input stays within milliseconds.
inline constexpr std::int64_t kMaxFuzzRows = std::int64_t{1} << 18;

/// Decodes a case. The first byte picks the form:
///  - even: structured. A packer-like or unusual valid layout built from the
///    bytes, with at most one planted fault of PROTOCOL.md's classes, whose
///    class goes to `expect_error` (as the strict generator does);
///  - odd: raw. Every field read as it is (any lengths, modes, indexes,
///    options, marks; see encode_raw); `expect_error` stays empty and the
///    targets take the reference's answer as the class.
properties::Case decode_case(const std::uint8_t* data, std::size_t size);

/// The raw form of a case: decode_case(encode_raw(c)) has c's layout,
/// options, marks, rows, row width and data seed. Used to seed the corpora
/// from the golden vectors and the generators.
std::vector<std::uint8_t> encode_raw(const properties::Case& c);

/// Whether the case is small enough to build (see kMaxFuzzRows): its rows and
/// its padded streams, when the reference's planning accepts it.
bool small_enough(const properties::Case& c);

/// Prints "seqpack-fuzz: <what>" and the case as JSON on stderr, then aborts
/// (libFuzzer records the input; the overnight job groups findings by <what>).
[[noreturn]] void report(const std::string& what, const properties::Case& c);

}  // namespace seqpack::fuzz
