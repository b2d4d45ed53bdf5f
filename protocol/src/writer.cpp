// The oracle's JSON writer (writer.hpp): its per-thread buffer, and the
// helpers that write marks, error lines and values in messages.
#include "writer.hpp"

#include "seqpack/protocol/limits.hpp"

namespace seqpack::protocol::detail {

thread_local std::unique_ptr<char[]> Writer::pool_;
thread_local std::size_t Writer::pool_cap_ = 0;

void marks(Writer& w, const ref::GraphMarks& m) {
  w.open().key("image").list(std::vector<std::int64_t>{m.image_causal, m.image_full});
  w.key("video").list(std::vector<std::int64_t>{m.video_causal, m.video_full}).close();
}

std::string error_line(const std::string& id, const std::string& cls, const std::string& message) {
  Writer w;
  w.open().key("type").str("result").key("id").str(id).key("ok").boolean(false);
  w.key("error").str(cls).key("message").str(message).close();
  return w.text();
}

std::string show(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 200 ? printable(s, 200) : s;
}

namespace {
__extension__ typedef __int128 Wide;

// An integer's exact value: unsigned past INT64_MAX stays past every int64.
Wide exact(const json& v) {
  return v.is_number_unsigned() ? Wide{v.get<std::uint64_t>()} : Wide{v.get<std::int64_t>()};
}
}  // namespace

bool same(const json& a, const json& b) {
  const bool ai = a.is_number_integer(), bi = b.is_number_integer();
  if (ai || bi) return ai && bi && exact(a) == exact(b);
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      const auto other = b.find(it.key());
      if (other == b.end() || !same(it.value(), *other)) return false;
    }
    return true;
  }
  return a == b;  // strings, booleans, null, floats
}

}  // namespace seqpack::protocol::detail
