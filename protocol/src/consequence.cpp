// The consequence of a failure group (consequence.hpp): reads both result
// lines through the protocol's limits, turns each pack into an
// attention::PackMeta and lets attention::compare judge the port's pack
// against the reference's. Neighbour: compare.cpp reads the lines.
#include "seqpack/protocol/consequence.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/protocol.hpp"

namespace seqpack::protocol {
namespace {

using json = nlohmann::json;

std::vector<std::int64_t> ints(const json& pack, const char* field, const char* where) {
  const auto it = pack.find(field);
  if (it == pack.end() || !it->is_array()) {
    throw std::invalid_argument(std::string(where) + field + ": missing or not an array");
  }
  std::vector<std::int64_t> v;
  v.reserve(it->size());
  for (const json& x : *it) {
    if (!x.is_number_integer()) throw std::invalid_argument(std::string(where) + field + ": not an integer array");
    v.push_back(x.get<std::int64_t>());
  }
  return v;
}

std::int64_t integer(const json& pack, const char* field, const char* where) {
  const auto it = pack.find(field);
  if (it == pack.end() || !it->is_number_integer()) {
    throw std::invalid_argument(std::string(where) + field + ": missing or not an integer");
  }
  return it->get<std::int64_t>();
}

attention::Verdict refusal(const std::string& what) {
  return {attention::Severity::crash_or_refusal, "consequence: " + what};
}

const json* member(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

attention::Verdict judge_result(const Case& c, const json& want, const json& got) {
  const json* w_ok = member(want, "ok");
  const json* g_ok = member(got, "ok");
  const bool want_ok = w_ok && w_ok->is_boolean() && w_ok->get<bool>();
  const bool got_ok = g_ok && g_ok->is_boolean() && g_ok->get<bool>();
  if (want_ok && !got_ok) return refusal("the port refuses a layout the spec builds: training stops at this batch");
  if (!want_ok && got_ok) {
    return refusal("the port builds a pack the spec refuses: a bad batch goes on unseen");
  }
  if (!want_ok)
    return {attention::Severity::metadata_only, "consequence: none at the attention level (error class only)"};
  const json* wp = member(want, "pack");
  const json* gp = member(got, "pack");
  if (!wp || !gp || !wp->is_object() || !gp->is_object()) {
    return refusal("the port's answer holds no pack to run");
  }
  attention::PackMeta reference_meta;
  try {
    reference_meta = pack_meta_from_json(*wp, c);
  } catch (const std::exception& e) {
    return {attention::Severity::metadata_only,
            std::string("consequence: not judged (the reference's pack: ") + e.what() + ")"};
  }
  attention::PackMeta port_meta;
  try {
    port_meta = pack_meta_from_json(*gp, c);
  } catch (const std::exception& e) {
    return refusal(std::string("the port's pack cannot be read by a consumer (") + e.what() + ")");
  }
  return attention::compare(port_meta, reference_meta);
}

}  // namespace

attention::PackMeta pack_meta_from_json(const json& pack, const Case& c) {
  const char* where = "pack.";
  attention::PackMeta m;
  m.sample_offsets = ints(pack, "sample_offsets", where);
  m.max_sample_len = integer(pack, "max_sample_len", where);
  m.max_causal_len = integer(pack, "max_causal_len", where);
  m.max_full_len = integer(pack, "max_full_len", where);
  m.causal_indices = ints(pack, "causal_indices", where);
  m.full_indices = ints(pack, "full_indices", where);
  m.causal_seq_offsets = ints(pack, "causal_seq_offsets", where);
  m.full_only_seq_offsets = ints(pack, "full_only_seq_offsets", where);
  m.num_causal_tokens = integer(pack, "num_causal_tokens", where);
  m.num_full_tokens = integer(pack, "num_full_tokens", where);
  m.causal_sample_ids = ints(pack, "causal_sample_ids", where);
  m.full_only_sample_ids = ints(pack, "full_only_sample_ids", where);
  m.causal_rows = ints(pack, "causal_rows", where);
  m.full_only_rows = ints(pack, "full_only_rows", where);
  const json* pad = member(pack, "pad_segment");
  if (pad && pad->is_object()) {
    const char* at = "pack.pad_segment.";
    attention::PadSegmentMeta s;
    s.causal_seq_offsets = ints(*pad, "causal_seq_offsets", at);
    s.max_causal_len = integer(*pad, "max_causal_len", at);
    s.full_only_seq_offsets = ints(*pad, "full_only_seq_offsets", at);
    s.max_full_len = integer(*pad, "max_full_len", at);
    s.sample_offsets = ints(*pad, "sample_offsets", at);
    s.max_sample_len = integer(*pad, "max_sample_len", at);
    m.pad_segment = std::move(s);
  } else if (!pad || !pad->is_null()) {
    throw std::invalid_argument("pack.pad_segment: missing, or neither an object nor null");
  }
  m.full_seq_alignment = c.options.full_seq_alignment;
  m.causal_seq_alignment = c.options.causal_seq_alignment;
  return m;
}

attention::Verdict consequence_of(const Case& c, const std::vector<Case>& steps, const std::string& expected,
                                  const std::string& actual) {
  if (actual.empty()) return refusal("the port crashes or hangs on this input: the training job stops");
  try {
    const auto answers = read_answer_pair(expected, actual);
    if (!answers) return refusal("the port's answer cannot be read");
    const json& want = answers->first;
    const json& got = answers->second;
    const json* type = member(want, "type");
    if (type && type->is_string() && type->get<std::string>() == "session") {
      const json* w = member(want, "results");
      const json* g = member(got, "results");
      if (!w || !g || !w->is_array() || !g->is_array()) return refusal("the port's session answer holds no results");
      for (std::size_t k = 0; k < w->size() && k < g->size(); ++k) {
        if ((*w)[k] == (*g)[k]) continue;
        attention::Verdict v = judge_result(k < steps.size() ? steps[k] : c, (*w)[k], (*g)[k]);
        v.line += " (session step " + std::to_string(k) + ")";
        return v;
      }
      return {attention::Severity::metadata_only, "consequence: none at the attention level (metadata only)"};
    }
    return judge_result(c, want, got);
  } catch (const std::exception& e) {
    return refusal(std::string("not judged: ") + e.what());
  }
}

}  // namespace seqpack::protocol
