// The conformance runner.
#include "seqpack/conformance/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/case_json.hpp"
#include "seqpack/protocol/limits.hpp"
#include "seqpack/conformance/port.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "seqpack/conformance/verdict.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/properties/spec.hpp"
#include "seqpack/reference/reference.hpp"

namespace seqpack::conformance {

// The runner speaks the protocol's vocabulary (seqpack/protocol/).
using namespace seqpack::protocol;  // NOLINT(google-build-using-namespace)
namespace {

namespace sp = seqpack::properties;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Pending {
  std::string id;
  sp::Case c;
  std::string expect;  // expected result line
  bool vector = false;
  std::vector<sp::Case> steps;          // a session's cases (PROTOCOL.md, "Sessions"); empty for a single case
  std::vector<std::string> views = {};  // the views asked for and compared (views_for), set when sent
};

std::string request_of(const Pending& p, const std::vector<std::string>& views) {
  return p.steps.empty() ? request_line(p.c, p.id, views) : session_request_line(p.steps, p.id, views);
}

std::vector<std::string> views_of(const Pending& p, const std::vector<std::string>& declared) {
  return p.steps.empty() ? views_for(p.c, declared) : views_for(p.steps, declared);
}

// Whether the und indexes are exactly the causal tokens (then they follow edits).
std::vector<std::int64_t> causal_tokens(const sp::Case& c) {
  std::vector<std::int64_t> out;
  std::int64_t pos = 0;
  for (std::size_t j = 0; j < c.layout.split_lens.size() && j < c.layout.attn_modes.size(); ++j) {
    const std::int64_t len = std::max<std::int64_t>(0, c.layout.split_lens[j]);
    if (c.layout.attn_modes[j] == "causal") {
      for (std::int64_t i = 0; i < len && out.size() < (1u << 20); ++i) out.push_back(pos + i);
    }
    pos += len;
  }
  return out;
}

// The edges of the padding arithmetic that a case's streams sit on or next
// to, which shrinking keeps: a tier boundary or a step of the bucket (graphs),
// or a multiple of the effective alignment lcm(alignment, cp) of at least 4
// (below that every length is next to one).
struct StreamEdge {
  bool full;
  std::int64_t need;  // the stream's rows plus the pad segment's reserved row
  sp::SpecEdge edge;
};

std::vector<StreamEdge> edges_of(const sp::Case& c) {
  std::vector<StreamEdge> out;
  const auto [causal, full] = sp::stream_needs(c);
  const auto& o = c.options;
  for (const auto& [is_full, need, a] :
       {std::tuple{false, causal, o.causal_seq_alignment}, std::tuple{true, full, o.full_seq_alignment}}) {
    for (const sp::SpecEdge& e : sp::spec_edges_near(need, a, o.cp_world_size, o.pad_for_cuda_graphs)) {
      if (e.kind == sp::SpecEdge::Kind::alignment_multiple && e.step < 4) continue;
      out.push_back({is_full, need, e});
    }
  }
  return out;
}

// The smaller edges of the same kind, smallest first: every lower tier
// boundary; for multiples of a step, the first multiple, half-way, and the
// one below.
std::vector<std::int64_t> smaller_edges(const sp::SpecEdge& e) {
  std::vector<std::int64_t> out;
  if (e.kind == sp::SpecEdge::Kind::tier) {
    for (const std::int64_t t : sp::kSpecTierEdges) {
      if (t < e.at) out.push_back(t);
    }
    return out;
  }
  const std::int64_t k = e.at / e.step;
  for (const std::int64_t j : {std::int64_t{1}, k / 2, k - 1}) {
    if (j >= 1 && j < k && (out.empty() || out.back() != j * e.step)) out.push_back(j * e.step);
  }
  return out;
}

// Smaller variants of a case, most promising first: plainer options, every
// split emptied or halved, fewer samples, shorter splits. A case whose stream
// sits on or next to an edge (edges_of) first tries variants that keep it
// there: the samples merged (each stream's length kept), and the stream moved
// to a smaller edge of the same kind at the same offset, so that a fault of
// the edge shrinks to a few samples on the nearest edge that still shows it.
// Layout edits only apply to well-formed layouts whose und indexes are the
// causal tokens, ascending or in one of the generators' other orders (they
// are recomputed, in the same order).
std::vector<sp::Case> smaller_cases(const sp::Case& c) {
  std::vector<sp::Case> out;
  const auto& L = c.layout;
  const std::optional<sp::UndOrder> und_order = sp::und_order_of(L.und_token_indexes, causal_tokens(c));
  const bool consistent = und_order && L.split_lens.size() == L.attn_modes.size();
  std::int64_t sum = 0;
  for (const std::int64_t v : L.sample_lens) sum += v;
  const bool tracks_rows = c.rows == sum;
  // Which splits belong to which sample (only when splits tile the samples).
  std::vector<std::pair<std::size_t, std::size_t>> owned;  // [first split, end split) per sample
  bool same_modes = false;                                 // every sample has the same modes, in order
  if (consistent && !L.sample_lens.empty()) {
    // The packer's shape first: the same number of splits per sample.
    const std::size_t per = L.split_lens.size() / L.sample_lens.size();
    bool uniform = per > 0 && per * L.sample_lens.size() == L.split_lens.size();
    same_modes = uniform;
    for (std::size_t s = 0; uniform && s < L.sample_lens.size(); ++s) {
      std::int64_t acc = 0;
      for (std::size_t j = s * per; j < (s + 1) * per; ++j) {
        acc += L.split_lens[j];
        same_modes = same_modes && L.attn_modes[j] == L.attn_modes[j - s * per];
      }
      uniform = acc == L.sample_lens[s];
      owned.emplace_back(s * per, (s + 1) * per);
    }
    same_modes = same_modes && uniform;
    if (!uniform) {
      owned.clear();
      std::size_t j = 0;
      bool tiles = true;
      for (const std::int64_t len : L.sample_lens) {
        const std::size_t first = j;
        std::int64_t acc = 0;
        while (j < L.split_lens.size() && acc < len) acc += L.split_lens[j++];
        if (acc != len) tiles = false;
        owned.emplace_back(first, j);
      }
      if (!tiles || j != L.split_lens.size()) owned.clear();
    }
  }
  const auto finish = [&](sp::Case k) {
    k.layout.und_token_indexes = sp::und_in_order(causal_tokens(k), und_order.value_or(sp::UndOrder::ascending));
    if (tracks_rows) {
      k.rows = 0;
      for (const std::int64_t v : k.layout.sample_lens) k.rows += v;
    }
    out.push_back(std::move(k));
  };
  const auto option = [&](auto edit) {
    sp::Case k = c;
    edit(k);
    if (sp::to_json(k) != sp::to_json(c)) out.push_back(std::move(k));
  };

  // On an edge: move the stream to smaller edges, then merge the samples
  // (each stream's length kept).
  const std::vector<StreamEdge> edges = owned.empty() ? std::vector<StreamEdge>{} : edges_of(c);
  if (!edges.empty()) {
    // Fewer rows on the edge's stream, taken from its last splits.
    const auto drop_rows = [&](bool full, std::int64_t rows) {
      sp::Case k = c;
      for (std::size_t s = owned.size(); s-- > 0 && rows > 0;) {
        for (std::size_t j = owned[s].second; j-- > owned[s].first && rows > 0;) {
          if ((k.layout.attn_modes[j] == "full") != full) continue;
          const std::int64_t take = std::min(rows, k.layout.split_lens[j]);
          k.layout.split_lens[j] -= take;
          k.layout.sample_lens[s] -= take;
          rows -= take;
        }
      }
      if (rows == 0) finish(k);
    };
    for (const StreamEdge& se : edges) {
      for (const std::int64_t smaller : smaller_edges(se.edge)) drop_rows(se.full, se.edge.at - smaller);
    }
    // Into `keep` samples: sample s is added to sample s % keep, split for
    // split (every sample has the same modes). All into one, then into half.
    const auto fold = [&](std::size_t keep) {
      sp::Case k = c;
      const std::size_t per = owned[0].second - owned[0].first;
      for (std::size_t s = keep; s < L.sample_lens.size(); ++s) {
        k.layout.sample_lens[s % keep] += L.sample_lens[s];
        for (std::size_t j = 0; j < per; ++j) k.layout.split_lens[(s % keep) * per + j] += L.split_lens[s * per + j];
      }
      k.layout.sample_lens.resize(keep);
      k.layout.split_lens.resize(keep * per);
      k.layout.attn_modes.resize(keep * per);
      finish(k);
    };
    if (same_modes && L.sample_lens.size() >= 2) fold(1);
    if (same_modes && L.sample_lens.size() >= 3) fold((L.sample_lens.size() + 1) / 2);
    // The other stream, or both, emptied while the edge stays.
    for (const bool full : {false, true}) {
      sp::Case k = c;
      for (std::size_t s = 0; s < owned.size(); ++s) {
        for (std::size_t j = owned[s].first; j < owned[s].second; ++j) {
          if ((L.attn_modes[j] == "full") != full) continue;
          k.layout.sample_lens[s] -= k.layout.split_lens[j];
          k.layout.split_lens[j] = 0;
        }
      }
      if (k.layout.split_lens != L.split_lens) finish(k);
    }
  }

  option([](sp::Case& k) { k.options.cp_world_size = 1; });
  option([](sp::Case& k) { k.options.full_seq_alignment = 1; });
  option([](sp::Case& k) { k.options.causal_seq_alignment = 1; });
  option([](sp::Case& k) { k.options.pad_for_cuda_graphs = false; });
  option([](sp::Case& k) { k.options.is_image_batch = false; });
  option([](sp::Case& k) { k.options.pad_segment_only_when_padded = false; });
  option([](sp::Case& k) { k.marks = {}; });
  option([](sp::Case& k) {
    k.row_bytes = 4;
    k.data_seed = 0;
  });
  // Every split at once: emptied, then halved.
  if (!owned.empty()) {
    for (const int divisor : {0, 2}) {
      sp::Case k = c;
      for (std::size_t s = 0; s < owned.size(); ++s) {
        k.layout.sample_lens[s] = 0;
        for (std::size_t j = owned[s].first; j < owned[s].second; ++j) {
          k.layout.split_lens[j] = divisor ? L.split_lens[j] / divisor : 0;
          k.layout.sample_lens[s] += k.layout.split_lens[j];
        }
      }
      if (k.layout.split_lens != L.split_lens) finish(k);
    }
  }
  // Halves of the samples, then one sample less.
  const auto keep_samples = [&](std::size_t from, std::size_t to) {
    sp::Case k = c;
    k.layout.sample_lens.assign(L.sample_lens.begin() + static_cast<std::ptrdiff_t>(from),
                                L.sample_lens.begin() + static_cast<std::ptrdiff_t>(to));
    const auto a = static_cast<std::ptrdiff_t>(owned[from].first),
               b = static_cast<std::ptrdiff_t>(owned[to - 1].second);
    k.layout.split_lens.assign(L.split_lens.begin() + a, L.split_lens.begin() + b);
    k.layout.attn_modes.assign(L.attn_modes.begin() + a, L.attn_modes.begin() + b);
    finish(k);
  };
  if (owned.size() >= 4) {
    keep_samples(0, owned.size() / 2);
    keep_samples(owned.size() / 2, owned.size());
  }
  for (std::size_t s = 0; s < owned.size() && L.sample_lens.size() > 1; ++s) {
    sp::Case k = c;
    k.layout.sample_lens.erase(k.layout.sample_lens.begin() + static_cast<std::ptrdiff_t>(s));
    const auto [a, b] = owned[s];
    k.layout.split_lens.erase(k.layout.split_lens.begin() + static_cast<std::ptrdiff_t>(a),
                              k.layout.split_lens.begin() + static_cast<std::ptrdiff_t>(b));
    k.layout.attn_modes.erase(k.layout.attn_modes.begin() + static_cast<std::ptrdiff_t>(a),
                              k.layout.attn_modes.begin() + static_cast<std::ptrdiff_t>(b));
    finish(k);
  }
  for (std::size_t s = 0; s < owned.size(); ++s) {
    for (std::size_t j = owned[s].first; j < owned[s].second; ++j) {
      const std::int64_t len = L.split_lens[j];
      for (const std::int64_t shorter : {std::int64_t{0}, len / 2, len - 1}) {
        if (shorter < 0 || shorter >= len) continue;
        sp::Case k = c;
        k.layout.split_lens[j] = shorter;
        k.layout.sample_lens[s] -= len - shorter;
        finish(k);
      }
    }
  }
  return out;
}

struct Failure {
  std::string id, category, diff;
  sp::Case minimal;
  bool known = false;
  std::vector<sp::Case> steps;  // a session's minimal steps
  std::string minimal_json() const {
    return steps.empty() ? sp::to_json(minimal, id) : session_request_line(steps, id);
  }
};

// A known-failures entry: a key (a category, or vector:<id>), then
// optionally ` @FIELD`: the entry then covers only failures whose first
// difference is at FIELD (a field path prefix, e.g. graph_bounds), so that a
// known disagreement on one field does not hide another fault of the same
// category.
std::pair<std::string, std::string> entry_parts(const std::string& entry) {
  const auto at = entry.find(" @");
  if (at == std::string::npos) return {entry, ""};
  std::string key = entry.substr(0, at);
  key.erase(key.find_last_not_of(" \t") + 1);
  return {key, entry.substr(at + 2)};
}

bool entry_covers(const std::string& entry, const std::vector<std::string>& keys, const std::string& diff) {
  const auto [key, field] = entry_parts(entry);
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) return false;
  if (field.empty()) return true;
  // A session's difference names its step first: "session step N: FIELD...".
  std::string at = diff;
  if (at.rfind("session step ", 0) == 0 && at.find(": ") != std::string::npos) at.erase(0, at.find(": ") + 2);
  return at.rfind(field, 0) == 0 &&
         (at.size() == field.size() || std::string(".[:").find(at[field.size()]) != std::string::npos);
}

std::set<std::string> read_known(const std::string& path) {
  std::set<std::string> known;
  if (path.empty()) return known;
  std::ifstream in(path);
  if (!in || !std::filesystem::is_regular_file(path)) {
    throw std::runtime_error("--known-failures: " + path + " is not a readable file");
  }
  std::string line;
  std::size_t too_long = 0;
  while (read_line_bounded(in, line, kMaxLineBytes, &too_long)) {
    if (too_long)
      throw std::runtime_error("--known-failures: " + path + ": a line exceeds the limit of " +
                               std::to_string(kMaxLineBytes) + " bytes");
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    const auto [key, field] = entry_parts(line);
    if (key.empty() || (line.find(" @") != std::string::npos && field.empty())) {
      std::string why = "--known-failures: " + path;
      why += ": entry \"";
      why += line;
      why += "\": expected KEY or KEY @FIELD";
      throw std::runtime_error(why);
    }
    known.insert(line);
  }
  return known;
}

// The real category: a vector that names no class takes its expected
// result's (only vectors: parsing every random result would cost).
std::string category_of(const Pending& p) {
  if (!p.steps.empty()) return "session";
  return case_label(p.c, p.vector ? p.expect : std::string());
}

// A failing case's size, to pick each group's smallest member: its tokens
// and samples (a session's, summed).
std::int64_t case_size(const Pending& p) {
  std::int64_t size = 0;
  const auto add = [&](const sp::Case& c) {
    for (const std::int64_t v : c.layout.split_lens) size += std::clamp<std::int64_t>(v, 0, std::int64_t{1} << 40);
    size += static_cast<std::int64_t>(c.layout.sample_lens.size());
  };
  if (p.steps.empty()) add(p.c);
  for (const auto& c : p.steps) add(c);
  return size;
}

// One failure group: the failures of one signature (failure_signature).
struct Group {
  std::string signature;
  std::int64_t count = 0;
  std::vector<std::string> members;  // the first few ids
  std::map<std::string, std::int64_t> categories;
  Pending smallest;
  std::string smallest_diff;
  std::int64_t smallest_size = 0;
  bool smallest_hung = false;  // the port hung on it: not shrunk
  double first_s = 0;
  std::optional<Failure> shrunk;
  std::string explanation;
};

/// Member ids a group prints.
constexpr std::size_t kGroupMembersShown = 5;

std::vector<std::string> keys_of(const Pending& p) {
  std::vector<std::string> keys{category_of(p)};
  if (p.vector) keys.push_back("vector:" + p.id);
  return keys;
}

class Runner {
 public:
  Runner(const ConformOptions& o, std::ostream& out, std::ostream& err)
      : o_(o), out_(out), err_(err), port_(o.port, o.timeout_s, o.offer_runs) {}

  int run() {
    std::string why;
    if (const std::string bad = check_conform_options(o_); !bad.empty()) {
      err_ << "conform: " << bad << "\n";
      return 2;
    }
    try {
      known_ = read_known(o_.known_failures);
    } catch (const std::exception& e) {
      err_ << "conform: " << e.what() << "\n";
      return 2;
    }
    if (!port_.start(&why)) {
      err_ << "conform: cannot start the port '" << o_.port << "': " << why << "\n";
      return 2;
    }
    port_views_ = port_.views();
    port_encoding_ = port_.encoding();
    start_ = Clock::now();
    if (!o_.vectors_dir.empty()) {
      std::vector<Vector> vectors;
      try {
        vectors = read_vectors(o_.vectors_dir);
      } catch (const std::exception& e) {
        err_ << "conform: " << e.what() << "\n";
        return 2;
      }
      std::vector<Pending> batch;
      const bool sessions = std::find(port_views_.begin(), port_views_.end(), "session") != port_views_.end();
      std::int64_t index = -1;
      for (auto& v : vectors) {
        if (stop_) break;
        if (!v.steps.empty() && !sessions) continue;  // a session vector, for ports that declare sessions
        if (!in_shard(++index)) continue;
        batch.push_back({v.id, v.c, v.expect, true, v.steps});
        ++vectors_;
        if (batch.size() >= batch_size_) run_batch(batch);
      }
      run_batch(batch);
      finish_in_flight();
    }
    const bool sessions = std::find(port_views_.begin(), port_views_.end(), "session") != port_views_.end();
    for (const sp::Profile profile : o_.profiles) {
      if (stop_) break;
      const auto gen = sp::gen_case(profile);
      const auto gen_valid = sp::gen_valid_case(profile);
      const Clock::time_point profile_start = Clock::now();
      std::vector<Pending> batch;
      for (std::int64_t i = 0; o_.cases <= 0 ? o_.time_s > 0 : i < o_.cases; ++i) {
        if (stop_ || (o_.time_s > 0 && std::chrono::duration<double>(Clock::now() - profile_start).count() > o_.time_s))
          break;
        if (!in_shard(i)) continue;
        const std::uint64_t seed = o_.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i);
        const std::string id =
            std::string(profile == sp::Profile::packer ? "p" : "s") + std::to_string(o_.seed) + "-" + std::to_string(i);
        if (sessions && i % kSessionEvery == kSessionEvery - 1) {
          batch.push_back({id, {}, "", false, session_steps(gen_valid, seed)});
        } else {
          sp::Case c = gen(rc::Random(seed), 100).value();
          batch.push_back({id, c, "", false, {}});  // expected result computed while the port works
        }
        if (batch.size() >= batch_size_) run_batch(batch);
      }
      run_batch(batch);
    }
    finish_in_flight();
    if (o_.progress) err_ << "\n";
    shrink_groups();
    return summary();
  }

 private:
  static constexpr std::size_t kBatch = 256;
  // Batches start small and double up to kBatch: the first cases come back
  // after a few answers (a slow port's first verdict does not wait for 256 of
  // them), and a long run still pipelines whole batches.
  static constexpr std::size_t kFirstBatch = 4;
  std::size_t batch_size_ = kFirstBatch;
  /// One random case in this many is a session, when the port declares sessions.
  static constexpr std::int64_t kSessionEvery = 16;

  // A session: 2 to 4 valid cases with CUDA graphs on (the marks are what a
  // session checks), most of one batch kind so that the marks build up.
  // Throws the reference's error if it refuses the case (nothing is built).
  static void ref_check(const sp::Case& c) {
    const reference::Metadata meta = (reference::validate_options(c.options, c.marks),
                                      reference::validate_layout(c.layout), reference::prepare_metadata(c.layout));
    (void)reference::plan_pack(meta, c.rows, c.options, c.marks);
  }

  bool in_shard(std::int64_t i) const { return o_.shard_count <= 1 || i % o_.shard_count == o_.shard_index; }

  static std::vector<sp::Case> session_steps(const rc::Gen<sp::Case>& gen, std::uint64_t seed) {
    rc::Random r(seed ^ 0x5E5510Full);
    const std::size_t n = 2 + static_cast<std::size_t>(r.split().next() % 3);
    const bool image = r.split().next() % 2 == 0;
    std::vector<sp::Case> steps;
    for (std::size_t k = 0; k < n; ++k) {
      const sp::Case generated = gen(r.split(), 100).value();
      sp::Case c = generated;
      c.options.pad_for_cuda_graphs = r.split().next() % 4 != 0;
      if (r.split().next() % 4 != 0) c.options.is_image_batch = image;
      // Graphs make a pad segment due, which a layout that cannot pair
      // refuses: such a step stays as generated (sessions hold valid calls;
      // a failing step is a golden vector of its own).
      try {
        ref_check(c);
      } catch (const std::exception&) {
        c = generated;
      }
      steps.push_back(std::move(c));
    }
    return steps;
  }

  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Asks the port about one case; returns the difference ("" if it agrees).
  // `*hung` is set when the port gave no answer in time (or did not restart).
  std::string ask_one(const sp::Case& c, const std::string& id, bool* hung) {
    const std::vector<std::string> views = views_for(c, port_.views());
    return ask(request_line(c, id, views), result_line(c, id, views, port_.encoding()), views, hung);
  }
  std::string ask_session(const std::vector<sp::Case>& steps, const std::string& id, bool* hung) {
    const std::vector<std::string> views = views_for(steps, port_.views());
    return ask(session_request_line(steps, id, views), session_line(steps, id, views, port_.encoding()), views, hung);
  }
  std::string ask(const std::string& request, const std::string& expect, const std::vector<std::string>& views,
                  bool* hung) {
    std::string why;
    if (!port_.running() && !port_.start(&why)) {
      *hung = true;
      return "the port does not restart: " + why;
    }
    const auto answers = port_.exchange({request}, &why);
    if (answers.empty()) {
      ++crashes_;  // a crash or hang while shrinking counts as any other
      *hung = port_.failure() == PortFailure::hung || port_.failure() == PortFailure::line_too_long;
      return why;
    }
    return first_difference(expect, answers[0], views);
  }

  struct Outcome {
    bool answered = false;
    std::string text;   // the answer, or why there is none
    bool hung = false;  // no answer in time, or a line past the limit: the case is not shrunk
  };

  // Pipelining, one batch in flight: the port answers batch k (on an I/O
  // thread) while this thread computes the reference's expected results for k
  // and generates batch k + 1; then batch k is compared and recorded.
  void run_batch(std::vector<Pending>& batch) {
    finish_in_flight();
    if (batch.empty()) return;
    in_flight_ = std::move(batch);
    batch.clear();
    batch_size_ = std::min(kBatch, 2 * batch_size_);
    std::vector<std::string> lines;
    lines.reserve(in_flight_.size());
    for (Pending& p : in_flight_) {
      p.views = views_of(p, port_views_);
      lines.push_back(request_of(p, p.views));
    }
    io_ = std::async(std::launch::async, [this, lines = std::move(lines)] { return exchange_all(lines); });
    for (Pending& p : in_flight_) {
      if (!p.expect.empty()) continue;
      p.expect = p.steps.empty() ? result_line(p.c, p.id, p.views, port_encoding_)
                                 : session_line(p.steps, p.id, p.views, port_encoding_);
    }
  }

  void finish_in_flight() {
    if (!io_.valid()) return;
    const std::vector<Outcome> outcome = io_.get();
    for (const auto& m : io_messages_) err_ << m;
    io_messages_.clear();
    for (std::size_t k = 0; k < in_flight_.size(); ++k) {
      record(in_flight_[k],
             outcome[k].answered ? first_difference(in_flight_[k].expect, outcome[k].text, in_flight_[k].views)
                                 : outcome[k].text,
             outcome[k].hung);
    }
    in_flight_.clear();
    progress();
  }

  // On the I/O thread: every line's answer; a crash or hang fails that case
  // and restarts the port.
  std::vector<Outcome> exchange_all(const std::vector<std::string>& lines) {
    std::vector<Outcome> outcome(lines.size());
    std::size_t done = 0;
    std::size_t budget = kMaxBatchAnswerBytes;  // what this batch's answers may hold in all
    while (done < lines.size()) {
      std::string why;
      auto answers = port_.exchange(
          std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(done), lines.end()), &why, budget);
      for (std::size_t k = 0; k < answers.size(); ++k) {
        budget -= answers[k].size();
        outcome[done + k] = {true, std::move(answers[k])};
      }
      done += answers.size();
      if (done < lines.size() && port_.failure() == PortFailure::too_many_bytes) {
        // The rest of the batch fails unread; the next batch starts afresh.
        for (; done < lines.size(); ++done) outcome[done] = {false, why, true};
        std::string restart_why;
        if (!port_.start(&restart_why)) {
          io_messages_.push_back("conform: the port does not restart: " + restart_why + "\n");
        }
        break;
      }
      if (done < lines.size()) {
        outcome[done++] = {false, why,
                           port_.failure() == PortFailure::hung || port_.failure() == PortFailure::line_too_long};
        ++crashes_;
        std::string restart_why;
        if (!port_.start(&restart_why)) {
          io_messages_.push_back("conform: the port does not restart: " + restart_why + "\n");
          for (; done < lines.size(); ++done) outcome[done] = {false, "the port does not restart", true};
        }
      }
    }
    return outcome;
  }

  void record(Pending& p, const std::string& diff, bool hung) {
    ++ran_;
    const std::string cat = category_of(p);
    mix_[cat]++;
    const auto keys = keys_of(p);
    for (const auto& k : keys) seen_keys_.insert(k);
    if (p.vector) ++families_[vector_family(p.id)].first;
    if (diff.empty()) return;
    bool known = false;
    for (const auto& entry : known_) {
      if (entry_covers(entry, keys, diff)) {
        known = true;
        failed_keys_.insert(entry);
        known_hits_[entry]++;
      }
    }
    if (known) {
      ++known_failures_;
      return;
    }
    ++unexpected_;
    if (p.vector) families_[vector_family(p.id)].second.push_back(p.id);
    const std::string sig = failure_signature(diff);
    auto it = groups_.find(sig);
    if (it == groups_.end() && stop_) {
      // A new fault in the batch that was in flight when --max-failures
      // stopped the run: counted, not grouped.
      ++past_stop_;
      return;
    }
    if (it == groups_.end()) {
      if (first_verdict_s_ < 0) first_verdict_s_ = seconds();
      it = groups_.emplace(sig, Group{}).first;
      it->second.signature = sig;
      it->second.first_s = seconds();
      group_order_.push_back(sig);
      if (o_.progress) err_ << "\n";
      // One block per new fault as soon as it is seen (its first member,
      // unshrunk); the shrunk smallest member follows at the end.
      out_ << "FAIL " << p.id << " [" << cat << "] group " << groups_.size() << ": " << sig << " (after "
           << seconds_text(it->second.first_s) << " s)\n  first difference: " << diff << "\n"
           << std::flush;  // seen as it is found, also by a log or a script reading a pipe
      if (o_.max_failures > 0 && static_cast<std::int64_t>(groups_.size()) >= o_.max_failures) stop_ = true;
    }
    Group& g = it->second;
    const std::int64_t size = case_size(p);
    if (g.count == 0 || size < g.smallest_size) {
      g.smallest = p;
      g.smallest.expect.clear();  // recomputed when shrinking; the line can be megabytes
      g.smallest_diff = diff;
      g.smallest_size = size;
      g.smallest_hung = hung;
    }
    ++g.count;
    g.categories[cat]++;
    if (g.members.size() < kGroupMembersShown) g.members.push_back(p.id);
  }

  static std::string seconds_text(double s) {
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(s < 10 ? 2 : 1);
    t << s;
    return t.str();
  }

  // Each group's smallest member, shrunk once (keeping the group's
  // signature), then printed once with its count and a few member ids.
  void shrink_groups() {
    std::size_t n = 0;
    for (const std::string& sig : group_order_) {
      Group& g = groups_.at(sig);
      Failure f{g.smallest.id, category_of(g.smallest), g.smallest_diff, g.smallest.c, false, g.smallest.steps};
      // A case the port hung on is not shrunk: each try would wait the timeout.
      if (!g.smallest_hung) shrink(g.smallest, f, sig);
      g.explanation = f.steps.empty() ? explain_difference(f.minimal, f.diff, "  ") : "";
      g.shrunk = f;
      report_group(g, ++n, f);
    }
  }

  // Shrinks a failing case by steps that know the layout (plainer options,
  // fewer samples, shorter splits), asking the port each time, greedily.
  void shrink(Pending& p, Failure& f, const std::string& sig) {
    int budget = o_.shrink_budget;
    if (!f.steps.empty()) {
      // A session: drop steps while it still fails (the marks carry over, so
      // the remaining steps keep their order).
      for (std::size_t k = 0; k < f.steps.size() && f.steps.size() > 1 && budget-- > 0;) {
        std::vector<sp::Case> fewer = f.steps;
        fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(k));
        if (k == 0) fewer.front().marks = f.steps.front().marks;
        bool hung = false;
        const std::string d = ask_session(fewer, p.id + "-shrunk", &hung);
        if (hung) return;  // shrinking stops at the first hang
        if (!d.empty() && failure_signature(d) == sig) {
          f.steps = std::move(fewer);
          f.diff = d;
        } else {
          ++k;
        }
      }
      return;
    }
    bool progress = true;
    while (progress && budget > 0) {
      progress = false;
      for (const sp::Case& candidate : smaller_cases(f.minimal)) {
        if (--budget < 0) break;
        bool hung = false;
        const std::string d = ask_one(candidate, p.id + "-shrunk", &hung);
        if (hung) return;  // shrinking stops at the first hang
        if (!d.empty() && failure_signature(d) == sig) {
          f.minimal = candidate;
          f.diff = d;
          progress = true;
          break;
        }
      }
    }
  }

  void report_group(const Group& g, std::size_t n, const Failure& f) {
    out_ << "group " << n << " of " << groups_.size() << ": " << g.signature << ": " << g.count
         << (g.count == 1 ? " case" : " cases") << " (";
    bool first = true;
    for (const auto& [cat, k] : g.categories) {
      out_ << (first ? "" : ", ") << cat << " " << k;
      first = false;
    }
    out_ << "), e.g.";
    for (const auto& id : g.members) out_ << " " << id;
    out_ << (g.count > static_cast<std::int64_t>(g.members.size()) ? " ...\n" : "\n");
    out_ << "  smallest member " << f.id << " [" << f.category << "], "
         << (g.smallest_hung ? "not shrunk (the port hung on it)" : "shrunk") << "\n  first difference: " << f.diff
         << "\n"
         << g.explanation << "  minimal " << (f.steps.empty() ? "case" : "session") << ": " << f.minimal_json() << "\n";
    if (!o_.save_failures.empty()) {
      const std::string path = o_.save_failures + "/" + f.id + ".json";
      std::ofstream file(path);
      file << f.minimal_json() << "\n";
      file.close();
      if (file) {
        out_ << "  saved: " << path << "\n";
      } else {
        err_ << "conform: --save-failures: cannot write " << path << "\n";
        write_failed_ = true;
      }
    }
  }

  // A progress line: rewritten in place on a terminal; otherwise, when
  // progress_every_s is set, a whole line that often (overnight logs).
  void progress() {
    const double s = seconds();
    if (o_.progress) {
      err_ << "\rcases " << ran_ << "  " << static_cast<std::int64_t>(s > 0 ? ran_ / s : 0) << "/s  failures "
           << unexpected_ + known_failures_ << " in " << groups_.size() << " groups   " << std::flush;
      return;
    }
    if (o_.progress_every_s <= 0 || s - last_progress_s_ < o_.progress_every_s) return;
    last_progress_s_ = s;
    err_ << "progress: " << seconds_text(s) << " s, " << ran_ << " cases, "
         << static_cast<std::int64_t>(s > 0 ? ran_ / s : 0) << " cases/s, " << unexpected_ << " unexpected failures in "
         << groups_.size() << " groups, " << known_failures_ << " known\n"
         << std::flush;
  }

  int summary() {
    const double s = seconds();
    std::vector<std::string> now_passing, not_seen;
    for (const auto& k : known_) {
      if (!seen_keys_.count(entry_parts(k).first))
        not_seen.push_back(k);
      else if (!failed_keys_.count(k) && !stop_)  // a run stopped early proves no entry passes
        now_passing.push_back(k);
    }
    out_ << "port: " << port_.name() << " (views: ";
    for (std::size_t i = 0; i < port_.views().size(); ++i) out_ << (i ? ", " : "") << port_.views()[i];
    out_ << "; encoding: " << (port_.encoding() == Encoding::runs ? "runs" : "plain") << ")\n";
    out_ << "case mix:";
    for (const auto& [cat, n] : mix_) out_ << " " << cat << "=" << n;
    out_ << "\n";
    for (const auto& k : now_passing) out_ << "NOW PASSES (remove from the known failures): " << k << "\n";
    for (const auto& k : not_seen) out_ << "note: known failure not exercised in this run: " << k << "\n";
    if (!groups_.empty()) {
      out_ << "failure groups: " << groups_.size() << " (first verdict after " << seconds_text(first_verdict_s_)
           << " s)" << (stop_ ? ", run stopped at --max-failures " + std::to_string(o_.max_failures) : "");
      if (past_stop_ > 0) out_ << "; " << past_stop_ << " failures of other signatures in the last batch, not grouped";
      out_ << "\n";
      std::size_t n = 0;
      for (const std::string& sig : group_order_) {
        const Group& g = groups_.at(sig);
        out_ << "  " << ++n << ". " << sig << ": " << g.count << (g.count == 1 ? " case" : " cases") << ", smallest "
             << (g.shrunk ? g.shrunk->id : g.smallest.id) << "\n";
      }
    }
    out_ << "conform: " << ran_ << " cases (" << vectors_ << " vectors) in " << s << " s, "
         << static_cast<std::int64_t>(s > 0 ? ran_ / s : 0) << " cases/s; " << unexpected_ << " unexpected failures in "
         << groups_.size() << " groups, " << known_failures_ << " known failures, " << now_passing.size()
         << " now passing, " << crashes_ << " crashes or hangs";
    if (o_.shard_count > 1) out_ << "; shard " << o_.shard_index << "/" << o_.shard_count;
    out_ << "\n";
    if (!o_.report.empty()) {
      json r = {{"port", port_.name()},
                {"command", o_.port},
                {"profiles", profile_names()},
                {"seed", o_.seed},
                {"shard", {o_.shard_index, o_.shard_count}},
                {"cases", ran_},
                {"vectors", vectors_},
                {"seconds", s},
                {"first_verdict_seconds", first_verdict_s_ < 0 ? json() : json(first_verdict_s_)},
                {"cases_per_second", s > 0 ? ran_ / s : 0},
                {"unexpected_failures", unexpected_},
                {"known_failures", known_failures_},
                {"known_failure_hits", known_hits_},
                {"known_seen", json::array()},
                {"known_failed", failed_keys_},
                {"stopped_early", stop_},
                {"now_passing", now_passing},
                {"crashes_or_hangs", crashes_},
                {"case_mix", mix_},
                {"groups", json::array()}};
      for (const auto& k : known_) {
        if (seen_keys_.count(entry_parts(k).first)) r["known_seen"].push_back(k);
      }
      for (const std::string& sig : group_order_) {
        const Group& g = groups_.at(sig);
        const Failure& f = *g.shrunk;
        r["groups"].push_back({{"signature", sig},
                               {"count", g.count},
                               {"members", g.members},
                               {"categories", g.categories},
                               {"id", f.id},
                               {"category", f.category},
                               {"diff", f.diff},
                               {"explanation", g.explanation},
                               {f.steps.empty() ? "case" : "session", json::parse(f.minimal_json())}});
      }
      std::ofstream file(o_.report);
      file << r.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
      file.close();
      if (!file) {
        err_ << "conform: --report: cannot write " << o_.report << "\n";
        return 2;
      }
    }
    if (!o_.junit.empty()) write_junit(s);
    if (write_failed_) return 2;
    return unexpected_ == 0 && now_passing.empty() ? 0 : 1;
  }

  // One testcase per vector family (failing with its unexpected failures'
  // ids) and per failure group.
  void write_junit(double s) {
    std::vector<JUnitCase> cases;
    for (const auto& [family, stats] : families_) {
      JUnitCase c{"vectors", family + " (" + std::to_string(stats.first) + " vectors)", "", "", 0};
      std::string ids;
      const std::size_t failing = stats.second.size();
      for (std::size_t k = 0; k < failing && k < 10; ++k) ids += (k ? " " : "") + stats.second[k];
      if (failing > 0) {
        c.failure = std::to_string(failing) + " of " + std::to_string(stats.first) + " vectors fail";
        c.detail = "failing vectors (first ten): " + ids;
      }
      cases.push_back(c);
    }
    std::size_t n = 0;
    for (const std::string& sig : group_order_) {
      const Group& g = groups_.at(sig);
      const Failure& f = *g.shrunk;
      JUnitCase c{"failure-groups", "group " + std::to_string(++n) + ": " + sig, "", "", 0};
      c.failure = std::to_string(g.count) + " cases: " + f.diff;
      std::string members;
      for (const auto& id : g.members) members += " " + id;
      c.detail = "members:" + members + "\nfirst difference: " + f.diff + "\n" + g.explanation + "minimal " +
                 (f.steps.empty() ? "case" : "session") + ": " + f.minimal_json() + "\n";
      cases.push_back(c);
    }
    JUnitCase random{"random", std::to_string(ran_ - vectors_) + " random cases", "", "", s};
    cases.push_back(random);
    std::ofstream out(o_.junit);
    out << junit_xml("seqpack conform: " + port_.name(), cases, s);
    if (!out) {
      err_ << "conform: --junit: cannot write " << o_.junit << "\n";
      write_failed_ = true;
    }
  }

  std::vector<std::string> profile_names() const {
    std::vector<std::string> names;
    for (const sp::Profile p : o_.profiles) names.emplace_back(p == sp::Profile::packer ? "packer" : "strict");
    return names;
  }

  const ConformOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  Port port_;
  Clock::time_point start_;
  std::set<std::string> known_, seen_keys_, failed_keys_;
  std::map<std::string, std::int64_t> mix_;
  std::map<std::string, Group> groups_;
  std::vector<std::string> group_order_;  // signatures in the order first seen
  std::map<std::string, std::int64_t> known_hits_;
  // Per vector family: vectors run, and the ids of those that failed.
  std::map<std::string, std::pair<std::int64_t, std::vector<std::string>>> families_;
  std::int64_t ran_ = 0, vectors_ = 0, crashes_ = 0, unexpected_ = 0, known_failures_ = 0;
  double first_verdict_s_ = -1, last_progress_s_ = 0;
  bool stop_ = false;
  std::int64_t past_stop_ = 0;  // unexpected failures of new signatures after the stop
  bool write_failed_ = false;
  std::vector<Pending> in_flight_;
  std::future<std::vector<Outcome>> io_;
  std::vector<std::string> io_messages_;
  std::vector<std::string> port_views_;  // as declared at the first hello
  Encoding port_encoding_ = Encoding::plain;
};

}  // namespace

std::string check_conform_options(const ConformOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (o.port.empty()) return "--port: the port's command line is empty";
  if (o.cases < 0) return "--cases: expected a count >= 0, got " + std::to_string(o.cases);
  if (!std::isfinite(o.time_s) || o.time_s < 0) return "--time: expected seconds >= 0, got " + std::to_string(o.time_s);
  if (!std::isfinite(o.timeout_s) || o.timeout_s <= 0 || o.timeout_s > 86400) {
    return "--timeout: expected seconds in (0, 86400], got " + std::to_string(o.timeout_s);
  }
  if (o.shrink_budget < 0) return "--shrink-budget: expected a count >= 0, got " + std::to_string(o.shrink_budget);
  if (!o.known_failures.empty() &&
      (!fs::is_regular_file(o.known_failures, ec) || access(o.known_failures.c_str(), R_OK) != 0)) {
    return "--known-failures: " + o.known_failures + " is not a readable file";
  }
  if (!o.vectors_dir.empty()) {
    if (!fs::is_directory(o.vectors_dir, ec)) return "--vectors: " + o.vectors_dir + " is not a directory";
    bool any = false;
    for (const auto& e : fs::directory_iterator(o.vectors_dir, ec)) any = any || e.path().extension() == ".jsonl";
    if (ec || !any) return "--vectors: " + o.vectors_dir + " holds no readable *.jsonl vector file";
  }
  // A report file: a file (not a directory) in a writable directory.
  const auto writable_file = [&ec](const std::string& flag, const std::string& file) -> std::string {
    if (file.empty()) return "";
    if (fs::is_directory(file, ec)) return flag + ": " + file + " is a directory, not a file";
    const fs::path parent = fs::absolute(file, ec).parent_path();
    if (!fs::is_directory(parent, ec) || access(parent.c_str(), W_OK) != 0) {
      return flag + ": cannot write " + file + " (" + parent.string() + " is not a writable directory)";
    }
    return "";
  };
  if (std::string bad = writable_file("--report", o.report); !bad.empty()) return bad;
  if (std::string bad = writable_file("--junit", o.junit); !bad.empty()) return bad;
  if (!o.save_failures.empty()) {
    if (fs::exists(o.save_failures, ec) && !fs::is_directory(o.save_failures, ec)) {
      return "--save-failures: " + o.save_failures + " is not a directory";
    }
    fs::create_directories(o.save_failures, ec);
    if (ec || access(o.save_failures.c_str(), W_OK) != 0) {
      return "--save-failures: cannot create or write the directory " + o.save_failures +
             (ec ? " (" + ec.message() + ")" : std::string());
    }
  }
  return "";
}

int run_conform(const ConformOptions& options, std::ostream& out, std::ostream& err) {
  return Runner(options, out, err).run();
}

std::vector<Vector> read_vectors(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".jsonl") continue;
    if (!e.is_regular_file()) throw std::runtime_error("--vectors: " + e.path().string() + " is not a regular file");
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("--vectors: " + dir + " holds no *.jsonl vector file");
  std::vector<Vector> out;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) throw std::runtime_error(f.string() + ": cannot read");
    std::string line;
    int n = 0;
    std::size_t too_long = 0;
    while (read_line_bounded(in, line, kMaxLineBytes, &too_long)) {
      ++n;
      if (too_long) {
        throw std::runtime_error(f.string() + ":" + std::to_string(n) + ": the line exceeds the limit of " +
                                 std::to_string(kMaxLineBytes) + " bytes");
      }
      if (line.empty()) continue;
      try {
        const json j = parse_json(line, "vector");
        if (j.contains("format") && j["format"] != kVectorFormat) {
          throw std::runtime_error("format " + j["format"].dump() + " is not " + kVectorFormat +
                                   " (this seqpack is too old for these vectors)");
        }
        Vector v;
        if (j.contains("session")) {
          const json& session = j.at("session");
          v.id = session.at("id").get<std::string>();
          for (const auto& step : session.at("cases")) v.steps.push_back(case_from_json_value(step));
          if (v.steps.empty()) throw std::runtime_error("session " + v.id + " has no cases");
          v.c = v.steps.front();
        } else {
          v.c = case_from_json_value(j.at("case"));
          v.id = j.at("case").at("id").get<std::string>();
        }
        v.expect = j.at("expect").dump();
        out.push_back(std::move(v));
      } catch (const std::exception& e) {
        throw std::runtime_error(f.string() + ":" + std::to_string(n) + ": " + e.what());
      }
    }
  }
  return out;
}

}  // namespace seqpack::conformance
