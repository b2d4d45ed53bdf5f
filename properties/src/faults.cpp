// The fault table (faults.hpp).
#include "faults.hpp"

namespace seqpack::properties::detail {

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::option:
    case Fault::negative_mark:
      return "option";
    case Fault::empty:
      return "empty";
    case Fault::mode_count:
      return "mode_count";
    case Fault::negative:
    case Fault::negative_sample:
      return "negative_length";
    case Fault::unknown_mode:
      return "unknown_mode";
    case Fault::tiling_sum:
      return "tiling_sum";
    case Fault::tiling_boundary:
      return "tiling_boundary";
    case Fault::und_range:
      return "und_out_of_range";
    case Fault::und_repeat:
      return "und_repeated";
    case Fault::und_in_full:
      return "und_in_full";
    case Fault::length:
      return "length";
    case Fault::overflow_alignment:
    case Fault::overflow_lcm:
      return "overflow_alignment";
    case Fault::overflow_mark:
    case Fault::overflow_interleaved:
      return "overflow_mark";
    case Fault::pairing:
    case Fault::pairing_layout:
      return "pairing";
  }
  return "unknown";
}

const char* class_of(Fault f) {
  switch (f) {
    case Fault::option:
    case Fault::negative_mark:
      return "invalid_option";
    case Fault::empty:
      return "empty_batch";
    case Fault::und_in_full:
      return "und_token_in_full_split";
    case Fault::length:
      return "length_mismatch";
    case Fault::overflow_alignment:
    case Fault::overflow_lcm:
    case Fault::overflow_mark:
    case Fault::overflow_interleaved:
      return "overflow";
    case Fault::pairing:
    case Fault::pairing_layout:
      return "pad_segment_pairing";
    default:
      return "invalid_layout";
  }
}

}  // namespace seqpack::properties::detail
