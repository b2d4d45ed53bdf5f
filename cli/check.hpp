// `seqpack check`: the main job. For now: the reference over the worked
// examples of NOTES.md, printed readably, each with its self-checks.
#pragma once

#include <ostream>
#include <string>

namespace seqpack::cli {

/// Runs the worked examples (all, or the one named `only`), printing each pack
/// and its self-checks. Returns the number of failed checks.
int run_check(std::ostream& out, const std::string& only);

}  // namespace seqpack::cli
