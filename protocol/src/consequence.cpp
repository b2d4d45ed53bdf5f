// The consequence of a failure group (consequence.hpp): reads both result
// lines through the protocol's limits, turns each pack into an
// attention::PackMeta and lets attention::compare judge the port's pack
// against the reference's. Neighbour: compare.cpp reads the lines.
#include "seqpack/protocol/consequence.hpp"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqpack/attention/consumer_judge.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "writer.hpp"

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
    if (!detail::is_int64(x)) {
      throw std::invalid_argument(std::string(where) + field + ": not an array of int64 integers");
    }
    v.push_back(x.get<std::int64_t>());
  }
  return v;
}

std::int64_t integer(const json& pack, const char* field, const char* where) {
  const auto it = pack.find(field);
  if (it == pack.end() || !detail::is_int64(*it)) {
    throw std::invalid_argument(std::string(where) + field + ": missing or not an int64 integer");
  }
  return it->get<std::int64_t>();
}

std::string line(const attention::ConsumerOptions& consumer, const std::string& what) {
  return "consequence [" + attention::describe(consumer) + "]: " + what;
}

attention::Verdict refusal(const attention::ConsumerOptions& consumer, const std::string& what) {
  return {attention::Severity::crash_or_refusal, line(consumer, what)};
}

const json* member(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

attention::StreamView stream_view(const json& v, const char* where) {
  if (!v.is_object()) throw std::invalid_argument(std::string(where) + ": not an object");
  return {ints(v, "rows", where), ints(v, "offsets", where), integer(v, "max_len", where)};
}

attention::Verdict judge_result(const Case& c, const json& want, const json& got,
                                const attention::ConsumerOptions& consumer) {
  const json* w_ok = member(want, "ok");
  const json* g_ok = member(got, "ok");
  const bool want_ok = w_ok && w_ok->is_boolean() && w_ok->get<bool>();
  const bool got_ok = g_ok && g_ok->is_boolean() && g_ok->get<bool>();
  if (want_ok && !got_ok)
    return refusal(consumer, "the port refuses a layout the spec builds: training stops at this batch");
  if (!want_ok && got_ok) {
    return refusal(consumer, "the port builds a pack the spec refuses: a bad batch goes on unseen");
  }
  if (!want_ok)
    return {attention::Severity::metadata_only, line(consumer, "none (both refuse the layout; the error class only)")};
  const json* wp = member(want, "pack");
  const json* gp = member(got, "pack");
  if (!wp || !gp || !wp->is_object() || !gp->is_object()) {
    return refusal(consumer, "the port's answer holds no pack to run");
  }
  attention::ConsumerInput reference_input;
  try {
    reference_input = consumer_input_from_json(want, c);
  } catch (const std::exception& e) {
    return {attention::Severity::not_judged,
            line(consumer, std::string("not judged (the reference's answer: ") + e.what() + ")")};
  }
  attention::ConsumerInput port_input;
  try {
    port_input = consumer_input_from_json(got, c);
  } catch (const std::exception& e) {
    return refusal(consumer, std::string("the port's answer cannot be read by a consumer (") + e.what() + ")");
  }
  return attention::compare_consumer(port_input, reference_input, consumer);
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

attention::ConsumerInput consumer_input_from_json(const json& result, const Case& c) {
  attention::ConsumerInput in;
  const json* pack = member(result, "pack");
  if (!pack || !pack->is_object()) throw std::invalid_argument("pack: missing or not an object");
  in.meta = pack_meta_from_json(*pack, c);
  in.cp_world_size = c.options.cp_world_size;
  const json* views = member(result, "views");
  if (!views) return in;
  if (!views->is_object()) throw std::invalid_argument("views: not an object");
  if (const json* v = member(*views, "all_seq_padded")) in.all_seq_padded = stream_view(*v, "views.all_seq_padded.");
  if (const json* g = member(*views, "getters")) {
    if (!g->is_object()) throw std::invalid_argument("views.getters: not an object");
    const char* at = "views.getters.";
    if (member(*g, "all_seq_rows")) in.all_seq_rows = ints(*g, "all_seq_rows", at);
    if (const json* v = member(*g, "causal_padded")) in.causal_padded = stream_view(*v, "views.getters.causal_padded.");
    if (const json* v = member(*g, "full_only_padded"))
      in.full_only_padded = stream_view(*v, "views.getters.full_only_padded.");
    if (member(*g, "num_real_tokens")) {
      const auto n = ints(*g, "num_real_tokens", at);
      if (n.size() != 2) throw std::invalid_argument("views.getters.num_real_tokens: not two integers");
      in.num_real_tokens = std::array<std::int64_t, 2>{n[0], n[1]};
    }
  }
  if (const json* s = member(*views, "cp_shards")) {
    in.has_cp_shards = true;
    if (s->is_object()) {
      const json* e = member(*s, "error");
      if (!e || !e->is_string()) throw std::invalid_argument("views.cp_shards: an object without an error string");
      in.cp_shards_error = e->get<std::string>();
    } else if (s->is_array()) {
      const char* at = "views.cp_shards[].";
      for (const json& r : *s) {
        if (!r.is_object()) throw std::invalid_argument("views.cp_shards[]: not an object");
        in.cp_shards.push_back({ints(r, "causal_rows", at), ints(r, "full_only_rows", at),
                                integer(r, "num_causal_tokens_local", at), integer(r, "num_full_tokens_local", at)});
      }
    } else {
      throw std::invalid_argument("views.cp_shards: neither a list nor an error");
    }
  }
  if (const json* d = member(*views, "dtypes")) {
    if (!d->is_object()) throw std::invalid_argument("views.dtypes: not an object");
    for (const auto& [field, dtype] : d->items()) {
      if (!dtype.is_string()) throw std::invalid_argument("views.dtypes." + field + ": not a string");
      in.dtypes[field] = dtype.get<std::string>();
    }
  }
  return in;
}

attention::Verdict consequence_of(const Case& c, const std::vector<Case>& steps, const std::string& expected,
                                  const std::string& actual, const attention::ConsumerOptions& consumer) {
  if (actual.empty()) return refusal(consumer, "the port crashes or hangs on this input: the training job stops");
  try {
    const auto answers = read_answer_pair(expected, actual);
    if (!answers) return refusal(consumer, "the port's answer cannot be read");
    const json& want = answers->first;
    const json& got = answers->second;
    const json* type = member(want, "type");
    if (type && type->is_string() && type->get<std::string>() == "session") {
      const json* w = member(want, "results");
      const json* g = member(got, "results");
      if (!w || !g || !w->is_array() || !g->is_array())
        return refusal(consumer, "the port's session answer holds no results");
      for (std::size_t k = 0; k < w->size() && k < g->size(); ++k) {
        if (detail::same((*w)[k], (*g)[k])) continue;
        attention::Verdict v = judge_result(k < steps.size() ? steps[k] : c, (*w)[k], (*g)[k], consumer);
        v.line += " (session step " + std::to_string(k) + ")";
        return v;
      }
      return {attention::Severity::metadata_only, line(consumer, "none (no step's result differs)")};
    }
    return judge_result(c, want, got, consumer);
  } catch (const std::exception& e) {
    return {attention::Severity::not_judged, line(consumer, std::string("not judged: ") + e.what())};
  }
}

}  // namespace seqpack::protocol
