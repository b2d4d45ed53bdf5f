// The oracle: Oracle::handle answers one request line (hello, case,
// session) and serve() runs the loop over a port's stdin and stdout, for the
// reference and for C++ ports. The result lines are in results.cpp, the
// writer in writer.hpp.
#include <algorithm>
#include <istream>
#include <ostream>

#include "seqpack/protocol/case_json.hpp"
#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"
#include "writer.hpp"

namespace seqpack::protocol {

using detail::error_line;
using detail::json;
using detail::show;
using detail::Writer;
namespace ref = seqpack::reference;

std::string handle_line(const std::string& line) { return Oracle(false).handle(line); }

int serve(std::istream& in, std::ostream& out, bool allow_runs, const Implementation& impl) {
  Oracle oracle(allow_runs, impl);
  std::string line;
  std::size_t too_long = 0;
  // Lines are read within the limit: a longer one is answered, not buffered.
  while (read_line_bounded(in, line, kMaxLineBytes, &too_long)) {
    if (too_long) {
      out << error_line("", "bad_request",
                        "request line of " + std::to_string(too_long) + " bytes exceeds the limit of " +
                            std::to_string(kMaxLineBytes) + " bytes")
          << '\n'
          << std::flush;
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    out << oracle.handle(line) << '\n' << std::flush;
  }
  return 0;
}

std::vector<std::string> Oracle::asked_views(const nlohmann::json& request) const {
  std::vector<std::string> views = impl_->views();
  const auto asked = request.find("views");
  if (asked == request.end() || !asked->is_array()) return views;
  std::vector<std::string> out;
  for (const auto& v : views) {
    if (std::find(asked->begin(), asked->end(), v) != asked->end()) out.push_back(v);
  }
  return out;
}

std::string Oracle::handle(const std::string& line) {
  std::string id;
  try {
    if (line.size() > kMaxLineBytes) {
      return error_line(id, "bad_request",
                        "request line of " + std::to_string(line.size()) + " bytes exceeds the limit of " +
                            std::to_string(kMaxLineBytes) + " bytes");
    }
    json j;
    try {
      j = parse_json(line, "the request");
    } catch (const InputError& e) {
      return error_line(id, "bad_request", e.what());
    }
    if (!j.is_object())
      return error_line(id, "bad_request", std::string("expected a JSON object, got ") + j.type_name());
    const auto type = j.find("type");
    const auto id_field = j.find("id");
    if (id_field != j.end()) {
      if (!id_field->is_string()) {
        return error_line(id, "bad_request", std::string("field id: expected a string, got ") + id_field->type_name());
      }
      id = id_field->get<std::string>();
    }
    if (type == j.end() || !type->is_string())
      return error_line(id, "bad_request", "field type: missing or not a string");
    if (*type == "hello") {
      const auto protocol = j.find("protocol");
      if (protocol == j.end() || *protocol != kProtocol) {
        return error_line(id, "bad_request",
                          "field protocol: " + (protocol == j.end() ? std::string("missing") : show(*protocol)) +
                              ", this oracle speaks \"" + kProtocol + "\"");
      }
      // The runs encoding, when the runner offers it and this oracle may use it.
      encoding_ = Encoding::plain;
      if (allow_runs_ && j.contains("encodings") && j["encodings"].is_array()) {
        for (const auto& e : j["encodings"]) {
          if (e == "runs") encoding_ = Encoding::runs;
        }
      }
      Writer w;
      w.open().key("type").str("hello").key("protocol").str(kProtocol).key("name").str(impl_->name());
      if (encoding_ == Encoding::runs) w.key("encoding").str("runs");
      w.key("views").open_list();
      for (const auto& v : impl_->views()) w.str(v);
      w.close_list().close();
      return w.text();
    }
    if (*type != "case" && *type != "session")
      return error_line(id, "bad_request", "field type: unknown request type " + show(*type));
    if (id_field == j.end()) return error_line(id, "bad_request", "field id: missing (a string naming the request)");
    if (*type == "session") {
      const auto cases = j.find("cases");
      if (cases == j.end() || !cases->is_array())
        return error_line(id, "bad_request", "field cases: missing or not an array");
      if (cases->size() > kMaxSessionSteps) {
        return error_line(id, "bad_request",
                          "field cases: " + std::to_string(cases->size()) + " steps exceed the limit of " +
                              std::to_string(kMaxSessionSteps));
      }
      std::vector<protocol::Case> steps;
      for (std::size_t k = 0; k < cases->size(); ++k) {
        try {
          steps.push_back(protocol::case_from_json_value((*cases)[k]));
        } catch (const std::exception& e) {
          return error_line(id, "bad_request", "cases[" + std::to_string(k) + "]: " + e.what());
        }
      }
      // The steps' sizes together stay within the oracle's row limit.
      std::int64_t total = 0;
      for (const auto& step : steps) {
        try {
          const CaseShape shape = plan_case(step);
          total += shape.causal_len + shape.full_len;
        } catch (const ref::Error&) {
          // A rejected step allocates nothing past its rows (checked per step).
        }
        total += std::max<std::int64_t>(step.rows, 0);
        if (total > oracle_row_limit()) {
          return error_line(id, "too_large",
                            "too_large: cases: the steps' rows and padded streams pass the oracle's limit of " +
                                std::to_string(oracle_row_limit()) + " rows in all");
        }
      }
      return session_line(*impl_, steps, id, asked_views(j), encoding_);
    }
    protocol::Case c;
    try {
      c = protocol::case_from_json_value(j);
    } catch (const std::exception& e) {
      return error_line(id, "bad_request", e.what());
    }
    return result_line(*impl_, c, id, asked_views(j), encoding_);
  } catch (const std::exception& e) {
    return error_line(id, "bad_request", std::string("unexpected: ") + printable(e.what(), 300));
  }
}

}  // namespace seqpack::protocol
