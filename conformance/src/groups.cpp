// Failure signatures, case labels, vector families and JUnit XML.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "seqpack/conformance/verdict.hpp"

namespace seqpack::conformance {

// The runner speaks the protocol's vocabulary (seqpack/protocol/).
using namespace seqpack::protocol;  // NOLINT(google-build-using-namespace)
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// Digits become '#', so that counts, sizes and seconds do not split a group.
std::string without_numbers(const std::string& s, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && out.size() < max; ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
      out += '#';
      while (i + 1 < s.size() && (std::isdigit(static_cast<unsigned char>(s[i + 1])) != 0 || s[i + 1] == '.')) ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// `a.b[3].c[0]` -> `a.b[].c[]`; empty when `s` is not a field path.
std::string field_path(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '[') {
      std::size_t j = i + 1;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) != 0) ++j;
      if (j == i + 1 || j >= s.size() || s[j] != ']') return "";
      out += "[]";
      i = j;
    } else if (std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '.') {
      out += ch;
    } else {
      return "";
    }
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

}  // namespace

std::string failure_signature(const std::string& diff) {
  std::string d = diff;
  std::string prefix;
  if (starts_with(d, "session step ")) {
    const auto colon = d.find(": ");
    if (colon != std::string::npos) {
      prefix = "session step #: ";
      d = d.substr(colon + 2);
    }
  }
  const auto colon = d.find(": ");
  const std::string path = colon == std::string::npos ? "" : field_path(d.substr(0, colon));
  if (path.empty()) return prefix + without_numbers(d, 100);
  std::string rest = d.substr(colon + 2);
  std::string kind = "value";
  if (starts_with(rest, "expected ") && ends_with(rest.substr(0, rest.find(", port ")), " entries") &&
      rest.find(" entries, port ") != std::string::npos) {
    kind = "length";
  } else if (rest.find("missing") != std::string::npos) {
    kind = "missing";
  } else if (path == "ok" || path == "error") {
    // The classes (a bounded set) are the kind; the port's message is not.
    kind = rest.substr(0, rest.find(" ("));
    kind.erase(std::remove(kind.begin(), kind.end(), '"'), kind.end());
    kind = without_numbers(kind, 100);
  } else if (rest.find("not a") != std::string::npos) {
    kind = without_numbers(rest, 60);
  }
  return prefix + path + " (" + kind + ")";
}

std::string case_label(const Case& c, const std::string& expect) {
  if (!c.expect_error.empty()) return c.fault.empty() ? c.expect_error : c.expect_error + "/" + c.fault;
  if (!expect.empty()) {
    try {
      const nlohmann::json r = nlohmann::json::parse(expect);
      if (r.is_object() && r.value("type", "") == "result" && r.value("ok", true) == false && r.contains("error") &&
          r["error"].is_string())
        return r["error"].get<std::string>();
    } catch (const nlohmann::json::exception&) {
      // an unreadable expectation labels nothing
    }
  }
  return "valid";
}

std::string vector_family(const std::string& id) {
  // Worked examples: a capital letter and a number (E1, E3b).
  if (id.size() >= 2 && std::isupper(static_cast<unsigned char>(id[0])) != 0 &&
      std::isdigit(static_cast<unsigned char>(id[1])) != 0)
    return "worked-example-" + id.substr(0, 1);
  const auto dash = id.find('-');
  return dash == std::string::npos ? id : id.substr(0, dash);
}

std::string junit_xml(const std::string& suite, const std::vector<JUnitCase>& cases, double seconds) {
  const auto esc = [](const std::string& s) {
    std::string out;
    for (const char ch : s) {
      const auto u = static_cast<unsigned char>(ch);
      switch (ch) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&apos;";
          break;
        default:
          // XML 1.0 allows no control characters but tab, newline and return.
          if (u < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
            out += '?';
          } else {
            out += ch;
          }
      }
    }
    return out;
  };
  const auto secs = [](double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    return std::string(buf);
  };
  std::size_t failures = 0;
  for (const auto& c : cases) failures += c.failure.empty() ? 0 : 1;
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"" + esc(suite) + "\" tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
       std::to_string(failures) + "\" time=\"" + secs(seconds) + "\">\n";
  x += "  <testsuite name=\"" + esc(suite) + "\" tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
       std::to_string(failures) + "\" errors=\"0\" skipped=\"0\" time=\"" + secs(seconds) + "\">\n";
  for (const auto& c : cases) {
    x += "    <testcase classname=\"" + esc(c.classname) + "\" name=\"" + esc(c.name) + "\" time=\"" + secs(c.seconds) +
         "\"";
    if (c.failure.empty()) {
      x += "/>\n";
      continue;
    }
    x += ">\n      <failure message=\"" + esc(c.failure) + "\" type=\"conformance\">" + esc(c.detail) +
         "</failure>\n    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

}  // namespace seqpack::conformance
