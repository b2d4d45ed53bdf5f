// The conformance protocol (seqpack-conformance/1, see protocol/PROTOCOL.md):
// the reference's answers, and the comparison of a port's answers with them.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "seqpack/protocol/case.hpp"
#include "seqpack/protocol/limits.hpp"
#include "seqpack/reference/views.hpp"

namespace seqpack::protocol {

inline constexpr const char* kProtocol = "seqpack-conformance/1";

/// Lowers (or restores) the oracle's row limit for this process; the fuzz
/// target of the protocol uses a small one so that every input stays fast.
void set_oracle_row_limit(std::int64_t rows);
std::int64_t oracle_row_limit();

/// How integer arrays of a result are written: plain JSON arrays, or runs
/// `{"runs":[first,count,step,...]}` (an extension a port may choose at hello).
enum class Encoding { plain, runs };

/// A stream with the offsets and maximum a padded getter returns.
struct PaddedStream {
  reference::Rows seq;
  std::vector<std::int32_t> offsets;
  std::int32_t max_len = 0;
};

/// Thrown by an optional operation that an implementation does not provide
/// (it then does not declare the views that need it).
class Unsupported : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// One implementation's built pack, as host data, and the operations of the
/// original module on it (PROTOCOL.md, "Views"). Only pack(), all_seq_padded()
/// and shard() are required; the others throw Unsupported unless overridden.
/// Errors are reference::Error with the reference's classes.
class Built {
 public:
  virtual ~Built() = default;
  virtual const reference::Pack& pack() const = 0;
  virtual reference::AllSeqPadded all_seq_padded() const = 0;
  /// Rank `rank`'s local pack; throws reference::Error (not_divisible) as shard_pack.
  virtual std::unique_ptr<Built> shard(std::int64_t rank, std::int64_t world_size) const = 0;

  virtual reference::Rows und_seq() const;
  virtual reference::Rows gen_seq() const;
  virtual reference::Rows all_seq() const;
  virtual PaddedStream causal_padded() const;
  virtual PaddedStream full_only_padded() const;
  virtual bool has_pad_segment() const;
  virtual std::pair<std::int64_t, std::int64_t> num_real_tokens() const;
  virtual reference::PositionIds und_position_ids(const reference::PositionIds& ids) const;
  virtual reference::PositionIds gen_position_ids(const reference::PositionIds& ids) const;
  virtual void set_und_seq(const reference::Rows& value);
  virtual void set_gen_seq(const reference::Rows& value);
  virtual void set_all_seq(const reference::Rows& value);
  virtual std::unique_ptr<Built> from_all_seq(const reference::Rows& packed) const;
  virtual std::unique_ptr<Built> from_mode_splits(const reference::Rows& causal, const reference::Rows& full) const;
  virtual std::unique_ptr<Built> from_und_gen_splits(const reference::Rows& und, const reference::Rows& gen) const;
  /// `row_bytes`: the original's shape (-1, ...) as a row width.
  virtual std::unique_ptr<Built> zeros_like(std::optional<std::size_t> row_bytes) const;
  /// The framework's CP utilities (NOTES.md section 8; the cp_global view):
  /// the rank's slice of position ids, and the pack gathered back from
  /// every rank's shard (each made by this implementation's shard()).
  virtual reference::PositionIds shard_position_ids(const reference::PositionIds& ids, std::int64_t rank,
                                                    std::int64_t world_size) const;
  virtual std::unique_ptr<Built> gather(const std::vector<const Built*>& shards) const;
  /// The dtype of each integer tensor of the pack, by wire name ("int32",
  /// "int64"; pad segment fields as "pad_segment.NAME"): the dtypes view. The
  /// default is the reference's, which are the spec's (NOTES.md section 1).
  virtual std::vector<std::pair<std::string, std::string>> dtypes() const;

  /// The calls whose error class the cp_local view records on a local pack.
  enum class Call { all_seq, all_seq_padded, und_position_ids, gen_position_ids, causal_padded, full_only_padded };
  /// The error class of `call` on this pack (`ids`: the position ids the
  /// position-id calls take), or "ok". By default the call itself, its
  /// reference::Error caught; the oracle answers from the reference's
  /// `*_refusal` checks, which its calls run before they build anything
  /// (a throw costs microseconds, and cp_local makes six per rank).
  virtual std::string error_class(Call call, const reference::PositionIds& ids) const;
};

/// An implementation under conformance: builds a case's pack. Rows are the
/// protocol's self-naming 4-byte rows (8-byte rows for the payload view).
/// Throws reference::Error for rejected input.
class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<Built> build(const reference::Rows& rows, const protocol::Case& c,
                                       reference::GraphMarks& marks) const = 0;
  /// Builds the case with metadata prepared from `prepared_from` (the
  /// metadata_reuse view); throws Unsupported unless overridden.
  virtual std::unique_ptr<Built> build_prepared(const reference::Rows& rows, const protocol::Case& c,
                                                reference::GraphMarks& marks,
                                                const reference::Layout& prepared_from) const;
  /// The optional views and behaviours the implementation's port declares.
  virtual std::vector<std::string> views() const;
};

/// The reference as an implementation.
const Implementation& reference_implementation();

/// Every optional view and behaviour the oracle computes (PROTOCOL.md):
/// all_seq_padded, cp_shards, getters, position_ids, setters, derived,
/// cp_local, metadata_reuse, payload, session, error_marks, cp_global, dtypes.
const std::vector<std::string>& oracle_views();

/// Padded rows (causal + full) above which a result carries no payload view.
inline constexpr std::int64_t kMaxPayloadRows = std::int64_t{1} << 16;

/// The bits of the payload view's packed row `t` (a float64; PROTOCOL.md).
std::uint64_t payload_bits(std::int64_t t);

/// Source `s`'s rows of PROTOCOL.md ("Foreign rows"): row k holds s * 2^26 + k + 1.
reference::Rows foreign_rows(int source, std::size_t n);

/// The reference's result for a case as one JSON line, with only `views`.
std::string result_line(const protocol::Case& c, const std::string& id, const std::vector<std::string>& views,
                        Encoding encoding = Encoding::plain);
/// The same for another implementation. Cases past the oracle's row limit are
/// answered by the reference's checks (nothing is allocated for them).
std::string result_line(const Implementation& impl, const protocol::Case& c, const std::string& id,
                        const std::vector<std::string>& views, Encoding encoding);

/// The reference's answer to a session request (PROTOCOL.md, "Sessions"):
/// the steps' results in order, with the marks carried from step to step (the
/// first step's graph_bounds set them). Step k's result id is "<id>/<k>".
std::string session_line(const std::vector<protocol::Case>& steps, const std::string& id,
                         const std::vector<std::string>& views, Encoding encoding = Encoding::plain);
std::string session_line(const Implementation& impl, const std::vector<protocol::Case>& steps, const std::string& id,
                         const std::vector<std::string>& views, Encoding encoding);
/// The session request line for `steps`.
std::string session_request_line(const std::vector<protocol::Case>& steps, const std::string& id);
std::string session_request_line(const std::vector<protocol::Case>& steps, const std::string& id,
                                 const std::vector<std::string>& views);

/// The oracle's side of a port's conversation: answers hello (choosing the runs encoding
/// when the runner offers it and `allow_runs`) and cases.
class Oracle {
 public:
  explicit Oracle(bool allow_runs = true, const Implementation& impl = reference_implementation())
      : allow_runs_(allow_runs), impl_(&impl) {}
  /// The answer to one request line. Never throws.
  std::string handle(const std::string& line);

 private:
  /// The implementation's views that a request asks for (all without "views").
  std::vector<std::string> asked_views(const nlohmann::json& request) const;
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

/// The reference's answer line read once (parsed, runs expanded), for
/// comparing many answers with it: first_difference(ExpectedAnswer(e), a, v)
/// is first_difference(e, a, v). Throws nlohmann's parse_error on a line
/// that is not JSON (the reference writes none).
class ExpectedAnswer {
 public:
  explicit ExpectedAnswer(std::string line);
  const std::string& line() const { return line_; }

 private:
  struct Read;
  std::string line_;
  std::shared_ptr<const Read> read_;
  friend std::string first_difference(const ExpectedAnswer& expected, const std::string& actual,
                                      const std::vector<std::string>& views);
};
std::string first_difference(const ExpectedAnswer& expected, const std::string& actual,
                             const std::vector<std::string>& views);

/// The reference's and the port's answers as documents, runs expanded, read
/// under first_difference's limits; nullopt where the port's cannot be read.
/// Never throws.
std::optional<std::pair<nlohmann::json, nlohmann::json>> read_answer_pair(const std::string& expected,
                                                                          const std::string& actual);

/// The request line for a case. With `views`, the request names the views
/// the runner will compare for it ("views": PROTOCOL.md, "Optional views and
/// requests"); a port may compute only those.
std::string request_line(const protocol::Case& c, const std::string& id);
std::string request_line(const protocol::Case& c, const std::string& id, const std::vector<std::string>& views);

/// Padded rows (causal + full) up to which the runner asks for every declared
/// view; past it, only the first protocol's views and the behaviours.
inline constexpr std::int64_t kAllViewsRows = 4096;

/// The views the runner compares for a case (or a session's steps): every
/// declared one when the case's padded streams hold at most kAllViewsRows
/// rows, else only all_seq_padded, cp_shards, session and error_marks.
std::vector<std::string> views_for(const protocol::Case& c, const std::vector<std::string>& declared);
std::vector<std::string> views_for(const std::vector<protocol::Case>& steps, const std::vector<std::string>& declared);

}  // namespace seqpack::protocol
