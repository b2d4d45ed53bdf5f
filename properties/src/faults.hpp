// The planted faults of the property suite, one table that the strict
// generator (generators_strict.cpp) and the bounded-exhaustive enumerator
// (exhaustive.cpp) plant from: each fault's error class of PROTOCOL.md and
// its name in a case's category. Not installed.
#pragma once

namespace seqpack::properties::detail {

/// A fault a generator plants in a valid case.
enum class Fault {
  option,
  negative_mark,
  empty,
  mode_count,
  negative,
  negative_sample,
  unknown_mode,
  tiling_sum,
  tiling_boundary,
  und_range,
  und_repeat,
  und_in_full,
  length,
  overflow_alignment,
  overflow_lcm,
  overflow_mark,
  overflow_interleaved,
  pairing,
  pairing_layout,
};

/// The fault's name in the case, the second half of its category
/// ("<class>/<fault>"). Faults of one kind share a name (a negative sample
/// length is a negative length, as a negative mark is an option out of
/// range), so known-failure lists name the kind; classify() tells them apart.
const char* fault_name(Fault f);

/// The error class of PROTOCOL.md that the fault's case expects.
const char* class_of(Fault f);

}  // namespace seqpack::properties::detail
