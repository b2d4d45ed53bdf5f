// audit_original (audit.hpp): the scope's layouts enumerated in a fixed order,
// each built by the reference and judged under every profile; findings are
// classed by their branch and their text with the numbers elided.
#include "seqpack/attention/audit.hpp"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>

#include "seqpack/attention/pack_meta.hpp"
#include "seqpack/reference/errors.hpp"
#include "seqpack/reference/pack.hpp"

namespace seqpack::attention {

namespace {

namespace ref = seqpack::reference;
using I64 = std::vector<std::int64_t>;

// The marks a large earlier batch of the same kind leaves (graphs then pad to them).
constexpr std::int64_t kLargeMark = 256;

// Every way to split `samples` samples into per-sample split lists, each
// sample one of `shapes` (mode strings) with lengths 0..max_len.
void layouts_of(const std::vector<std::string>& shapes, std::int64_t samples, std::int64_t max_len, bool skip_empty,
                std::vector<ref::Layout>& out) {
  // Each sample: a shape and one length per split of it.
  std::vector<std::pair<std::string, I64>> choices;
  for (const std::string& shape : shapes) {
    I64 lens(shape.size(), 0);
    for (;;) {
      std::int64_t total = 0;
      for (const std::int64_t x : lens) total += x;
      if (!skip_empty || total > 0) choices.emplace_back(shape, lens);
      std::size_t k = 0;
      while (k < lens.size() && ++lens[k] > max_len) lens[k++] = 0;
      if (k == lens.size()) break;
    }
  }
  std::vector<std::size_t> pick(static_cast<std::size_t>(samples), 0);
  for (;;) {
    ref::Layout l;
    for (const std::size_t c : pick) {
      const auto& [shape, lens] = choices[c];
      std::int64_t total = 0;
      for (std::size_t j = 0; j < shape.size(); ++j) {
        l.split_lens.push_back(lens[j]);
        l.attn_modes.push_back(shape[j] == 'c' ? "causal" : "full");
        total += lens[j];
      }
      l.sample_lens.push_back(total);
    }
    l.und_token_indexes = ref::packer_und_tokens(l);
    out.push_back(std::move(l));
    std::size_t k = 0;
    while (k < pick.size() && ++pick[k] >= choices.size()) pick[k++] = 0;
    if (k == pick.size()) break;
  }
}

// The numbers of a finding's text as N, runs and lists of them as one N.
std::string elide_numbers(const std::string& text) {
  std::string out;
  const auto plural = [&]() {  // "row N" reads as "rows N"
    if (out.size() >= 5 && out.compare(out.size() - 4, 4, "row ") == 0 &&
        (out.size() == 4 || out[out.size() - 5] == ' '))
      out.insert(out.size() - 1, "s");
  };
  for (std::size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      plural();
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) ++i;
      if (out.size() < 1 || out.back() != 'N') out += 'N';
      continue;
    }
    // "N–N" (an en dash, 3 bytes) and "N, N" join the N before them.
    const bool dash = text.compare(i, 3, "\u2013") == 0;
    if (!out.empty() && out.back() == 'N' && (dash || text.compare(i, 2, ", ") == 0) &&
        i + (dash ? 3 : 2) < text.size() && std::isdigit(static_cast<unsigned char>(text[i + (dash ? 3 : 2)])) != 0) {
      i += dash ? 3 : 2;
      continue;
    }
    out += text[i++];
  }
  return out;
}

}  // namespace

std::string layout_text(const ref::Layout& l) {
  std::string s = "samples [";
  for (std::size_t i = 0; i < l.sample_lens.size(); ++i) s += (i ? " " : "") + std::to_string(l.sample_lens[i]);
  s += "] splits [";
  for (std::size_t i = 0; i < l.split_lens.size(); ++i)
    s += (i ? " " : "") + std::string(l.attn_modes[i] == "causal" ? "c" : "f") + std::to_string(l.split_lens[i]);
  return s + "]";
}

std::vector<AuditCase> audit_cases(const AuditScope& scope) {
  std::vector<ref::Layout> packer, beyond;
  for (std::int64_t samples = 1; samples <= 2; ++samples) {
    layouts_of({"cf"}, samples, scope.max_len, true, packer);
    layouts_of({"f"}, samples, scope.max_len, true, packer);
  }
  if (scope.beyond_packer) {
    // Splits the packer never makes: a sample's modes in another order or
    // number (one row each keeps the scope small; 0 rows are the packer's).
    for (std::int64_t samples = 1; samples <= 2; ++samples)
      layouts_of({"c", "fc", "ff", "cff", "fcf", "cfc"}, samples, 1, true, beyond);
  }
  std::vector<AuditCase> out;
  const auto add = [&](const ref::Layout& l, const ref::Options& o, const ref::GraphMarks& marks, const char* graphs) {
    std::int64_t rows = 0;
    for (const std::int64_t x : l.sample_lens) rows += x;
    ref::GraphMarks m = marks;
    try {
      ref::build_pack(ref::Rows(static_cast<std::size_t>(rows), 4), l, o, m);
    } catch (const ref::Error&) {
      return;  // refused (the original refuses it too)
    }
    std::ostringstream t;
    t << layout_text(l) << " align " << o.causal_seq_alignment << "/" << o.full_seq_alignment << " cp "
      << o.cp_world_size << " graphs " << graphs << (o.pad_segment_only_when_padded ? " pso" : "");
    out.push_back({l, o, marks, t.str(), rows, false});
  };
  for (const bool is_beyond : {false, true}) {
    for (const ref::Layout& l : is_beyond ? beyond : packer) {
      for (const std::int64_t ca : scope.alignments)
        for (const std::int64_t fa : scope.alignments)
          for (const std::int64_t cp : scope.cp_sizes)
            for (int graphs = 0; graphs < 3; ++graphs)
              for (const bool pso : {false, true}) {
                if (is_beyond && (ca != fa || (ca != 1 && ca != 2))) continue;  // a smaller scope beyond the packer
                ref::Options o;
                o.causal_seq_alignment = ca;
                o.full_seq_alignment = fa;
                o.cp_world_size = cp;
                o.pad_for_cuda_graphs = graphs > 0;
                o.pad_segment_only_when_padded = pso;
                ref::GraphMarks marks;
                if (graphs == 2) marks = {kLargeMark, kLargeMark, kLargeMark, kLargeMark};
                add(l, o, marks, graphs == 0 ? "off" : graphs == 1 ? "on" : "after-large");
                if (!out.empty()) out.back().beyond_packer = is_beyond;
              }
    }
  }
  return out;
}

AuditResult audit_original(const AuditScope& scope, const std::vector<ConsumerOptions>& profiles) {
  return audit_original(audit_cases(scope), profiles);
}

AuditResult audit_original(const std::vector<AuditCase>& cases, const std::vector<ConsumerOptions>& profiles) {
  AuditResult result;
  result.profiles = profiles;
  result.cases = static_cast<std::int64_t>(cases.size());
  // Each case's worst finding per branch and profile, judged on every core;
  // merged in case order below, so the result does not depend on the threads.
  struct Worst {
    std::size_t profile;
    std::string branch, text;
    Severity severity;
  };
  std::vector<std::vector<Worst>> per_case(cases.size());
  const auto judge_range = [&](std::size_t begin, std::size_t step) {
    for (std::size_t i = begin; i < cases.size(); i += step) {
      const AuditCase& c = cases[i];
      ref::GraphMarks marks = c.marks;
      const ref::Pack pack =
          ref::build_pack(ref::Rows(static_cast<std::size_t>(c.rows), 4), c.layout, c.options, marks);
      ConsumerInput in;
      in.meta = from_reference(pack, c.options);
      in.cp_world_size = c.options.cp_world_size;
      for (std::size_t p = 0; p < profiles.size(); ++p) {
        const ConsumerReport r = judge_consumer(in, in, profiles[p]);
        std::map<std::string, const Finding*> worst;  // each branch's first of its worst severity
        for (const Finding& f : r.findings) {
          const Finding*& w = worst[f.branch];
          if (!w || f.severity > w->severity) w = &f;
        }
        for (const auto& [branch, f] : worst) per_case[i].push_back({p, branch, f->text, f->severity});
      }
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(judge_range, t, threads);
  judge_range(0, threads);
  for (std::thread& t : pool) t.join();
  // (profile, beyond, -severity) -> the cases whose worst finding it is
  std::map<std::tuple<std::size_t, bool, int>, AuditWorst> worst;
  // (profile, branch, severity, what) -> class
  std::map<std::tuple<std::size_t, bool, std::string, int, std::string>, AuditClass> classes;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const AuditCase& c = cases[i];
    if (!c.beyond_packer) ++result.packer_cases;
    for (std::size_t p = 0; p < profiles.size(); ++p) {
      Severity s = Severity::metadata_only;
      for (const Worst& w : per_case[i])
        if (w.profile == p && w.severity > s) s = w.severity;
      AuditWorst& k = worst[{p, c.beyond_packer, -static_cast<int>(s)}];
      if (k.cases == 0 || c.rows < k.smallest_rows) {
        k.profile = describe(profiles[p]);
        k.beyond_packer = c.beyond_packer;
        k.severity = s;
        k.smallest = c.text;
        k.smallest_rows = c.rows;
      }
      ++k.cases;
    }
    for (const Worst& w : per_case[i]) {
      const std::string what = elide_numbers(w.text);
      AuditClass& k = classes[{w.profile, c.beyond_packer, w.branch, -static_cast<int>(w.severity), what}];
      if (k.cases == 0 || c.rows < k.smallest_rows) {
        k.beyond_packer = c.beyond_packer;
        k.profile = describe(profiles[w.profile]);
        k.branch = w.branch;
        k.severity = w.severity;
        k.what = what;
        k.smallest = c.text;
        k.smallest_rows = c.rows;
        k.example = w.text;
      }
      ++k.cases;
    }
  }
  for (auto& [key, k] : worst) result.worst.push_back(k);
  for (auto& [key, k] : classes) result.classes.push_back(k);
  // By profile (in the order given), worst first, then the most cases.
  std::stable_sort(result.classes.begin(), result.classes.end(), [&](const AuditClass& a, const AuditClass& b) {
    const auto index = [&](const std::string& name) {
      for (std::size_t p = 0; p < profiles.size(); ++p)
        if (describe(profiles[p]) == name) return p;
      return profiles.size();
    };
    return std::make_tuple(index(a.profile), a.beyond_packer, -static_cast<int>(a.severity), -a.cases) <
           std::make_tuple(index(b.profile), b.beyond_packer, -static_cast<int>(b.severity), -b.cases);
  });
  return result;
}

std::string format_audit(const AuditResult& result) {
  std::ostringstream s;
  const std::int64_t beyond = result.cases - result.packer_cases;
  s << "audit: " << result.cases << " layouts the original accepts (" << result.packer_cases << " of the packer's, "
    << beyond << " beyond it), each built by the reference and judged under " << result.profiles.size()
    << (result.profiles.size() == 1 ? " profile" : " profiles") << "\n";
  // The map: how many cases each severity is the worst of, per profile.
  s << "\nworst finding per case (the findings map):\n";
  for (const AuditWorst& w : result.worst) {
    const std::int64_t of = w.beyond_packer ? beyond : result.packer_cases;
    s << "  " << w.profile << (w.beyond_packer ? ", beyond the packer's: " : ", the packer's: ")
      << to_string(w.severity) << " " << w.cases << " of " << of << " (" << std::fixed << std::setprecision(1)
      << (of > 0 ? 100.0 * static_cast<double>(w.cases) / static_cast<double>(of) : 0.0)
      << "%); smallest: " << w.smallest << "\n";
  }
  std::string heading;
  for (const AuditClass& k : result.classes) {
    const std::string h = k.profile + (k.beyond_packer ? ", beyond the packer's layouts" : ", the packer's layouts");
    if (h != heading) {
      heading = h;
      s << "\n== " << heading << "\n";
    }
    s << to_string(k.severity) << " " << k.branch << ": " << k.cases << " of "
      << (k.beyond_packer ? beyond : result.packer_cases) << ": " << k.what << "\n  smallest: " << k.smallest << "\n";
  }
  return s.str();
}

}  // namespace seqpack::attention
