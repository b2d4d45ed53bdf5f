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

}  // namespace seqpack::protocol::detail
