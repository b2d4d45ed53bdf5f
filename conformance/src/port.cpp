// Port processes: spawning, pipelined exchange with per-answer time limits.
#include "seqpack/conformance/port.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <nlohmann/json.hpp>

#include "seqpack/conformance/protocol.hpp"

namespace seqpack::conformance {
namespace {

using Clock = std::chrono::steady_clock;

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

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
  pending_.clear();
}

bool Port::start(std::string* why) {
  stop();
  ++restarts_;
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) {
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
  to_port_ = in[1];
  from_port_ = out[0];
  set_nonblocking(to_port_);
  set_nonblocking(from_port_);

  const auto answers = exchange({std::string("{\"type\":\"hello\",\"protocol\":\"") + kProtocol + "\"" +
                                 (offer_runs_ ? ",\"encodings\":[\"runs\"]}" : "}")},
                                why);
  if (answers.empty()) return false;
  try {
    const auto hello = nlohmann::json::parse(answers[0]);
    if (hello.value("type", "") != "hello" || hello.value("protocol", "") != kProtocol) {
      *why = "the port's hello does not speak " + std::string(kProtocol) + ": " + answers[0].substr(0, 200);
      stop();
      return false;
    }
    name_ = hello.value("name", command_);
    views_ = hello.value("views", std::vector<std::string>{});
    encoding_ = offer_runs_ && hello.value("encoding", "") == "runs" ? Encoding::runs : Encoding::plain;
  } catch (const std::exception& e) {
    *why = std::string("the port's hello is not valid: ") + e.what();
    stop();
    return false;
  }
  return true;
}

std::vector<std::string> Port::exchange(const std::vector<std::string>& lines, std::string* why) {
  std::vector<std::string> answers;
  if (!running()) {
    *why = "the port is not running";
    return answers;
  }
  std::string outgoing;
  for (const auto& l : lines) outgoing += l + "\n";
  std::size_t written = 0;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
  char buf[1 << 16];
  while (answers.size() < lines.size()) {
    // Complete lines already buffered.
    const auto nl = pending_.find('\n');
    if (nl != std::string::npos) {
      answers.push_back(pending_.substr(0, nl));
      pending_.erase(0, nl + 1);
      deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
      continue;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      *why = "no answer within " + std::to_string(timeout_s_) + " s (hung)";
      stop();
      return answers;
    }
    pollfd fds[2] = {{from_port_, POLLIN, 0}, {to_port_, POLLOUT, 0}};
    const int nfds = written < outgoing.size() ? 2 : 1;
    if (poll(fds, static_cast<nfds_t>(nfds), static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) {
      *why = std::string("poll: ") + std::strerror(errno);
      stop();
      return answers;
    }
    if (nfds == 2 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = write(to_port_, outgoing.data() + written, outgoing.size() - written);
      if (n > 0) {
        written += static_cast<std::size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        *why = "the port closed its input (exited)";
        stop();
        return answers;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t n = read(from_port_, buf, sizeof buf);
      if (n > 0) {
        pending_.append(buf, static_cast<std::size_t>(n));
        if (pending_.size() > kMaxLineBytes * 2) {
          *why = "the port's answer line exceeds " + std::to_string(kMaxLineBytes * 2) + " bytes";
          stop();
          return answers;
        }
      } else if (n == 0) {
        int status = 0;
        const pid_t pid = pid_;
        stop();
        (void)pid;
        (void)status;
        *why = "the port exited (crashed) before answering";
        return answers;
      }
    }
  }
  return answers;
}

}  // namespace seqpack::conformance
