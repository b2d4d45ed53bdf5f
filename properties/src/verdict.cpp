// In-process property failures that read like the runner's (verdict.hpp).
#include "seqpack/properties/verdict.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>

#include "seqpack/protocol/render.hpp"

namespace seqpack::properties {
namespace {

namespace ref = seqpack::reference;
using Clock = std::chrono::steady_clock;

// The property running now (check_property is not reentrant).
struct Run {
  std::optional<Case> current;     // the case the body recorded
  std::optional<Case> failing;     // the last failing case: the shrunk one at the end
  std::string failing_difference;  // and its message
  std::string pending_difference;  // fail()'s message, until the failure is recorded
  std::optional<Clock::time_point> first_failure;
  bool stopped = false;
};
Run* g_run = nullptr;

double env_seconds(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*end != '\0' || !(v >= 0 && v <= 86400)) {
    std::fprintf(stderr, "%s: expected seconds in [0, 86400], got \"%s\"; using %g\n", name, text, fallback);
    return fallback;
  }
  return v;
}

std::string failure_dir() {
  const char* env = std::getenv("SEQPACK_FAILURE_DIR");
  return env && *env ? env : "seqpack-failures";
}

// The bytes of a row from `from`, at most 16, as hex.
std::string hex(const std::byte* row, std::size_t width, std::size_t from) {
  std::ostringstream os;
  const std::size_t end = std::min(width, from + 16);
  for (std::size_t b = from; b < end; ++b) {
    os << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(static_cast<std::uint8_t>(row[b]));
  }
  if (end < width) os << "..";
  return os.str();
}

// Padding rows are all zero: said, since the bytes shown may be a part.
std::string zero_note(const std::byte* row, std::size_t width) {
  for (std::size_t b = 0; b < width; ++b) {
    if (row[b] != std::byte{0}) return "";
  }
  return " (a zero row)";
}

void record_failure(Run& run, const std::string& message) {
  run.failing = run.current;
  run.failing_difference = !run.pending_difference.empty() ? run.pending_difference : message;
  run.pending_difference.clear();
  if (!run.first_failure) run.first_failure = Clock::now();
}

std::string file_name(const std::string& name) {
  std::string s = name;
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-' && ch != '_') ch = '_';
  }
  return s;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<std::int64_t> seeded_values(std::size_t n) {
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  std::vector<std::int64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int64_t>(splitmix64(seed ^ splitmix64(i)));
  return v;
}

std::vector<std::uint8_t> seeded_bytes(std::size_t n) {
  static constexpr std::uint16_t kSpecial[] = {0x8000, 0x0000, 0x7fc0, 0x7e00, 0x0001, 0xffff, 0x7c00, 0xff80};
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  std::vector<std::uint8_t> b(n);
  for (std::size_t lane = 0; 2 * lane < n; ++lane) {
    const std::uint64_t r = splitmix64(seed ^ splitmix64(lane));
    const auto bits = (r >> 61) == 0 ? kSpecial[(r >> 8) & 7] : static_cast<std::uint16_t>(r);
    b[2 * lane] = static_cast<std::uint8_t>(bits & 0xff);
    if (2 * lane + 1 < n) b[2 * lane + 1] = static_cast<std::uint8_t>(bits >> 8);
  }
  return b;
}

const Case& track(const Case& c) {
  if (g_run) g_run->current = c;
  return c;
}

std::string difference(const std::string& field, const ref::Rows& got, const ref::Rows& expected) {
  if (got == expected) return {};
  std::ostringstream os;
  if (got.rows() != expected.rows() || got.row_bytes() != expected.row_bytes()) {
    os << field << ": expected " << expected.rows() << " rows of " << expected.row_bytes() << " bytes, got "
       << got.rows() << " rows of " << got.row_bytes() << " bytes";
    return os.str();
  }
  const std::size_t width = got.row_bytes();
  for (std::size_t r = 0; r < got.rows(); ++r) {
    for (std::size_t b = 0; b < width; ++b) {
      if (got.row(r)[b] == expected.row(r)[b]) continue;
      const std::size_t from = b - b % 16;
      os << field << "[" << r << "]: row " << r << " differs at byte " << b << ": expected "
         << hex(expected.row(r), width, from) << zero_note(expected.row(r), width) << ", got "
         << hex(got.row(r), width, from) << zero_note(got.row(r), width)
         << (from ? " (bytes from " + std::to_string(from) + ")" : "");
      return os.str();
    }
  }
  return field + ": the rows differ";  // unreachable: equal shapes and bytes compare equal
}

std::string difference(const std::string& field, const ref::PositionIds& got, const ref::PositionIds& expected) {
  if (got == expected) return {};
  if (got.two_dimensional != expected.two_dimensional || got.axes != expected.axes || got.len != expected.len) {
    return field + ": expected " + rc::toString(expected) + ", got " + rc::toString(got);
  }
  return difference(field + ".values", got.values, expected.values);
}

void fail(const std::string& message) {
  if (g_run) g_run->pending_difference = message;
  RC_FAIL(message);
}

bool check_property(const std::string& name, const std::function<void()>& body, std::ostream& out) {
  return check_property(name, body, out, nullptr);
}

bool check_property(const std::string& name, const std::function<void()>& body, std::ostream& out,
                    std::optional<PropertyFailure>* failure) {
  const double budget = env_seconds("SEQPACK_SHRINK_SECONDS", 20);
  Run run;
  Run* const outer = g_run;
  g_run = &run;
  const auto property = [&] {
    // Past the shrink budget every candidate passes at once, unrun: RapidCheck
    // then keeps the smallest failing case found so far.
    if (run.first_failure && std::chrono::duration<double>(Clock::now() - *run.first_failure).count() > budget) {
      run.stopped = true;
      return;
    }
    run.current.reset();
    run.pending_difference.clear();
    try {
      body();
    } catch (const rc::detail::CaseResult& r) {
      if (r.type == rc::detail::CaseResult::Type::Failure) record_failure(run, r.description);
      throw;
    } catch (const std::exception& e) {
      record_failure(run, std::string("exception: ") + e.what());
      throw;
    } catch (...) {
      record_failure(run, "an exception of an unknown type");
      throw;
    }
  };
  rc::detail::TestMetadata metadata;
  metadata.id = name;
  metadata.description = name;
  const rc::detail::TestParams params = rc::detail::configuration().testParams;
  struct Quiet : rc::detail::TestListener {
    std::size_t shrinks = 0;
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override { shrinks += accepted; }
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  } listener;
  const rc::detail::TestResult result = rc::detail::checkTestable(property, metadata, params, listener);
  g_run = outer;

  rc::detail::FailureResult failed;
  if (result.match(failed)) {
    PropertyFailure f;
    f.name = name;
    f.cases_passed = failed.numSuccess;
    f.shrinks = listener.shrinks;
    f.shrinking_stopped = run.stopped;
    f.shrink_seconds = run.first_failure ? std::chrono::duration<double>(Clock::now() - *run.first_failure).count() : 0;
    f.difference = run.failing_difference.empty() ? failed.description : run.failing_difference;
    out << name << ": FAIL after " << f.cases_passed << " passing cases; shrunk " << f.shrinks << " times in "
        << std::fixed << std::setprecision(1) << f.shrink_seconds << " s"
        << (f.shrinking_stopped ? " (shrinking stopped at SEQPACK_SHRINK_SECONDS=" + rc::toString(budget) + ")" : "")
        << "\n  difference: " << f.difference << "\n";
    if (run.failing) {
      f.case_json = to_json(*run.failing, file_name(name));
      std::ostringstream rendering;
      protocol::render_case_body(rendering, *run.failing);
      f.rendering = rendering.str();
      std::error_code ec;
      std::filesystem::create_directories(failure_dir(), ec);
      f.case_file = failure_dir() + "/" + file_name(name) + ".json";
      std::ofstream file(f.case_file);
      file << f.case_json << "\n";
      if (!file) f.case_file = "(not written: " + f.case_file + " is not writable)";
      out << "  case: " << f.case_json << "\n  the reference's pack of that case:\n"
          << f.rendering << "  case file: " << f.case_file << "\n    replay: seqpack replay " << f.case_file
          << " --port CMD   (or property_replay " << f.case_file << ")\n";
    } else {
      out << "  (the property recorded no case: it fails before track())\n"
          << "  RapidCheck's counterexample:\n";
      for (const auto& [type, value] : failed.counterExample) out << "    " << type << ": " << value << "\n";
    }
    out << "  reproduce the run: RC_PARAMS=\"seed=" << params.seed << "\" (same binary and test filter)\n";
    if (failure) *failure = f;
    return false;
  }
  rc::detail::GaveUpResult gave_up;
  if (result.match(gave_up)) {
    out << name << ": gave up after " << gave_up.numSuccess << " cases: " << gave_up.description << "\n";
    return false;
  }
  rc::detail::Error error;
  if (result.match(error)) {
    out << name << ": RapidCheck error: " << error.description << "\n";
    return false;
  }
  return true;
}

}  // namespace seqpack::properties
