// The verdict commands: replay saved cases against a port, render a case
// readably, merge sharded reports, and the --shard option.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "seqpack/attention/consumer.hpp"
#include "seqpack/protocol/case.hpp"

namespace seqpack::cli {

/// Parses `I/N` (0 <= I < N <= 100000); false on anything else.
bool parse_shard(const std::string& text, std::int64_t* index, std::int64_t* count);

/// Prints a case readably: its id, layout and options, then the reference's
/// pack built from self-naming rows (each stream as the packed row ids it
/// holds, '.' for padding), or its error class. Cases whose padded streams
/// pass 2^20 rows are described, not built.
void render_case(std::ostream& out, const protocol::Case& c, const std::string& id);

/// `seqpack oracle --case FILE`: the rendering, then the result line.
int run_oracle_case(const std::string& path, std::ostream& out, std::ostream& err);

/// `seqpack replay CASE.json|DIR --port CMD`: each case file (a directory's
/// *.json, sorted) against the port: PASS, or FAIL with the first difference
/// and its explanation and its consequence under `consumer`; then the
/// reference's rendering. 0 when every case agrees, 1 when one does not, 2 on
/// setup errors.
int run_replay(const std::vector<std::string>& paths, const std::string& port, double timeout_s, bool offer_runs,
               const attention::ConsumerOptions& consumer, std::ostream& out, std::ostream& err);

/// `seqpack report merge A.json B.json ...`: one summary of shards' JSON
/// reports (`conform --report`), optionally written to `out_file`. 0 when
/// the merged run has no unexpected failure and no known failure passes
/// everywhere, 1 otherwise, 2 on unreadable reports.
int run_report_merge(const std::vector<std::string>& files, const std::string& out_file, std::ostream& out,
                     std::ostream& err);

}  // namespace seqpack::cli
