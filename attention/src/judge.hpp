// Internal to the library: the verdict wording that consequences.cpp applies
// to each pass and report, defined in report.cpp.
#pragma once

#include "seqpack/attention/consequences.hpp"

namespace seqpack::attention {

/// Sets a pass's severity and its one-clause consequence from its findings.
void judge_pass(PassReport& report);
/// Sets a report's severity (its worst pass's) and its "consequence: ..." summary.
void judge_report(Report& report);

}  // namespace seqpack::attention
