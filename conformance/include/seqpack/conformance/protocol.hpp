// The conformance protocol (seqpack-conformance/1, see conformance/PROTOCOL.md):
// the reference's answers, and the comparison of a port's answers with them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "seqpack/properties/case.hpp"

namespace seqpack::conformance {

inline constexpr const char* kProtocol = "seqpack-conformance/1";

/// Padded rows above which the oracle answers `too_large` instead of building.
inline constexpr std::int64_t kMaxOracleRows = std::int64_t{1} << 25;
/// Request lines longer than this are answered with `bad_request`.
inline constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;

/// How integer arrays of a result are written: plain JSON arrays, or runs
/// `{"runs":[first,count,step,...]}` (an extension a port may choose at hello).
enum class Encoding { plain, runs };

/// Every optional view the oracle computes.
const std::vector<std::string>& oracle_views();

/// The reference's result for a case as one JSON line, with only `views`.
std::string result_line(const properties::Case& c, const std::string& id, const std::vector<std::string>& views,
                        Encoding encoding = Encoding::plain);

/// The oracle's side of a session: answers hello (choosing the runs encoding
/// when the runner offers it and `allow_runs`) and cases.
class Oracle {
 public:
  explicit Oracle(bool allow_runs = true) : allow_runs_(allow_runs) {}
  /// The answer to one request line. Never throws.
  std::string handle(const std::string& line);

 private:
  bool allow_runs_;
  Encoding encoding_ = Encoding::plain;
};

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
std::string request_line(const properties::Case& c, const std::string& id);

}  // namespace seqpack::conformance
