// Every limit of the conformance protocol in one place (PROTOCOL.md,
// "Limits"), and the bounded reading that enforces them: JSON text from a
// port, a user or a file is checked against these before it is used, and a
// case's size is decided arithmetically before anything is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "seqpack/protocol/case.hpp"

namespace seqpack::protocol {

/// Bytes of one protocol line, request or answer (its newline excluded).
/// Enforced while reading: the bytes past it are never buffered.
inline constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;
/// A known-failures file (`conform --known-failures`): its bytes, checked
/// before it is read, and its entries (the original's list has 17).
inline constexpr std::uintmax_t kMaxKnownFailuresBytes = std::uintmax_t{1} << 20;
inline constexpr std::size_t kMaxKnownFailures = 10000;
/// Nesting of arrays and objects in any JSON text the harness reads.
inline constexpr int kMaxJsonDepth = 64;
/// JSON values (scalars, arrays, objects) in one text, and the values that
/// all runs triples of one answer may expand to, together.
inline constexpr std::size_t kMaxJsonValues = std::size_t{1} << 21;
/// Padded rows (causal + full) above which the oracle answers `too_large`.
inline constexpr std::int64_t kMaxOracleRows = std::int64_t{1} << 25;
/// Bytes of a case's data (its packed rows and its padded streams, at its
/// row width) above which `seqpack oracle --case` answers `too_large`.
inline constexpr std::int64_t kMaxCaseBytes = std::int64_t{1} << 28;
/// cp_world_size above which the oracle answers `too_large` for a valid case:
/// the cp views list one entry per rank, whatever the streams hold.
inline constexpr std::int64_t kMaxOracleWorldSize = std::int64_t{1} << 16;

/// Bytes of the answers the runner holds for one batch of pipelined requests
/// (up to 256): past it the rest of the batch fails, unread.
inline constexpr std::size_t kMaxBatchAnswerBytes = std::size_t{256} << 20;
/// Bytes of one answer of the oracle (a result, or a session's results
/// together), as its writer reserves them: past it the answer is
/// `too_large`. No runner reads more than kMaxBatchAnswerBytes of answers
/// to one batch, so a larger answer could never be compared.
inline constexpr std::size_t kMaxOracleAnswerBytes = kMaxBatchAnswerBytes;
/// Cases in one session request.
inline constexpr std::size_t kMaxSessionSteps = 256;

/// Malformed or oversized input: the message names the problem and where.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses one JSON text within the limits: valid UTF-8, at most kMaxJsonDepth
/// deep, at most `max_values` values (kMaxJsonValues by default), no repeated key in an object. Throws
/// InputError "<what>: <problem> at byte N" otherwise. Never recurses.
nlohmann::json parse_json(std::string_view text, const std::string& what, std::size_t max_values = kMaxJsonValues);

/// parse_json's fast path, for the common shape of a protocol line: objects,
/// arrays, integers that fit uint64 (negative ones int64), true/false/null,
/// and strings of printable ASCII without escapes, within the depth and
/// value limits, no key repeated. The document nlohmann's parser builds
/// (non-negative integers unsigned), or nullopt for anything else, every
/// error included: parse_json then reads the text with the general parser,
/// so errors and their messages are that parser's.
std::optional<nlohmann::json> parse_simple_json(std::string_view text, std::size_t max_values = kMaxJsonValues);

/// The values a port's answer may hold (parsed, and after its runs are
/// expanded): kMaxJsonValues, or twice what the reference's own answer to
/// the same request holds when that is more (a session of large packs), so
/// that the limit is at least what the case can produce.
std::size_t answer_value_limit(std::size_t expected_values);

/// `text` made safe to print (a terminal acts on none of it) and to put in a
/// JSON string: bytes that are not valid UTF-8 become \xNN, control
/// characters (C0, DEL and C1: an escape sequence or a CSI starts with one)
/// \u00NN; cut to `max` bytes.
std::string printable(std::string_view text, std::size_t max = 200);

/// `text` as XML 1.0 character data (JUnit reports): markup escaped, and
/// every character XML forbids replaced: bytes that are not valid UTF-8 and
/// U+FFFE, U+FFFF by U+FFFD, control characters but tab, newline and
/// return by '?'.
std::string xml_text(std::string_view text);

/// The padded stream lengths of a case, decided from its layout and options
/// alone in O(samples + splits + und indexes): throws the reference's Error
/// in protocol order (overflow before any size is used), exactly as
/// build_pack would, without allocating per token.
struct CaseShape {
  std::int64_t causal_len = 0;
  std::int64_t full_len = 0;
};
CaseShape plan_case(const Case& c);

/// Why the oracle refuses a case that plan_case accepts (`too_large`, with a
/// message naming the field), or nothing: padded rows past `row_limit`,
/// data bytes past kMaxCaseBytes at `row_bytes` per row, cp_world_size past
/// kMaxOracleWorldSize.
std::optional<std::string> too_large(const Case& c, const CaseShape& shape, std::int64_t row_limit,
                                     std::size_t row_bytes);

/// Reads one line of at most `max` bytes (newline excluded; a trailing CR is
/// kept) into `line`. Returns false at the end of input with nothing read.
/// A longer line is consumed to its end but not stored: `*too_long` is set
/// to its length in bytes and `line` is left empty. Throws InputError when
/// the stream cannot be read (an I/O error; a directory opened as a file).
bool read_line_bounded(std::istream& in, std::string& line, std::size_t max, std::size_t* too_long);

}  // namespace seqpack::protocol
