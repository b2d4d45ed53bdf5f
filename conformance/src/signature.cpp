// Failure signatures: the root cause a difference is grouped by, the kind of
// the difference, and texts cut at a word (verdict.hpp). Apart from the
// runner so that the Python package's in-process failures word a failure as
// the runner does (python/CMakeLists.txt).
#include <algorithm>
#include <cctype>
#include <iterator>

#include "seqpack/conformance/verdict.hpp"

namespace seqpack::conformance {

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// Digits become '#', so that counts, sizes and seconds do not split a group.
std::string without_numbers(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
      out += '#';
      while (i + 1 < s.size() && (std::isdigit(static_cast<unsigned char>(s[i + 1])) != 0 || s[i + 1] == '.')) ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool word_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '#'; }

// `a.b[3].c[0]` -> `a.b[].c[]`; empty when `s` is not a field path.
std::string field_path(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '[') {
      std::size_t j = i + 1;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) != 0) ++j;
      if (j == i + 1 || j >= s.size() || s[j] != ']') return "";
      out += "[]";
      i = j;
    } else if (std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '.') {
      out += ch;
    } else {
      return "";
    }
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// How a port failed to answer a case at all (port.cpp's texts): `hung`
// (no line, or no whole line, in time), `crashed`, `exited`, `line too long`
// or `batch too large` (answers past the byte limits of "Limits"), `no
// restart`, `not running`; empty for any other text (an answer past the
// value limit keeps its own group).
std::string failure_mode(const std::string& text) {
  if (starts_with(text, "no answer within ") && ends_with(text, " s (hung)")) return "hung";
  if (starts_with(text, "no complete answer line within ") && ends_with(text, " bytes without a newline"))
    return "hung";
  if (text == "the port exited (crashed) before answering") return "crashed";
  if (text == "the port closed its input (exited)") return "exited";
  if (starts_with(text, "the port's answer line exceeds the limit of ")) return "line too long";
  if (starts_with(text, "the port's answers to this batch pass ")) return "batch too large";
  if (starts_with(text, "the port does not restart")) return "no restart";
  if (text == "the port is not running") return "not running";
  return "";
}

}  // namespace

std::string cut_at_word(const std::string& s, std::size_t max) {
  if (s.size() <= max) return s;
  const std::string ellipsis = "...";
  // The last word boundary that leaves room for the ellipsis: the text is
  // cut between a word and what follows it, never inside a word. UTF-8
  // continuation bytes are not word characters, but a cut there would split
  // a character: they are skipped like letters.
  std::size_t cut = max > ellipsis.size() ? max - ellipsis.size() : 0;
  while (cut > 0 && (word_char(s[cut]) || (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)) --cut;
  while (cut > 0 && !word_char(s[cut - 1]) && (static_cast<unsigned char>(s[cut - 1]) & 0x80) == 0) --cut;
  if (cut == 0) return s;  // one word longer than `max`: whole, not cut
  return s.substr(0, cut) + ellipsis;
}

namespace {

struct Parsed {
  std::string path;  // the field path, indexes dropped; "" when the difference names no field
  std::string rest;  // what follows "path: "
  std::string text;  // the difference without a session step's prefix
};

Parsed parse_difference(const std::string& diff) {
  Parsed p;
  p.text = diff;
  if (starts_with(p.text, "session step ") && p.text.find(": ") != std::string::npos) {
    p.text = p.text.substr(p.text.find(": ") + 2);
  }
  const auto colon = p.text.find(": ");
  if (colon == std::string::npos) return p;
  p.path = field_path(p.text.substr(0, colon));
  p.rest = p.text.substr(colon + 2);
  return p;
}

}  // namespace

std::string difference_kind(const std::string& diff) {
  const Parsed p = parse_difference(diff);
  if (p.path.empty()) return failure_mode(p.text);
  const std::string& rest = p.rest;
  if (starts_with(rest, "expected ") && ends_with(rest.substr(0, rest.find(", port ")), " entries") &&
      rest.find(" entries, port ") != std::string::npos) {
    return "length";
  }
  if (rest.find("missing") != std::string::npos) return "missing";
  if (p.path == "ok" || p.path == "error") {
    // The classes (a bounded set) are the kind; the port's message is not.
    std::string kind = rest.substr(0, rest.find(" ("));
    kind.erase(std::remove(kind.begin(), kind.end(), '"'), kind.end());
    // Whatever was expected, an exception the port cannot classify is the
    // kind `unclassified` (a kind of the port's failure, kPortFailure).
    if (ends_with(kind, "port error unclassified") || ends_with(kind, "port unclassified")) return "unclassified";
    return cut_at_word(without_numbers(kind), 100);
  }
  return "value";
}

namespace {

// PROTOCOL.md's error classes, in the order they are checked when several
// apply (its table of classes); -1 for a class outside it (the extensions).
int check_rank(const std::string& error_class) {
  static const char* const kOrder[] = {"invalid_option",          "empty_batch",     "invalid_layout",
                                       "und_token_in_full_split", "length_mismatch", "overflow",
                                       "pad_segment_pairing"};
  for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i) {
    if (error_class == kOrder[i]) return i;
  }
  return -1;
}

// The error class a difference of `ok` or `error` is about: the class the
// port did not raise where it answered a result, the one it raised where a
// result was expected. For one class answered for another (expected A, the
// port B), the checking order decides: with B checked after A, the case
// breaks A's rule (the reference says so) and the port passed A's check, so
// A is at fault (B's rule may apply as well: a missing A check shows as a
// result on the cases that break A alone and as whatever class comes next on
// the others, one group); with B checked before A, B's rule does not apply
// (the reference checked it first), so the port raised B where it does not
// apply, and B is at fault (a check that fires too often is one group
// whatever the reference expected). Classes outside the order: B. Empty
// where the kind names neither.
std::string class_at_fault(const std::string& path, const std::string& kind) {
  const auto after = [&](const std::string& marker) {
    const auto at = kind.find(marker);
    if (at == std::string::npos) return std::string();
    const std::string rest = kind.substr(at + marker.size());
    return rest.substr(0, rest.find_first_of(", "));
  };
  if (path == "error") {  // one class for another
    const std::string expected = after("expected "), port = after(", port ");
    const int a = check_rank(expected), b = check_rank(port);
    return a >= 0 && b > a ? expected : port;
  }
  if (!ends_with(kind, ", port a result")) return after(", port error ");  // a result expected, an error answered
  return after("expected error ");                                         // an error expected, a result answered
}

// The stream a pack field belongs to is not part of its root cause: both
// streams are built by one rule, so that `pack.causal_rows` and
// `pack.full_only_rows` are one group, `pack.{causal,full_only}_rows` (and
// so within the pad segment).
std::string without_stream(const std::string& path) {
  static const char* const kPairs[][3] = {
      {"causal_indices", "full_indices", "{causal,full}_indices"},
      {"causal_rows", "full_only_rows", "{causal,full_only}_rows"},
      {"causal_sample_ids", "full_only_sample_ids", "{causal,full_only}_sample_ids"},
      {"causal_seq_offsets", "full_only_seq_offsets", "{causal,full_only}_seq_offsets"},
      {"max_causal_len", "max_full_len", "max_{causal,full}_len"},
      {"num_causal_tokens", "num_full_tokens", "num_{causal,full}_tokens"},
  };
  // So the views that read one stream or the other by one rule, and the
  // interleaved stream: get_all_seq_padded is get_all_seq's rows (NOTES.md
  // section 7: real rows at their packed positions), with a zero tail where
  // the pack has a pad segment, so a fault in that rule shows in either
  // view, by whether the case has a pad segment.
  static const char* const kViewPairs[][3] = {
      {"views.getters.all_seq_rows", "views.all_seq_padded", "views.{getters.all_seq_rows,all_seq_padded}"},
      {"views.getters.causal_padded", "views.getters.full_only_padded", "views.getters.{causal,full_only}_padded"},
      {"views.getters.und_rows", "views.getters.gen_rows", "views.getters.{und,gen}_rows"},
      {"views.position_ids.und", "views.position_ids.gen", "views.position_ids.{und,gen}"},
      {"views.position_ids.und_3d", "views.position_ids.gen_3d", "views.position_ids.{und,gen}_3d"},
      {"views.payload.causal", "views.payload.full_only", "views.payload.{causal,full_only}"},
  };
  for (const auto& pair : kViewPairs) {
    if (path == pair[0] || path == pair[1]) return pair[2];
  }
  if (!starts_with(path, "pack.")) return path;
  const auto dot = path.rfind('.');
  const std::string field = path.substr(dot + 1);
  for (const auto& pair : kPairs) {
    if (field == pair[0] || field == pair[1]) return path.substr(0, dot + 1) + pair[2];
  }
  return path;
}

}  // namespace

std::string failure_signature(const std::string& diff) {
  const Parsed p = parse_difference(diff);
  // A crash, a hang, an answer past the byte limits and an exception the port
  // cannot classify name no field to group by: the case failed as a whole.
  // They are one group, the port's failure, told apart by their kinds
  // (`differences: hung 3, line too long 1`); the circuit breaker counts
  // crashes and hangs as one too. A fault that makes the module allocate too
  // much shows as several of them, by the case's size.
  if (p.path.empty()) {
    return failure_mode(p.text).empty() ? cut_at_word(without_numbers(p.text), 100) : kPortFailure;
  }
  // `ok` and `error` by the error class the port is wrong about: the class
  // it answered where a result was expected, the class it did not raise where
  // it answered a result, and for one class answered for another the one the
  // checking order puts at fault (class_at_fault). A class raised where it
  // does not apply and one not raised where it does are one rule's fault
  // (`error class overflow`); a port whose calls raise what it
  // cannot classify (`unclassified`: an exception of the module itself) is
  // the port's failure, as a crash is, whatever the reference expected. The
  // class of the pad segment's own refusal (`pad_segment_pairing`, raised
  // only where a pad segment is due) is the pad segment's rule: a fault in
  // when a pad segment is due shows as both, a pad segment built or left out
  // and the refusal raised or not, in one group `pack.pad_segment`.
  if (p.path == "ok" || p.path == "error") {
    const std::string kind = difference_kind(diff);
    if (kind == "unclassified") return kPortFailure;
    const std::string c = class_at_fault(p.path, kind);
    if (c == "pad_segment_pairing") return "pack.pad_segment";
    if (!c.empty()) return "error class " + c;
    return p.path + " (" + kind + ")";
  }
  // Any other field is one root cause, whatever the kind (a wrong value, a
  // wrong length, a missing member), and an entry of a list is the list:
  // `pack.full_only_rows[3]` and a wrong length of `pack.full_only_rows` are
  // one group, `pack.full_only_rows`. A view is keyed by the operation it
  // calls, not the field of its answer: `views.derived.from_all_seq` for
  // each field of that summary (and for the summary missing), and a view
  // listing ranks (`views.cp_shards[1].causal_rows`) by the view, as is a
  // view that calls one operation (`views.all_seq_padded` for its rows,
  // offsets and max_len alike).
  std::string path = p.path;
  if (starts_with(path, "views.")) {
    const auto second = path.find('.', 6);
    const std::string view = path.substr(0, second);
    if (second == std::string::npos || ends_with(view, "[]") || view == "views.all_seq_padded") {
      path = view;
    } else {
      path = path.substr(0, path.find('.', second + 1));
    }
  }
  while (ends_with(path, "[]")) path.resize(path.size() - 2);
  return without_stream(path);
}

}  // namespace seqpack::conformance
