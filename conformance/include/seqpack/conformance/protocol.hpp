// The conformance protocol (seqpack-conformance/1, see conformance/PROTOCOL.md):
// the reference's answers, and the comparison of a port's answers with them.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "seqpack/conformance/case.hpp"
#include "seqpack/reference/views.hpp"

namespace seqpack::conformance {

inline constexpr const char* kProtocol = "seqpack-conformance/1";

/// Padded rows above which the oracle answers `too_large` instead of building.
inline constexpr std::int64_t kMaxOracleRows = std::int64_t{1} << 25;

/// Lowers (or restores) the oracle's row limit for this process; the fuzz
/// target of the protocol uses a small one so that every input stays fast.
void set_oracle_row_limit(std::int64_t rows);
std::int64_t oracle_row_limit();
/// Request lines longer than this are answered with `bad_request`.
inline constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;

/// How integer arrays of a result are written: plain JSON arrays, or runs
/// `{"runs":[first,count,step,...]}` (an extension a port may choose at hello).
enum class Encoding { plain, runs };

/// One implementation's built pack, as host data, with the views it computes.
class Built {
 public:
  virtual ~Built() = default;
  virtual const reference::Pack& pack() const = 0;
  virtual reference::AllSeqPadded all_seq_padded() const = 0;
  /// Rank `rank`'s shard; throws reference::Error (not_divisible) as shard_pack.
  virtual reference::Pack shard(std::int64_t rank, std::int64_t world_size) const = 0;
};

/// An implementation under conformance: builds a case's pack. Rows are the
/// protocol's self-naming 4-byte rows. Throws reference::Error for rejected input.
class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<Built> build(const reference::Rows& rows, const conformance::Case& c,
                                       reference::GraphMarks& marks) const = 0;
};

/// The reference as an implementation.
const Implementation& reference_implementation();

/// Every optional view the oracle computes.
const std::vector<std::string>& oracle_views();

/// The reference's result for a case as one JSON line, with only `views`.
std::string result_line(const conformance::Case& c, const std::string& id, const std::vector<std::string>& views,
                        Encoding encoding = Encoding::plain);
/// The same for another implementation. Cases past the oracle's row limit are
/// answered by the reference's checks (nothing is allocated for them).
std::string result_line(const Implementation& impl, const conformance::Case& c, const std::string& id,
                        const std::vector<std::string>& views, Encoding encoding);

/// The oracle's side of a session: answers hello (choosing the runs encoding
/// when the runner offers it and `allow_runs`) and cases.
class Oracle {
 public:
  explicit Oracle(bool allow_runs = true, const Implementation& impl = reference_implementation())
      : allow_runs_(allow_runs), impl_(&impl) {}
  /// The answer to one request line. Never throws.
  std::string handle(const std::string& line);

 private:
  bool allow_runs_;
  const Implementation* impl_;
  Encoding encoding_ = Encoding::plain;
};

/// A port's main loop: answers each request line of `in` on `out` (one line
/// each, flushed), with `impl` building the cases; blank lines and a trailing
/// CR are skipped. Returns 0 at the end of the input.
int serve(std::istream& in, std::ostream& out, bool allow_runs = true,
          const Implementation& impl = reference_implementation());

/// The oracle's answer to one request line (hello, case, or anything else),
/// plain encoding. Never throws: malformed input gets an error result naming
/// the problem.
std::string handle_line(const std::string& line);

/// The first difference between an expected and an actual result line,
/// comparing `ok`, the error class, the pack, graph_bounds and the declared
/// `views`; empty when they agree. Messages are not compared; runs-encoded
/// arrays are expanded before comparing.
std::string first_difference(const std::string& expected, const std::string& actual,
                             const std::vector<std::string>& views);

/// The request line for a case.
std::string request_line(const conformance::Case& c, const std::string& id);

}  // namespace seqpack::conformance
