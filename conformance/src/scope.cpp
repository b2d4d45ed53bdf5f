// Capability scoping (PROTOCOL.md, "Features"), as test262 scopes its
// tests by `features`: a port declares the case options it supports in its
// hello (and its views, as before); the runner sends only cases within them,
// says what it skipped and why, and prints what was checked per feature.
// An undeclared feature is never a pass: it is "not checked", and
// --require-feature makes that a failure.
#include <algorithm>

#include "runner_internal.hpp"
#include "seqpack/conformance/port.hpp"

namespace seqpack::conformance {

// The runner speaks the protocol's vocabulary (seqpack/protocol/).
using namespace seqpack::protocol;  // NOLINT(google-build-using-namespace)
namespace detail {
namespace {

// Whether the case sets `name` away from its default (cp 1, alignments 1,
// the booleans false): a case that does not set it runs on any port.
bool uses(const sp::Case& c, const std::string& name) {
  const auto& o = c.options;
  if (name == "cp_world_size") return o.cp_world_size != 1;
  if (name == "causal_seq_alignment") return o.causal_seq_alignment != 1;
  if (name == "full_seq_alignment") return o.full_seq_alignment != 1;
  if (name == "pad_for_cuda_graphs") return o.pad_for_cuda_graphs;
  if (name == "is_image_batch") return o.is_image_batch;
  return o.pad_segment_only_when_padded;
}

void reset(sp::Case& c, const std::string& name) {
  auto& o = c.options;
  if (name == "cp_world_size") o.cp_world_size = 1;
  if (name == "causal_seq_alignment") o.causal_seq_alignment = 1;
  if (name == "full_seq_alignment") o.full_seq_alignment = 1;
  if (name == "pad_for_cuda_graphs") o.pad_for_cuda_graphs = false;
  if (name == "is_image_batch") o.is_image_batch = false;
  if (name == "pad_segment_only_when_padded") o.pad_segment_only_when_padded = false;
}

std::vector<const sp::Case*> cases_of(const Pending& p) {
  std::vector<const sp::Case*> out;
  if (p.steps.empty()) out.push_back(&p.c);
  for (const auto& c : p.steps) out.push_back(&c);
  return out;
}

}  // namespace

bool Runner::in_scope(Pending& p) {
  if (undeclared_options_.empty()) return true;
  std::vector<std::string> used;
  for (const std::string& name : undeclared_options_) {
    for (const sp::Case* c : cases_of(p)) {
      if (uses(*c, name)) {
        used.push_back(name);
        break;
      }
    }
  }
  if (used.empty()) return true;
  bool planted = false;
  for (const sp::Case* c : cases_of(p)) planted = planted || !c->expect_error.empty();
  if (p.vector || planted) {
    for (const auto& name : used) ++skipped_["option " + name];
    return false;
  }
  for (const auto& name : used) {
    ++projected_["option " + name];
    reset(p.c, name);
    for (auto& c : p.steps) reset(c, name);
  }
  return true;
}

void Runner::count_features(const Pending& p, bool failing) {
  const auto add = [&](const std::string& feature) {
    auto& [checked, failed] = features_[feature];
    ++checked;
    failed += failing ? 1 : 0;
  };
  for (const char* name : kCaseOptions) {
    for (const sp::Case* c : cases_of(p)) {
      if (uses(*c, name)) {
        add(std::string("option ") + name);
        break;
      }
    }
  }
  for (const auto& v : p.views) add("view " + v);
  add(std::string("profile ") + (p.vector                  ? "vectors"
                                 : p.id.rfind('x', 0) == 0 ? "exhaustive"
                                 : p.id.rfind('p', 0) == 0 ? "packer"
                                                           : "strict"));
}

bool Runner::report_features() {
  std::string line;
  std::string kind;
  for (const auto& [feature, counts] : features_) {
    const std::string k = feature.substr(0, feature.find(' '));
    line += (k != kind ? (kind.empty() ? "" : "; ") + k + "s " : ", ") + feature.substr(k.size() + 1) + " " +
            std::to_string(counts.first) + "/" + std::to_string(counts.second);
    kind = k;
  }
  if (!line.empty()) out_ << "features (cases checked/failing): " << line << "\n";
  std::vector<std::string> unchecked;
  for (const std::string& name : undeclared_options_) {
    const std::string feature = "option " + name;
    const auto s = skipped_.find(feature), r = projected_.find(feature);
    out_ << "not checked: " << feature << " (not declared; " << (s == skipped_.end() ? 0 : s->second)
         << " vectors or planted cases skipped, " << (r == projected_.end() ? 0 : r->second)
         << " random cases run without it)\n";
    unchecked.push_back("option:" + name);
  }
  for (const std::string& v : oracle_views()) {
    if (std::find(port_.views().begin(), port_.views().end(), v) != port_.views().end()) continue;
    out_ << "not checked: view " << v << " (not declared)\n";
    unchecked.push_back("view:" + v);
  }
  bool ok = true;
  for (const std::string& f : o_.require_features) {
    if (std::find(unchecked.begin(), unchecked.end(), f) == unchecked.end()) continue;
    out_ << "REQUIRED feature not checked: " << f << " (--require-feature)\n";
    ok = false;
  }
  return ok;
}

}  // namespace detail
}  // namespace seqpack::conformance
