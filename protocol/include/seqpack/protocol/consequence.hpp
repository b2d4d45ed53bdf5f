// What a failure costs downstream: the consequence oracle (seqpack::attention)
// run on the port's own pack and on the reference's, from the result lines a
// checker already holds (no new view). `seqpack conform` prints the verdict's
// line under each failure group and its severity in the summary, the JSON
// report and JUnit (conformance/src/report.cpp); the Python package's
// in-process route puts it in its failure message (python/src/core.cpp).
// Neighbour: compare.cpp (read_answer_pair, first_difference).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "seqpack/attention/consequences.hpp"
#include "seqpack/attention/consumer.hpp"
#include "seqpack/attention/pack_meta.hpp"
#include "seqpack/protocol/case.hpp"

namespace seqpack::protocol {

/// A result's `pack` (wire field names, runs already expanded) as the
/// attention passes read it, with the case's alignments. Throws
/// std::invalid_argument naming the field that is missing or not an integer
/// array.
attention::PackMeta pack_meta_from_json(const nlohmann::json& pack, const Case& c);

/// What a consumer reads of a result (`result`: its JSON, runs expanded): the
/// pack and the views the answer carries (all_seq_padded, getters, cp_shards,
/// dtypes), with the case's cp size. Throws std::invalid_argument naming the
/// field that is missing or of the wrong type.
attention::ConsumerInput consumer_input_from_json(const nlohmann::json& result, const Case& c);

/// The consequence of a failure under `consumer`: `expected` is the
/// reference's result line, `actual` the port's answer (empty when it crashed
/// or hung). Refusals either way, crashes and unreadable answers are
/// `crash-or-refusal`; two packs are judged by attention::compare_consumer
/// (what the port's pack does that the reference's does not); a session is
/// judged at its first step whose result differs (`steps`: the session's
/// cases; empty for a single case `c`). Never throws.
attention::Verdict consequence_of(const Case& c, const std::vector<Case>& steps, const std::string& expected,
                                  const std::string& actual, const attention::ConsumerOptions& consumer = {});

}  // namespace seqpack::protocol
