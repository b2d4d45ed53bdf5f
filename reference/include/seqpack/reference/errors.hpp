// Named error classes of the conformance protocol, and the exception that
// carries one. Every input the reference rejects maps to exactly one class.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace seqpack::reference {

/// Error classes. The first seven are PROTOCOL.md's, in the order they are
/// checked when several apply; the rest are the reference's own, for misuse of
/// the operations that follow a build.
enum class Errc {
  invalid_option,           ///< an alignment, cp size or graph mark out of range
  empty_batch,              ///< no samples
  invalid_layout,           ///< split/mode mismatch, negative length, unknown mode, bad tiling, bad und index
  und_token_in_full_split,  ///< an understanding token inside a full split
  length_mismatch,          ///< packed rows differ from sum(sample_lens)
  overflow,                 ///< a length, offset or padded size past int32
  pad_segment_pairing,      ///< a pad segment is due but samples and full splits differ in number
  not_divisible,            ///< a padded stream is not divisible by the context-parallel world size
  sharded_pack,             ///< the operation needs an unsharded pack (or a sharded one)
  metadata_mismatch,        ///< prepared metadata does not describe the layout it is used with
  invalid_argument,         ///< a buffer, rank or shape that does not fit the pack
};

/// The protocol's name of an error class, e.g. "invalid_layout".
const char* to_string(Errc code) noexcept;

/// The exception every reference operation throws for rejected input. `what()`
/// reads "<class>: <field>: <detail>", naming the offending field and value.
class Error : public std::runtime_error {
 public:
  Error(Errc code, std::string field, const std::string& detail);

  Errc code() const noexcept { return code_; }
  /// The input field at fault, e.g. "split_lens[3]" or "options.cp_world_size".
  const std::string& field() const noexcept { return field_; }

 private:
  Errc code_;
  std::string field_;
};

/// The error an operation would throw, found by the checks it runs before it
/// builds anything; empty when the checks pass. An operation that has a
/// `*_refusal` function throws exactly that function's answer.
using Refusal = std::optional<Error>;

}  // namespace seqpack::reference
