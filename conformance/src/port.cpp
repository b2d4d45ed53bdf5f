// Port processes: spawning, pipelined exchange with per-answer time limits.
#include "seqpack/conformance/port.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"

namespace seqpack::conformance {

// The runner speaks the protocol's vocabulary (seqpack/protocol/).
using namespace seqpack::protocol;  // NOLINT(google-build-using-namespace)
namespace {

using Clock = std::chrono::steady_clock;

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

bool LineReader::append(const char* data, std::size_t n) {
  if (!error_.empty()) return false;
  // Check the limit on the new bytes alone: the length of the line they end
  // or continue is the unread tail plus what they add before a newline.
  std::size_t tail = tail_;
  const char* p = data;
  const char* const end = data + n;
  while (p < end) {
    const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const std::size_t part = static_cast<std::size_t>((nl ? nl : end) - p);
    if (tail + part > kMaxLineBytes) {
      clear();
      error_ = "the port's answer line exceeds the limit of " + std::to_string(kMaxLineBytes) + " bytes";
      return false;
    }
    tail = nl ? 0 : tail + part;
    p = nl ? nl + 1 : end;
  }
  buffer_.append(data, n);
  tail_ = tail;
  return true;
}

std::optional<std::string> LineReader::next() {
  // Bytes before scanned_ are known to hold no newline: each byte is looked
  // at once, however many reads a long line takes.
  const std::size_t nl = buffer_.find('\n', std::max(start_, scanned_));
  if (nl == std::string::npos) {
    scanned_ = buffer_.size();
    return std::nullopt;
  }
  std::string line = buffer_.substr(start_, nl - start_);
  start_ = scanned_ = nl + 1;
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = scanned_ = 0;
  } else if (start_ > (std::size_t{1} << 20) && start_ * 2 > buffer_.size()) {
    buffer_.erase(0, start_);
    start_ = scanned_ = 0;
  }
  return line;
}

void LineReader::clear() {
  std::string().swap(buffer_);
  start_ = 0;
  scanned_ = 0;
  tail_ = 0;
  error_.clear();
}

Hello parse_hello(const std::string& line, const std::string& fallback_name, bool offered) {
  const nlohmann::json j = parse_json(line, "the port's hello");
  if (!j.is_object()) throw InputError(std::string("the port's hello is not an object but ") + j.type_name());
  const auto string_field = [&](const char* key, bool required) -> std::optional<std::string> {
    const auto it = j.find(key);
    if (it == j.end()) {
      if (required) throw InputError(std::string("the port's hello: field ") + key + ": missing");
      return std::nullopt;
    }
    if (!it->is_string()) {
      throw InputError(std::string("the port's hello: field ") + key + ": expected a string, got " +
                       printable(it->dump(), 80));
    }
    return it->get<std::string>();
  };
  if (*string_field("type", true) != "hello") {
    throw InputError("the port's hello: field type: expected \"hello\", got \"" +
                     printable(*string_field("type", true)) + "\"");
  }
  const std::string protocol = *string_field("protocol", true);
  if (protocol != kProtocol) {
    throw InputError("the port's hello: field protocol: \"" + printable(protocol) + "\" is not \"" + kProtocol +
                     "\", the protocol this runner speaks");
  }
  Hello h;
  h.name = string_field("name", false).value_or(fallback_name);
  const auto views = j.find("views");
  if (views != j.end()) {
    if (!views->is_array()) throw InputError("the port's hello: field views: expected an array of strings");
    for (std::size_t i = 0; i < views->size(); ++i) {
      if (!(*views)[i].is_string()) {
        throw InputError("the port's hello: field views[" + std::to_string(i) + "]: expected a string, got " +
                         printable((*views)[i].dump(), 80));
      }
      // A name this runner does not know would be listed as checked and
      // never compared: refused, like an unknown option (PROTOCOL.md,
      // "Optional views and requests").
      const std::string name = (*views)[i].get<std::string>();
      const auto& known = oracle_views();
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string list;
        for (const auto& v : known) list += (list.empty() ? "" : ", ") + v;
        throw InputError("the port's hello: field views[" + std::to_string(i) + "]: " +
                         printable(views->at(i).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 80) +
                         " is not a view of this protocol (" + list + ")");
      }
      if (std::find(h.views.begin(), h.views.end(), name) != h.views.end()) {
        throw InputError("the port's hello: field views[" + std::to_string(i) + "]: \"" + name + "\" is listed twice");
      }
      h.views.push_back(name);
    }
  }
  const auto options = j.find("options");
  if (options != j.end()) {
    if (!options->is_array()) throw InputError("the port's hello: field options: expected an array of option names");
    h.options.emplace();
    for (std::size_t i = 0; i < options->size(); ++i) {
      const nlohmann::json& o = (*options)[i];
      const auto known = [&] {
        for (const char* name : kCaseOptions) {
          if (o == name) return true;
        }
        return false;
      };
      if (!o.is_string() || !known()) {
        throw InputError("the port's hello: field options[" + std::to_string(i) + "]: " + printable(o.dump(), 80) +
                         " is not an option of a case (cp_world_size, causal_seq_alignment, full_seq_alignment, "
                         "pad_for_cuda_graphs, is_image_batch, pad_segment_only_when_padded)");
      }
      h.options->push_back(o.get<std::string>());
    }
  }
  const auto encoding = string_field("encoding", false);
  h.encoding = offered && encoding == "runs" ? Encoding::runs : Encoding::plain;
  return h;
}

namespace {
// The process groups of the running ports (kill_all_ports); a slot is 0
// when free. 64 ports at --jobs 64, with room for the Python package's.
constexpr std::size_t kPortSlots = 256;
std::atomic<pid_t> g_port_groups[kPortSlots];

void remember_port(pid_t pid) {
  for (auto& slot : g_port_groups) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, pid)) return;
  }
}

void forget_port(pid_t pid) {
  for (auto& slot : g_port_groups) {
    pid_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}
}  // namespace

void kill_all_ports() noexcept {
  for (auto& slot : g_port_groups) {
    const pid_t pid = slot.exchange(0);
    if (pid > 0) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
    }
  }
}

Port::Port(std::string command, double timeout_s, bool offer_runs)
    : command_(std::move(command)), timeout_s_(timeout_s), offer_runs_(offer_runs) {
  signal(SIGPIPE, SIG_IGN);  // a port that dies mid-request must not take the runner with it
}

Port::~Port() { stop(); }

void Port::stop() {
  if (to_port_ >= 0) close(to_port_);
  if (from_port_ >= 0) close(from_port_);
  to_port_ = from_port_ = -1;
  if (pid_ > 0) {
    forget_port(pid_);
    // Give it a moment to exit on end of input, then make sure.
    for (int i = 0; i < 20; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      usleep(5000);
    }
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_ = -1;
  fresh_ = false;
  pending_.clear();
}

bool Port::start(std::string* why) {
  stop();
  ++restarts_;
  // Close-on-exec: another port started meanwhile (--jobs, a restart in
  // another thread) must not hold this one's pipe ends, or this port would
  // never read the end of its input. dup2 onto 0 and 1 clears the flag there.
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    *why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    *why = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so that a hung port's children die with it
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    execl("/bin/sh", "sh", "-c", command_.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  pid_ = pid;
  remember_port(pid);
  to_port_ = in[1];
  from_port_ = out[0];
  set_nonblocking(to_port_);
  set_nonblocking(from_port_);
#ifdef F_SETPIPE_SZ
  // Pipes of 1 MiB (where the system allows): a batch's requests and
  // answers pass in fewer writes, reads and wake-ups of both processes.
  fcntl(to_port_, F_SETPIPE_SZ, 1 << 20);
  fcntl(from_port_, F_SETPIPE_SZ, 1 << 20);
#endif

  const auto answers = exchange({std::string("{\"type\":\"hello\",\"protocol\":\"") + kProtocol + "\"" +
                                 (offer_runs_ ? ",\"encodings\":[\"runs\"]}" : "}")},
                                why);
  if (answers.empty()) return false;
  fresh_ = true;
  try {
    Hello hello = parse_hello(answers[0], command_, offer_runs_);
    name_ = std::move(hello.name);
    views_ = std::move(hello.views);
    options_ = std::move(hello.options);
    encoding_ = hello.encoding;
  } catch (const std::exception& e) {
    *why = e.what();
    failure_ = PortFailure::io;
    stop();
    return false;
  }
  return true;
}

std::vector<std::string> Port::exchange(const std::vector<std::string>& lines, std::string* why, std::size_t budget,
                                        double timeout_s, const std::atomic<bool>* cancel) {
  std::vector<std::string> answers;
  const bool fresh = std::exchange(fresh_, false);
  failure_ = PortFailure::none;
  const auto fail = [&](PortFailure f, std::string text) {
    failure_ = f;
    *why = std::move(text);
    stop();
    return answers;
  };
  if (!running()) {
    failure_ = PortFailure::not_running;
    *why = "the port is not running";
    return answers;
  }
  std::string outgoing;
  for (const auto& l : lines) outgoing += l + "\n";
  std::size_t written = 0;
  const double limit_s = timeout_s > 0 ? timeout_s : timeout_s_;
  const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
  const Clock::time_point sent = Clock::now();
  auto deadline = sent + timeout;
  char buf[1 << 16];
  while (answers.size() < lines.size()) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      return fail(PortFailure::cancelled, "cancelled: the run stopped");
    }
    // Complete lines already buffered.
    if (auto line = pending_.next()) {
      if (line->size() > budget) {
        return fail(PortFailure::too_many_bytes, "the port's answers to this batch pass " +
                                                     std::to_string(kMaxBatchAnswerBytes) +
                                                     " bytes in all (PROTOCOL.md, \"Limits\")");
      }
      budget -= line->size();
      if (fresh && answers.empty()) {
        fresh_answer_s_ = std::max(fresh_answer_s_, std::chrono::duration<double>(Clock::now() - sent).count());
      }
      answers.push_back(std::move(*line));
      deadline = Clock::now() + timeout;
      continue;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      const std::size_t partial = pending_.partial();
      return fail(PortFailure::hung, partial ? "no complete answer line within " + std::to_string(limit_s) +
                                                   " s: " + std::to_string(partial) + " bytes without a newline"
                                             : "no answer within " + std::to_string(limit_s) + " s (hung)");
    }
    pollfd fds[2] = {{from_port_, POLLIN, 0}, {to_port_, POLLOUT, 0}};
    const int nfds = written < outgoing.size() ? 2 : 1;
    // Woken at least every second, every 0.1 s where a stop may cancel.
    const long long slice = cancel != nullptr ? 100 : 1000;
    if (poll(fds, static_cast<nfds_t>(nfds), static_cast<int>(std::min<long long>(left, slice))) < 0 &&
        errno != EINTR) {
      return fail(PortFailure::io, std::string("poll: ") + std::strerror(errno));
    }
    if (nfds == 2 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = write(to_port_, outgoing.data() + written, outgoing.size() - written);
      if (n > 0) {
        written += static_cast<std::size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return fail(PortFailure::exited, "the port closed its input (exited)");
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t n = read(from_port_, buf, sizeof buf);
      if (n > 0) {
        if (!pending_.append(buf, static_cast<std::size_t>(n)))
          return fail(PortFailure::line_too_long, pending_.error());
      } else if (n == 0) {
        return fail(PortFailure::exited, "the port exited (crashed) before answering");
      }
    }
  }
  return answers;
}

}  // namespace seqpack::conformance
