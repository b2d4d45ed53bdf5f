// The runner's verdict: failures grouped by signature, the reference's
// derivation of a differing length, offset or mark, and reports for CI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "seqpack/protocol/case.hpp"

namespace seqpack::conformance {

/// A failure's signature, the key of its group: one root cause. For a
/// difference at a field, the field's path with its indexes dropped and an
/// entry of a list folded into the list, whatever the kind of the difference,
/// and a pack field's stream folded (`pack.full_only_rows[3]: expected 4,
/// port 5`, `pack.causal_rows: expected 4 entries, port 3` and a missing
/// `pack.full_only_rows` are all `pack.{causal,full_only}_rows`); a view by
/// the operation it calls; a session step's difference keys as the same
/// difference of a single case (`session step 2: graph_bounds.image[1]: ...`
/// is `graph_bounds.image`). `ok` and `error` by the class the port is wrong
/// about: the one it answered (`error class invalid_layout` for `overflow`
/// answered as `invalid_layout` and for a result refused with it), or the
/// one it did not raise, except that `pad_segment_pairing` is the pad
/// segment's rule, `pack.pad_segment`. A crash, a hang, an answer line or a
/// batch past its byte limit and `unclassified` answered are kPortFailure. Any other text (an unreadable answer) is its
/// own signature with its numbers folded to `#`, at most 100 characters,
/// cut at a word (cut_at_word). Failures of one signature are one group:
/// one fault, shrunk and printed once.
std::string failure_signature(const std::string& diff);

/// The signature of a case the port failed as a whole: it crashed, hung,
/// answered a line past 64 MiB (or a batch past 256 MiB), did not restart
/// or raised what it cannot classify
/// (difference_kind tells which).
inline constexpr const char* kPortFailure = "port failure (crash, hang, answer too long or unclassified error)";

/// The kind of a difference at a field: `value`, `length`, `missing`, or for
/// `ok` and `error` the two classes; for a port that failed to answer,
/// `hung`, `crashed`, `exited`, `line too long`, `batch too large`, `no
/// restart`, `not running`, or `unclassified` (for `ok` and `error`); "" for
/// any other text. A session step's
/// prefix is skipped.
std::string difference_kind(const std::string& diff);

/// `s` when it has at most `max` bytes; else cut at the last word boundary
/// that leaves room for "...", and "..." appended. Never inside a word (nor a
/// UTF-8 character): a text that is one word longer than `max` stays whole.
std::string cut_at_word(const std::string& s, std::size_t max);

/// The label of a case: its real category, "valid" or "<class>/<fault>"
/// (the fault left out where the case names none). A case that names no
/// class but whose expected result (a result line, may be empty) is an
/// error takes that class.
std::string case_label(const protocol::Case& c, const std::string& expect = "");

/// How the reference derived the value that `diff` names, from the case:
/// the real tokens, the pad segment's reserved row, the effective alignment
/// lcm(alignment, cp), the CUDA-graph bucket step and the high-water mark.
/// Empty when the difference is not a length, offset or mark. Lines start
/// with `indent`.
std::string explain_difference(const protocol::Case& c, const std::string& diff, const std::string& indent = "  ");

/// One failure group, for reports.
struct GroupReport {
  std::string signature;
  std::int64_t count = 0;
  std::vector<std::string> members;  ///< the first few ids
  std::string id, category, diff;    ///< the shrunk member
  std::string explanation;
  std::string minimal;  ///< the minimal case or session as JSON
};

/// One JUnit testcase: `failure` empty when it passed.
struct JUnitCase {
  std::string classname, name, failure, detail;
  double seconds = 0;
  std::string type = "conformance";  ///< the failure's type attribute (a group's severity)
};

/// A JUnit XML document (one testsuite) of the cases; escapes every string.
std::string junit_xml(const std::string& suite, const std::vector<JUnitCase>& cases, double seconds);

/// The family of a golden vector id: the id without its trailing number and
/// separators (`options-17` -> `options`, `edge-full-2047-graphs` -> `edge-full`).
std::string vector_family(const std::string& id);

}  // namespace seqpack::conformance
