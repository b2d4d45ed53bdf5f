// A port: a command speaking the conformance protocol on its stdin/stdout.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seqpack/protocol/limits.hpp"
#include "seqpack/protocol/protocol.hpp"

namespace seqpack::conformance {

/// What a port's hello declared (PROTOCOL.md, "Transport").
struct Hello {
  std::string name;
  std::vector<std::string> views;
  /// The case options the port supports (kCaseOptions names); absent: all.
  std::optional<std::vector<std::string>> options;
  protocol::Encoding encoding = protocol::Encoding::plain;
};

/// The case options a hello may declare (PROTOCOL.md, "Transport"), with the
/// value a case leaves them at when it does not use them.
inline constexpr const char* kCaseOptions[] = {"cp_world_size",      "causal_seq_alignment",
                                               "full_seq_alignment", "pad_for_cuda_graphs",
                                               "is_image_batch",     "pad_segment_only_when_padded"};

/// Reads a port's hello line, checking every member's type: `type` "hello",
/// `protocol` this protocol, `name` a string, `views` an array of strings,
/// `options` an array of kCaseOptions names, `encoding` a string. `fallback_name` names a port whose hello has none;
/// the runs encoding counts only when `offered`. Throws protocol::InputError naming
/// the field.
Hello parse_hello(const std::string& line, const std::string& fallback_name, bool offered);

/// A port's output as lines, within protocol::kMaxLineBytes: bytes go in as they are
/// read, complete lines come out; a line longer than the limit is an error
/// as soon as its bytes pass the limit, before its newline arrives.
class LineReader {
 public:
  /// Appends bytes. Returns false (and stores nothing more) once the line
  /// being read passes protocol::kMaxLineBytes; `error()` then says so.
  bool append(const char* data, std::size_t n);
  /// The next complete line (without its newline), if one is buffered.
  std::optional<std::string> next();
  /// Bytes of the line being read that have no newline yet.
  std::size_t partial() const noexcept { return buffer_.size() - start_; }
  const std::string& error() const noexcept { return error_; }
  void clear();

 private:
  std::string buffer_;
  std::size_t start_ = 0;    // where the unread bytes begin
  std::size_t scanned_ = 0;  // bytes before it hold no newline past start_
  std::size_t tail_ = 0;     // bytes after the last newline
  std::string error_;
};

/// Why the last exchange stopped early.
/// Kills (SIGKILL) the process group of every port this process has
/// running, and forgets them. Async-signal-safe: `seqpack`'s handler of
/// SIGTERM, SIGINT and SIGHUP calls it before it dies, so that a runner
/// stopped from outside leaves no port behind (each port runs in a process
/// group of its own, which a signal to the runner's group does not reach).
void kill_all_ports() noexcept;

enum class PortFailure { none, not_running, exited, hung, line_too_long, too_many_bytes, io, cancelled };

class Port {
 public:
  /// `command` runs under /bin/sh -c; `timeout_s` bounds each answer;
  /// `offer_runs` offers the runs encoding at hello.
  Port(std::string command, double timeout_s, bool offer_runs = false);
  ~Port();
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  /// Starts the port (stopping a running one) and exchanges hello. On failure
  /// returns false and says why.
  bool start(std::string* why);
  /// Sends `lines` (pipelined) and collects one answer per line, in order.
  /// Stops at the first line the port does not answer in time or answers by
  /// exiting; then the port is stopped, `why` says what happened, and the
  /// answers so far are returned.
  /// The answers' bytes together may not pass `budget` (then the failure is
  /// too_many_bytes and the port is stopped). `timeout_s` > 0 bounds each
  /// answer of this exchange instead of the port's timeout (the runner's
  /// probes after a hang, PROTOCOL.md "Limits"). Once `*cancel` is true
  /// (another thread's stop), the exchange ends within 0.1 s with the
  /// failure `cancelled`, the port stopped.
  std::vector<std::string> exchange(const std::vector<std::string>& lines, std::string* why,
                                    std::size_t budget = SIZE_MAX, double timeout_s = 0,
                                    const std::atomic<bool>* cancel = nullptr);
  void stop();

  bool running() const noexcept { return pid_ > 0; }
  const std::string& name() const noexcept { return name_; }
  const std::vector<std::string>& views() const noexcept { return views_; }
  const std::optional<std::vector<std::string>>& options() const noexcept { return options_; }
  /// The encoding the port chose at hello.
  protocol::Encoding encoding() const noexcept { return encoding_; }
  int restarts() const noexcept { return restarts_; }
  /// The longest a freshly started port took to give its first answer (the
  /// first exchange after each start, hello excluded), in seconds; 0 while
  /// no fresh port has answered.
  double fresh_answer_s() const noexcept { return fresh_answer_s_; }
  /// Why the last start() or exchange() stopped early (none if it did not).
  PortFailure failure() const noexcept { return failure_; }

 private:
  std::string command_;
  double timeout_s_;
  bool offer_runs_;
  protocol::Encoding encoding_ = protocol::Encoding::plain;
  pid_t pid_ = -1;
  int to_port_ = -1;
  int from_port_ = -1;
  LineReader pending_;  // bytes read past the last full line
  PortFailure failure_ = PortFailure::none;
  std::string name_;
  std::vector<std::string> views_;
  std::optional<std::vector<std::string>> options_;
  int restarts_ = -1;
  bool fresh_ = false;  // started, and not yet asked anything past the hello
  double fresh_answer_s_ = 0;
};

}  // namespace seqpack::conformance
