// In-process property failures that read like the conformance runner's
// (issue 14): a differential property written with SEQPACK_PROPERTY and
// same() prints, when it fails,
//   - the first differing field with both values (same()'s message),
//   - the shrunk case as JSON (the protocol's case line),
//   - the reference's readable rendering of that case (rows as row ids),
//   - the path of a case file that `seqpack replay FILE --port CMD` and
//     `property_replay FILE` run,
//   - a short reproduce line (RapidCheck's seed) instead of RapidCheck's
//     reproduce string,
// and stops shrinking after a time budget.
//
// Environment: SEQPACK_SHRINK_SECONDS (default 20: the time shrinking may
// take after the first failure; the smallest failing case found by then is
// reported), SEQPACK_FAILURE_DIR (where case files go; default
// ./seqpack-failures). RapidCheck's own RC_PARAMS (seed, max_success,
// max_size, noshrink) apply as usual.
#pragma once

#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <rapidcheck.h>

#include "seqpack/properties/case.hpp"
#include "seqpack/properties/show.hpp"
#include "seqpack/reference/types.hpp"

namespace seqpack::properties {

/// Records `c` as the case the running property checks: a failure prints
/// and saves the last case recorded. Returns `c`.
const Case& track(const Case& c);

/// How `got` differs from `expected`, naming `field` and the first differing
/// index with both values (the row's bytes for rows); "" when they are equal.
std::string difference(const std::string& field, const reference::Rows& got, const reference::Rows& expected);
std::string difference(const std::string& field, const reference::PositionIds& got,
                       const reference::PositionIds& expected);

template <typename T>
std::string difference(const std::string& field, const std::vector<T>& got, const std::vector<T>& expected) {
  if (got == expected) return {};
  std::size_t i = 0;
  while (i < got.size() && i < expected.size() && got[i] == expected[i]) ++i;
  std::ostringstream os;
  os << field;
  if (i < got.size() && i < expected.size()) {
    os << "[" << i << "]: expected " << rc::toString(expected[i]) << ", got " << rc::toString(got[i]);
    if (got.size() != expected.size())
      os << " (and " << expected.size() << " entries expected, " << got.size() << " got)";
  } else {
    os << ": expected " << expected.size() << " entries, got " << got.size() << " (the first " << i << " agree)";
  }
  return os.str();
}

template <typename T, typename = std::enable_if_t<!std::is_same_v<T, reference::Rows>>>
std::string difference(const std::string& field, const T& got, const T& expected) {
  if (got == expected) return {};
  return field + ": expected " + rc::toString(expected) + ", got " + rc::toString(got);
}

/// Fails the running property with `message` (recorded for the report).
[[noreturn]] void fail(const std::string& message);

/// Fails the running property when `got` differs from `expected`, with
/// difference()'s message.
template <typename T>
void same(const std::string& field, const T& got, const T& expected) {
  std::string d = difference(field, got, expected);
  if (!d.empty()) fail(d);
}

/// `n` values from one 64-bit seed (a single RapidCheck pick): shrinking
/// spends its time on the case, not on thousands of values. Value i is
/// splitmix64 of the seed and i, so values are distinct in practice (a
/// gather from the wrong index shows).
std::vector<std::int64_t> seeded_values(std::size_t n);
/// `n` bytes from one seed, as seeded_values, with about one 16-bit lane in
/// eight set to a special pattern (half and bfloat16 NaNs, -0.0, denormals,
/// 0xffff), which adjacent lanes extend to float32 and float64 ones.
std::vector<std::uint8_t> seeded_bytes(std::size_t n);

/// Runs `body` as a RapidCheck property under RapidCheck's configuration
/// (RC_PARAMS). On failure prints the report above to `out` and writes the
/// case file. Returns whether the property held.
bool check_property(const std::string& name, const std::function<void()>& body, std::ostream& out);

/// Two signed integers of different widths (an int64 binding against the
/// reference's int32), compared by value.
template <typename T, typename U,
          typename = std::enable_if_t<std::is_integral_v<T> && std::is_integral_v<U> && std::is_signed_v<T> &&
                                      std::is_signed_v<U> && !std::is_same_v<T, U>>>
void same(const std::string& field, T got, U expected) {
  same(field, static_cast<std::int64_t>(got), static_cast<std::int64_t>(expected));
}

/// The report's parts, for tests of the harness itself.
struct PropertyFailure {
  std::string name, difference, case_json, rendering, case_file;
  int cases_passed = 0;
  std::size_t shrinks = 0;
  bool shrinking_stopped = false;  ///< the shrink budget ran out
  double shrink_seconds = 0;
};
/// As check_property; `failure` is set when the property fails.
bool check_property(const std::string& name, const std::function<void()>& body, std::ostream& out,
                    std::optional<PropertyFailure>* failure);

}  // namespace seqpack::properties

/// A GoogleTest test that runs the function body following the macro with
/// check_property (include gtest/gtest.h first):
///   SEQPACK_PROPERTY(GpuDifferential, PositionIdsMatchTheReference) { ... }
#define SEQPACK_PROPERTY(Suite, Name)                                                                           \
  static void seqpack_property_##Suite##_##Name();                                                              \
  TEST(Suite, Name) {                                                                                           \
    EXPECT_TRUE(                                                                                                \
        ::seqpack::properties::check_property(#Suite "." #Name, &seqpack_property_##Suite##_##Name, std::cout)) \
        << #Suite "." #Name " failed: its report is above";                                                     \
  }                                                                                                             \
  static void seqpack_property_##Suite##_##Name()
