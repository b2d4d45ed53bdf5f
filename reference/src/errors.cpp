// Error class names and the Error exception.
#include "seqpack/reference/errors.hpp"

namespace seqpack::reference {

const char* to_string(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_option:
      return "invalid_option";
    case Errc::empty_batch:
      return "empty_batch";
    case Errc::invalid_layout:
      return "invalid_layout";
    case Errc::und_token_in_full_split:
      return "und_token_in_full_split";
    case Errc::length_mismatch:
      return "length_mismatch";
    case Errc::overflow:
      return "overflow";
    case Errc::pad_segment_pairing:
      return "pad_segment_pairing";
    case Errc::not_divisible:
      return "not_divisible";
    case Errc::sharded_pack:
      return "sharded_pack";
    case Errc::metadata_mismatch:
      return "metadata_mismatch";
    case Errc::invalid_argument:
      return "invalid_argument";
  }
  return "unknown";
}

Error::Error(Errc code, std::string field, const std::string& detail)
    : std::runtime_error(std::string(to_string(code)) + ": " + field + ": " + detail),
      code_(code),
      field_(std::move(field)) {}

}  // namespace seqpack::reference
