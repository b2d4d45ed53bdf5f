// run_exhaustive (exhaustive.hpp): the scope's cases split over threads by
// index, each thread's findings merged in case order, so that the result is
// the same at any thread count.
#include "seqpack/conformance/exhaustive.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <thread>

#include "seqpack/attention/consequences.hpp"
#include "seqpack/properties/catalogue.hpp"
#include "seqpack/protocol/consequence.hpp"

namespace seqpack::conformance {

namespace {

namespace sp = seqpack::protocol;
namespace props = seqpack::properties;

// A difference's group: the engine and the path of the first differing field
// ("pack.causal_rows[3]: expected ..." is grouped as "pack.causal_rows").
std::string difference_key(const std::string& engine, const std::string& diff) {
  std::string field = diff.substr(0, diff.find(':'));
  const std::size_t bracket = field.find('[');
  if (bracket != std::string::npos) field.erase(bracket);
  return engine + ": " + field;
}

struct Seen {
  std::string check, message;
  std::vector<std::string> severities;
};

struct Partial {
  std::map<std::string, std::int64_t> classes;
  // check -> (count, first index, message, severities) within this thread
  std::map<std::string, ExhaustiveFailure> failures;
  std::int64_t cases = 0;
};

void record(Partial& p, std::int64_t index, const sp::Case& c, Seen seen) {
  ExhaustiveFailure& f = p.failures[seen.check];
  if (f.cases++ == 0 || index < f.first) {
    f.check = seen.check;
    f.first = index;
    f.smallest = c;
    f.message = std::move(seen.message);
    f.severities = std::move(seen.severities);
  }
}

void run_case(const ExhaustiveOptions& o, std::int64_t index, const sp::Case& c, Partial& p) {
  ++p.classes[props::case_class(c)];
  ++p.cases;
  if (o.catalogue) {
    const props::Subject subject(c);
    for (const std::string& v : props::check_all(subject)) {
      const std::size_t colon = v.find(": ");
      record(p, index, c,
             {"catalogue " + v.substr(0, colon), colon == std::string::npos ? v : v.substr(colon + 2), {}});
    }
  }
  if (o.engines.empty()) return;
  const std::string id = "x" + std::to_string(index);
  for (const sp::Implementation* engine : o.engines) {
    const std::vector<std::string> views = sp::views_for(c, engine->views());
    const std::string expected = sp::result_line(c, id, views, sp::Encoding::plain);
    const std::string actual = sp::result_line(*engine, c, id, views, sp::Encoding::plain);
    const std::string diff = sp::first_difference(expected, actual, views);
    if (diff.empty()) continue;
    Seen seen{difference_key(engine->name(), diff), diff, {}};
    for (const attention::ConsumerOptions& consumer : o.consumers) {
      const attention::Verdict v = sp::consequence_of(c, {}, expected, actual, consumer);
      seen.severities.push_back(attention::describe(consumer) + ": " + attention::to_string(v.severity) + " (" +
                                v.line + ")");
    }
    record(p, index, c, std::move(seen));
  }
}

}  // namespace

ExhaustiveResult run_exhaustive(const ExhaustiveOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const props::Enumeration all(o.scope);
  std::vector<std::int64_t> indices;
  for (std::int64_t i = o.shard_index; i < all.size(); i += std::max<std::int64_t>(o.shard_count, 1)) {
    if (o.limit > 0 && static_cast<std::int64_t>(indices.size()) >= o.limit) break;
    indices.push_back(i);
  }
  const std::size_t threads = static_cast<std::size_t>(std::clamp(o.threads, 1, 64));
  std::vector<Partial> partials(threads);
  const auto work = [&](std::size_t t) {
    for (std::size_t k = t; k < indices.size(); k += threads) run_case(o, indices[k], all.at(indices[k]), partials[t]);
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();

  ExhaustiveResult r;
  r.scope_cases = all.size();
  r.layouts = all.layouts();
  r.packer_layouts = all.packer_layouts();
  r.crossings = all.option_crossings();
  std::map<std::string, ExhaustiveFailure> merged;
  for (Partial& p : partials) {
    r.cases += p.cases;
    for (const auto& [k, n] : p.classes) r.classes[k] += n;
    for (auto& [check, f] : p.failures) {
      ExhaustiveFailure& m = merged[check];
      const std::int64_t count = m.cases + f.cases;
      if (m.cases == 0 || f.first < m.first) m = std::move(f);
      m.cases = count;
    }
  }
  for (auto& [check, f] : merged) r.failures.push_back(std::move(f));
  std::sort(r.failures.begin(), r.failures.end(),
            [](const ExhaustiveFailure& a, const ExhaustiveFailure& b) { return a.first < b.first; });
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

void print_exhaustive(const ExhaustiveOptions& o, const ExhaustiveResult& r, std::ostream& out) {
  out << "exhaustive: scope " << o.scope.name << ", " << r.scope_cases << " cases (" << r.layouts << " layouts, "
      << r.packer_layouts << " of them the packer's; " << r.crossings << " crossings of the options each)";
  if (o.shard_count > 1) out << "; shard " << o.shard_index << "/" << o.shard_count;
  out << "\nran " << r.cases << (r.cases == 1 ? " case" : " cases");
  if (o.limit > 0) out << " (--limit " << o.limit << ": the shard's first)";
  out << " in " << std::lround(r.seconds * 10) / 10.0 << " s:";
  const char* sep = " ";
  for (const auto& [k, n] : r.classes) {
    out << sep << k << " " << n;
    sep = ", ";
  }
  out << "\nchecks: " << (o.catalogue ? "the property catalogue on the reference" : "no catalogue");
  for (const sp::Implementation* e : o.engines) out << "; " << e->name() << " against the reference, every view";
  out << "\n";
  for (const ExhaustiveFailure& f : r.failures) {
    out << "FAIL " << f.check << ": " << f.cases << " case" << (f.cases == 1 ? "" : "s") << "; the smallest, case "
        << f.first << ":\n  " << sp::to_json(f.smallest, "x" + std::to_string(f.first)) << "\n  " << f.message << "\n";
    for (const std::string& s : f.severities) out << "  consequence [" << s << "]\n";
  }
  if (r.failures.empty()) {
    out << "PASS: every check held on every case run" << (o.limit > 0 ? " (a part of the scope: --limit)" : "") << "\n";
  } else {
    out << "exhaustive: " << r.failures.size() << " failing check" << (r.failures.size() == 1 ? "" : "s") << "\n";
  }
}

}  // namespace seqpack::conformance
