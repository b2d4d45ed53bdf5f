// `seqpack conform`'s shrinking: smaller variants of a failing case (plainer
// options, fewer samples, shorter splits, the edges of the padding arithmetic
// kept), tried greedily against the port while the failure keeps its group's
// signature. The Runner class is declared in runner_internal.hpp; the case
// loop is in runner.cpp, grouping in groups.cpp, reporting in report.cpp.
#include <algorithm>
#include <optional>
#include <tuple>

#include "runner_internal.hpp"
#include "seqpack/conformance/verdict.hpp"
#include "seqpack/properties/generators.hpp"
#include "seqpack/properties/spec.hpp"
#include "seqpack/protocol/consequence.hpp"

namespace seqpack::conformance {

// The runner speaks the protocol's vocabulary (seqpack/protocol/).
using namespace seqpack::protocol;  // NOLINT(google-build-using-namespace)
namespace detail {
namespace {

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

}  // namespace

void Runner::shrink_groups() {
  std::size_t n = 0;
  for (const std::string& sig : group_order_) {
    Group& g = groups_.at(sig);
    // The consequence is judged first, over the group's members: the
    // smallest and a sample of the rest. Shrinking starts from the smallest
    // member of the worst severity, and keeps at least that severity.
    std::optional<Judged> judged;
    if (o_.consequences) judged = judge_members(g);
    const Pending& start = judged && judged->start ? *judged->start : g.smallest;
    const std::string& start_diff = judged && judged->start ? judged->diff : g.smallest_diff;
    const bool start_hung = judged && judged->start ? judged->hung : g.smallest_hung;
    Pending from = start;
    g.shrink_origin = from.id;
    g.shrink_origin_hung = start_hung;
    Failure f{from.id, category_of(from), start_diff, from.c, false, from.steps};
    std::optional<attention::Severity> floor;
    if (judged) floor = judged->verdict.severity;
    // A case the port hung on is not shrunk: each try would wait the timeout.
    // Nor is any case once the circuit breaker stopped the run.
    if (!start_hung && breaker_.empty()) shrink(from, f, sig, floor);
    // A case that shrinking changed is a new case: its id says where it came from.
    const bool shrunk = f.minimal_json() != Failure{f.id, "", "", from.c, false, from.steps}.minimal_json();
    if (shrunk) f.id += kShrunkSuffix;
    g.explanation = f.steps.empty() ? explain_difference(f.minimal, f.diff, "  ") : "";
    if (judged) {
      g.consequence = judged->verdict;
      g.worst_member = judged->id;
      if (shrunk) {
        // The shrunk case kept the severity when it was accepted; its own line
        // names the rows of the case that is printed.
        const attention::Verdict v = judge_case(f.minimal, f.steps, f.id, false, f.diff);
        if (v.severity >= g.consequence.severity) {
          g.consequence = v;
          g.worst_member = f.id;
        }
      }
    }
    g.shrunk = f;
    g.minimal_line = show_minimal(f);
    report_group(g, ++n, f);
  }
}

attention::Verdict Runner::judge_case(const sp::Case& c, const std::vector<sp::Case>& steps, const std::string& id,
                                      bool hung, const std::string& diff) {
  if (hung || !breaker_.empty()) return consequence_of(c, steps, "", "", o_.consumer);
  // A case the port failed as a whole (a crash, an answer past a limit, an
  // exception it cannot classify) or answered unreadably: no consumer gets a
  // pack out of it, and asking again would only repeat it (a 60 MB answer
  // each time).
  const std::string sig = failure_signature(diff);
  if (sig == kPortFailure || sig.rfind("the port's answer", 0) == 0) {
    return {attention::Severity::crash_or_refusal, "consequence [" + attention::describe(o_.consumer) +
                                                       "]: the port gives no pack a consumer can run (" +
                                                       cut_at_word(diff, 120) + "): the training job stops"};
  }
  bool now_hung = false;
  const std::string d = steps.empty() ? ask_one(c, id, &now_hung) : ask_session(steps, id, &now_hung);
  if (d.empty()) {
    return {attention::Severity::not_judged,
            "consequence [" + attention::describe(o_.consumer) + "]: not judged (the port now agrees on " + id + ")"};
  }
  return consequence_of(c, steps, last_expect_, last_answer_, o_.consumer);
}

Runner::Judged Runner::judge_members(Group& g) {
  Judged out;
  out.verdict = {attention::Severity::metadata_only, ""};
  bool any = false;
  std::int64_t best_size = 0;
  const auto consider = [&](const Pending& p, const std::string& diff, bool hung, std::int64_t size) {
    const attention::Verdict v = judge_case(p.c, p.steps, p.id, hung, diff);
    ++g.judged;
    // The worst severity wins; among members of that severity, the smallest
    // (the first seen on a tie) is the one shrinking starts from.
    if (!any || v.severity > out.verdict.severity ||
        (v.severity == out.verdict.severity && size < best_size && !hung)) {
      out = {v, &p, diff, hung, p.id};
      best_size = size;
      any = true;
    }
  };
  consider(g.smallest, g.smallest_diff, g.smallest_hung, g.smallest_size);
  for (const Group::Member& m : g.sample)
    if (m.p.id != g.smallest.id) consider(m.p, m.diff, m.hung, m.size);
  return out;
}

void Runner::shrink(Pending& p, Failure& f, const std::string& sig, std::optional<attention::Severity> floor) {
  int budget = o_.shrink_budget;
  // A smaller case fails alike when it has the group's signature; for the
  // port's failure (kPortFailure), also the same kind: a case that crashes
  // does not stand for one that raised what the port cannot classify. With a
  // floor, its consequence (the exchange ask() just made) must be at least
  // as severe: a smaller case that loses the harm does not stand for it.
  const std::string kind = difference_kind(f.diff);
  const auto alike_for = [&](const std::string& d, const sp::Case& c, const std::vector<sp::Case>& steps) {
    if (d.empty() || failure_signature(d) != sig || (sig == kPortFailure && difference_kind(d) != kind)) return false;
    return !floor || consequence_of(c, steps, last_expect_, last_answer_, o_.consumer).severity >= *floor;
  };
  if (!f.steps.empty()) {
    // A session: first drop steps while it still fails (the marks carry
    // over, so the remaining steps keep their order).
    for (std::size_t k = 0; k < f.steps.size() && f.steps.size() > 1 && budget-- > 0;) {
      std::vector<sp::Case> fewer = f.steps;
      fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(k));
      if (k == 0) fewer.front().marks = f.steps.front().marks;
      bool hung = false;
      const std::string d = ask_session(fewer, p.id + "-shrunk", &hung);
      if (hung) return;  // shrinking stops at the first hang
      if (alike_for(d, f.minimal, fewer)) {
        f.steps = std::move(fewer);
        f.diff = d;
      } else {
        ++k;
      }
    }
    // Then by rows: each remaining step shrunk as a case is, while the
    // session still fails alike. A later step keeps its marks (they carry
    // over from the step before it; only the first step's are the session's).
    bool progress = true;
    while (progress && budget > 0) {
      progress = false;
      for (std::size_t k = 0; k < f.steps.size() && !progress && budget > 0; ++k) {
        for (sp::Case candidate : smaller_cases(f.steps[k])) {
          if (--budget < 0) break;
          if (k > 0) candidate.marks = f.steps[k].marks;
          std::vector<sp::Case> smaller = f.steps;
          smaller[k] = std::move(candidate);
          bool hung = false;
          const std::string d = ask_session(smaller, p.id + "-shrunk", &hung);
          if (hung) return;  // shrinking stops at the first hang
          if (alike_for(d, f.minimal, smaller)) {
            f.steps = std::move(smaller);
            f.diff = d;
            progress = true;
            break;
          }
        }
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
      if (alike_for(d, candidate, {})) {
        f.minimal = candidate;
        f.diff = d;
        progress = true;
        break;
      }
    }
  }
}

}  // namespace detail
}  // namespace seqpack::conformance
