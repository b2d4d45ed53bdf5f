// The audit of the original under every consumer profile: every layout of a
// scope built by the reference (the spec as code) and judged by
// consumer_judge.hpp, its findings grouped by class with the number of
// layouts each affects and the smallest of them. `seqpack audit` prints it;
// reference/README.md's findings table and map are its summary;
// tests/attention/audit_test.cpp checks the map's counts, and
// ConsumerJudge.Finding* (consumer_test.cpp) pins each finding on its
// smallest layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqpack/attention/consumer_judge.hpp"
#include "seqpack/reference/types.hpp"

namespace seqpack::attention {

/// One case of the audit: a layout and options the original accepts, and the
/// CUDA-graph marks before the build.
struct AuditCase {
  reference::Layout layout;
  reference::Options options;
  reference::GraphMarks marks;
  std::string text;  ///< "samples [2 2] splits [c1 f1 c1 f1] align 4/4 cp 1 graphs off"
  std::int64_t rows = 0;
  bool beyond_packer = false;  ///< a layout the framework's packer does not make
};

/// The audit's scope: the packer's layouts (every sample [causal, full], or
/// every sample [full]; 1 or 2 samples; split lengths 0 to max_len) under
/// every option value below, and, with `beyond_packer`, layouts the packer
/// does not make (up to 3 splits per sample of either mode).
struct AuditScope {
  std::int64_t max_len = 3;
  std::vector<std::int64_t> alignments = {1, 2, 4};
  std::vector<std::int64_t> cp_sizes = {1, 2, 3};
  bool beyond_packer = true;
};

/// Every case of `scope` (the reference refuses none of them; a layout it
/// refuses is left out, as the original refuses it too).
std::vector<AuditCase> audit_cases(const AuditScope& scope);

/// A class of findings under one profile: the worst finding of a branch, its
/// numbers elided ("full rows N (padding)").
struct AuditClass {
  std::string profile;  ///< "cosmos-5eee9ed on fa3"
  bool beyond_packer = false;
  std::string branch;
  Severity severity = Severity::metadata_only;
  std::string what;
  std::int64_t cases = 0;  ///< layouts that show it
  std::string smallest;    ///< the first of the fewest rows
  std::int64_t smallest_rows = 0;
  std::string example;  ///< its finding's text on that layout
};

/// The cases whose worst finding under a profile has one severity (the
/// findings map: how much of a scope each severity covers).
struct AuditWorst {
  std::string profile;
  bool beyond_packer = false;
  Severity severity = Severity::metadata_only;  ///< metadata-only: no finding worse (or none)
  std::int64_t cases = 0;
  std::string smallest;  ///< the first of the fewest rows
  std::int64_t smallest_rows = 0;
};

struct AuditResult {
  std::int64_t cases = 0;
  std::int64_t packer_cases = 0;  ///< of which the packer's layouts
  std::vector<ConsumerOptions> profiles;
  std::vector<AuditClass> classes;  ///< by profile, then severity (worst first), then count
  std::vector<AuditWorst> worst;    ///< by profile, packer's then beyond, severity worst first
};

/// Judges every case of `scope` under each of `profiles`.
AuditResult audit_original(const AuditScope& scope, const std::vector<ConsumerOptions>& profiles);

/// Judges `cases` (each one the reference builds) under each of `profiles`:
/// `seqpack audit --scope S` gives it the valid cases of a bounded-exhaustive
/// scope (seqpack/properties/exhaustive.hpp).
AuditResult audit_original(const std::vector<AuditCase>& cases, const std::vector<ConsumerOptions>& profiles);

/// "samples [2 2] splits [c1 f1 c1 f1]".
std::string layout_text(const reference::Layout& layout);

/// The result as text, one class per line under its profile.
std::string format_audit(const AuditResult& result);

}  // namespace seqpack::attention
