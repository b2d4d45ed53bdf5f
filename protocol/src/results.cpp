// Result lines: the reference's (or a C++ port's) answer to a case or a
// session, as PROTOCOL.md writes it, and request lines; the oracle's row
// limit and the views it declares. The views are in views.cpp, the writer in
// writer.hpp, the oracle that answers with these lines in oracle.cpp.
#include <atomic>
#include <optional>

#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "seqpack/protocol/render.hpp"
#include "views.hpp"
#include "writer.hpp"

namespace seqpack::protocol {

using detail::json;
using detail::Writer;
namespace ref = seqpack::reference;

namespace {

using detail::marks;
using detail::more_views;
using detail::row_names;
using detail::Shards;
using detail::wants;

std::atomic<std::int64_t> g_row_limit{kMaxOracleRows};

std::string result_or_error(const Implementation& impl, const protocol::Case& c, const std::string& id,
                            const std::vector<std::string>& views, Encoding encoding,
                            ref::GraphMarks* marks_after = nullptr) {
  ref::GraphMarks after = c.marks;
  const auto failed = [&](const std::string& cls, const std::string& message) {
    if (marks_after) *marks_after = after;
    Writer w;
    w.open().key("type").str("result").key("id").str(id).key("ok").boolean(false);
    w.key("error").str(cls).key("message").str(message);
    if (wants(views, "error_marks")) {
      w.key("graph_bounds");
      marks(w, after);
    }
    return w.close().text();
  };
  try {
    // The size is decided before anything is allocated (PROTOCOL.md,
    // "Limits"): the reference's checks on the layout and options alone, in
    // protocol order, then the oracle's limits for a valid case.
    // A case the reference rejects is built by the implementation all the
    // same (its own checks answer) unless its rows alone are past the limit.
    std::optional<ref::Error> rejected;
    CaseShape shape;
    try {
      shape = plan_case(c);
    } catch (const ref::Error& e) {
      rejected = e;
    }
    if (rejected && (c.rows < 0 || c.rows > oracle_row_limit())) throw *rejected;
    if (!rejected) {
      if (const auto big = too_large(c, shape, oracle_row_limit(), 4)) return failed("too_large", "too_large: " + *big);
    }
    const ref::Rows rows = numbered_rows(c.rows);
    const std::unique_ptr<Built> built = impl.build(rows, c, after);
    Shards shards(*built);
    const ref::Pack& p = built->pack();
    const ref::Metadata& m = *p.meta;
    Writer w;
    w.encoding = encoding;
    w.open().key("type").str("result").key("id").str(id).key("ok").boolean(true);
    w.key("pack").open();
    w.key("sample_offsets").ints(m.sample_offsets).key("max_sample_len").num(m.max_sample_len);
    w.key("max_causal_len").num(m.max_causal_len).key("max_full_len").num(m.max_full_len);
    w.key("max_num_tokens").num(p.max_num_tokens);
    w.key("causal_indices").ints(m.causal_indices).key("full_indices").ints(m.full_indices);
    w.key("causal_seq_offsets").ints(m.causal_seq_offsets).key("full_only_seq_offsets").ints(m.full_only_seq_offsets);
    w.key("num_causal_tokens").num(m.num_causal_tokens).key("num_full_tokens").num(m.num_full_tokens);
    w.key("causal_sample_ids").ints(p.causal_sample_ids).key("full_only_sample_ids").ints(p.full_only_sample_ids);
    w.key("causal_rows").ints(row_names(p.causal_seq)).key("full_only_rows").ints(row_names(p.full_only_seq));
    w.key("pad_segment");
    if (p.pad_segment) {
      const ref::PadSegment& s = *p.pad_segment;
      w.open().key("causal_seq_offsets").ints(s.causal_seq_offsets).key("max_causal_len").num(s.max_causal_len);
      w.key("full_only_seq_offsets").ints(s.full_only_seq_offsets).key("max_full_len").num(s.max_full_len);
      w.key("sample_offsets").ints(s.sample_offsets).key("max_sample_len").num(s.max_sample_len).close();
    } else {
      w.null();
    }
    w.close();
    w.key("graph_bounds");
    marks(w, after);
    w.key("views").open();
    if (wants(views, "all_seq_padded")) {
      const ref::AllSeqPadded all = built->all_seq_padded();
      w.key("all_seq_padded").open().key("rows").ints(row_names(all.seq));
      w.key("offsets").ints(all.offsets).key("max_len").num(all.max_len).close();
    }
    if (wants(views, "cp_shards") && c.options.cp_world_size > 1) {
      w.key("cp_shards");
      const std::int64_t world = c.options.cp_world_size;
      if (p.causal_seq.rows() % static_cast<std::size_t>(world) != 0 ||
          p.full_only_seq.rows() % static_cast<std::size_t>(world) != 0) {
        w.open().key("error").str("not_divisible").close();
      } else {
        const Shards::Set& set = shards.at(world);
        if (set.refused) throw *set.refused;  // a port's shard refusing divisible streams
        w.open_list();
        for (std::int64_t r = 0; r < world; ++r) {
          const std::unique_ptr<Built>& s = set.ranks[static_cast<std::size_t>(r)];
          const auto [lc, lf] = ref::get_num_real_tokens(s->pack());
          w.open().key("rank").num(r).key("causal_rows").ints(row_names(s->pack().causal_seq));
          w.key("full_only_rows").ints(row_names(s->pack().full_only_seq));
          w.key("num_causal_tokens_local").num(lc).key("num_full_tokens_local").num(lf).close();
        }
        w.close_list();
      }
    }
    more_views(w, impl, *built, shards, c, rows, views);
    w.close().close();
    if (marks_after) *marks_after = after;
    return w.text();
  } catch (const ref::Error& e) {
    return failed(ref::to_string(e.code()), e.what());
  } catch (const detail::AnswerTooLarge&) {
    return failed("too_large", "too_large: rows: the answer to " + std::to_string(c.rows) +
                                   " packed rows would pass the oracle's limit of " +
                                   std::to_string(kMaxOracleAnswerBytes) +
                                   " bytes (the runs encoding writes most answers far smaller)");
  } catch (const std::bad_alloc&) {
    return failed("too_large", "the oracle ran out of memory building this case");
  }
}

}  // namespace

void set_oracle_row_limit(std::int64_t rows) { g_row_limit = rows; }
std::int64_t oracle_row_limit() { return g_row_limit; }

const std::vector<std::string>& oracle_views() {
  static const std::vector<std::string> views = {
      "all_seq_padded", "cp_shards", "getters", "position_ids", "setters",   "derived", "cp_local",
      "metadata_reuse", "payload",   "session", "error_marks",  "cp_global", "dtypes"};
  return views;
}

std::string result_line(const protocol::Case& c, const std::string& id, const std::vector<std::string>& views,
                        Encoding encoding) {
  return result_or_error(reference_implementation(), c, id, views, encoding);
}

std::string result_line(const Implementation& impl, const protocol::Case& c, const std::string& id,
                        const std::vector<std::string>& views, Encoding encoding) {
  return result_or_error(impl, c, id, views, encoding);
}

std::string request_line(const protocol::Case& c, const std::string& id) { return protocol::to_json(c, id); }

std::string session_request_line(const std::vector<protocol::Case>& steps, const std::string& id) {
  return session_request_line(steps, id, oracle_views());
}

std::string request_line(const protocol::Case& c, const std::string& id, const std::vector<std::string>& views) {
  std::string line = protocol::to_json(c, id);
  line.pop_back();  // the closing brace
  line += ",\"views\":[";
  // Escaped: a name is the caller's text (the runner sends only names it
  // knows, the Python package's callers anything).
  for (std::size_t i = 0; i < views.size(); ++i) {
    line += (i ? "," : "") + json(views[i]).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return line + "]}";
}

std::vector<std::string> views_for(const protocol::Case& c, const std::vector<std::string>& declared) {
  std::int64_t padded = 0;
  try {
    const CaseShape shape = plan_case(c);  // allocates nothing per token
    padded = shape.causal_len + shape.full_len;
  } catch (const ref::Error&) {
    return declared;  // an error result carries no views
  }
  if (padded <= kAllViewsRows) return declared;
  std::vector<std::string> out;
  for (const auto& v : declared) {
    if (v == "all_seq_padded" || v == "cp_shards" || v == "session" || v == "error_marks") out.push_back(v);
  }
  return out;
}

std::vector<std::string> views_for(const std::vector<protocol::Case>& steps, const std::vector<std::string>& declared) {
  std::vector<std::string> out = declared;
  for (const auto& c : steps) {
    const std::vector<std::string> v = views_for(c, declared);
    if (v.size() < out.size()) out = v;
  }
  return out;
}

std::string session_line(const Implementation& impl, const std::vector<protocol::Case>& steps, const std::string& id,
                         const std::vector<std::string>& views, Encoding encoding) {
  Writer w;
  w.open().key("type").str("session").key("id").str(id).key("results").open_list();
  std::string text = w.text();
  ref::GraphMarks marks = steps.empty() ? ref::GraphMarks{} : steps.front().marks;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    protocol::Case step = steps[k];
    step.marks = marks;
    if (k) text += ',';
    text += result_or_error(impl, step, id + "/" + std::to_string(k), views, encoding, &marks);
    if (text.size() > kMaxOracleAnswerBytes) {  // each step's is bounded; so are all of them together
      return detail::error_line(id, "too_large",
                                "too_large: cases: the session's answer passes the oracle's limit of " +
                                    std::to_string(kMaxOracleAnswerBytes) + " bytes at step " + std::to_string(k));
    }
  }
  return text + "]}";
}

std::string session_line(const std::vector<protocol::Case>& steps, const std::string& id,
                         const std::vector<std::string>& views, Encoding encoding) {
  return session_line(reference_implementation(), steps, id, views, encoding);
}

std::string session_request_line(const std::vector<protocol::Case>& steps, const std::string& id,
                                 const std::vector<std::string>& views) {
  std::string text =
      "{\"type\":\"session\",\"id\":" + json(id).dump() + ",\"views\":" + json(views).dump() + ",\"cases\":[";
  for (std::size_t k = 0; k < steps.size(); ++k) {
    if (k) text += ',';
    text += protocol::to_json(steps[k], id + "/" + std::to_string(k));
  }
  return text + "]}";
}

}  // namespace seqpack::protocol
