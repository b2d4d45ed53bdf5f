// A port: a command speaking the conformance protocol on its stdin/stdout.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "seqpack/conformance/protocol.hpp"

namespace seqpack::conformance {

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
  std::vector<std::string> exchange(const std::vector<std::string>& lines, std::string* why);
  void stop();

  bool running() const noexcept { return pid_ > 0; }
  const std::string& name() const noexcept { return name_; }
  const std::vector<std::string>& views() const noexcept { return views_; }
  /// The encoding the port chose at hello.
  Encoding encoding() const noexcept { return encoding_; }
  int restarts() const noexcept { return restarts_; }

 private:
  std::string command_;
  double timeout_s_;
  bool offer_runs_;
  Encoding encoding_ = Encoding::plain;
  pid_t pid_ = -1;
  int to_port_ = -1;
  int from_port_ = -1;
  std::string pending_;  // bytes read past the last full line
  std::string name_;
  std::vector<std::string> views_;
  int restarts_ = -1;
};

}  // namespace seqpack::conformance
