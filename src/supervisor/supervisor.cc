#include "supervisor/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "supervisor/exit_cause.h"
#include "supervisor/listening_sockets.h"

namespace inferd::supervisor {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A child that lived less than this before dying counts as dying young.
constexpr auto kYoung = std::chrono::seconds(30);
constexpr int kMaxBackoffSeconds = 30;

struct Child {
  pid_t pid = -1;
  int ready_fd = -1;  // read end of the ready pipe; -1 once read
};

Child StartChild(const std::vector<std::string>& args) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return {};
  std::vector<std::string> full = args;
  full.push_back("--ready-fd");
  full.push_back(std::to_string(ready[1]));
  std::vector<char*> argv;
  for (auto& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::fcntl(ready[1], F_SETFD, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(ready[1]);
  if (pid < 0) {
    ::close(ready[0]);
    return {};
  }
  return {pid, ready[0]};
}

class Supervisor {
 public:
  explicit Supervisor(const SupervisorOptions& options) : options_(options) {}

  int Run() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGCHLD}) sigaddset(&set, sig);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC);
    if (signal_fd_ < 0) {
      spdlog::error("supervisor: signalfd: {}", std::strerror(errno));
      return 1;
    }
    auto sockets = ListeningSockets::Open(options_.bind, options_.http_port,
                                          options_.management_port, options_.metrics_port,
                                          options_.grpc_port);
    if (!sockets.ok()) {
      spdlog::error("http: {}", sockets.status().message());
      return 1;
    }
    sockets_ = *sockets;
    if (!PrepareStateDir()) return Finish(1);
    int young_deaths = 0;
    while (true) {
      std::vector<std::string> args = options_.argv;
      args.insert(args.end(), {"--serving-sockets", sockets_.Describe(), "--restarts",
                               std::to_string(restarts_)});
      // A --state-dir given by hand is in argv already.
      if (own_state_dir_) args.insert(args.end(), {"--state-dir", state_dir_});
      if (!previous_exit_.empty()) args.insert(args.end(), {"--previous-exit", previous_exit_});
      const auto started = SteadyClock::now();
      Child child = StartChild(args);
      if (child.pid < 0) {
        spdlog::error("supervisor: cannot start the serving process: {}", std::strerror(errno));
        return Finish(1);
      }
      spdlog::info("supervisor: serving process {} started{}", child.pid,
                   restarts_ ? " (restart " + std::to_string(restarts_) + ")" : "");
      bool ready = false;
      const int status = WaitForChild(child, &ready);
      const std::string cause = DescribeExit(status);
      if (stopping_) {
        spdlog::info("supervisor: serving process {} ended ({}) after {}", child.pid, cause,
                     stop_signal_ == SIGTERM ? "SIGTERM" : "SIGINT");
        return Finish(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
      }
      if (!ready && WIFEXITED(status)) return Finish(WEXITSTATUS(status));
      const auto lived = SteadyClock::now() - started;
      young_deaths = lived < kYoung ? young_deaths + 1 : 0;
      const int backoff =
          young_deaths <= 1 ? 0 : std::min(kMaxBackoffSeconds, 1 << std::min(young_deaths - 2, 5));
      ++restarts_;
      previous_exit_ = cause;
      spdlog::error(
          "supervisor: serving process {} died unasked ({}) after {:.1f} s{}; starting a new "
          "one {} (restart {})",
          child.pid, cause, std::chrono::duration<double>(lived).count(),
          ready ? "" : ", before it was ready",
          backoff ? "in " + std::to_string(backoff) + " s (it keeps dying)" : "at once", restarts_);
      if (backoff > 0 && !WaitOrStop(SteadyClock::now() + std::chrono::seconds(backoff))) {
        return Finish(0);
      }
    }
  }

 private:
  bool PrepareStateDir() {
    std::error_code ec;
    if (options_.state_dir.empty()) {
      char dir[] = "/tmp/inferd-state-XXXXXX";
      if (!::mkdtemp(dir)) {
        spdlog::error("supervisor: cannot make a state dir under /tmp: {}", std::strerror(errno));
        return false;
      }
      state_dir_ = dir;
      own_state_dir_ = true;
      return true;
    }
    state_dir_ = options_.state_dir;
    std::filesystem::create_directories(state_dir_, ec);
    if (ec) {
      spdlog::error("supervisor: cannot make --state-dir {}: {}", state_dir_, ec.message());
      return false;
    }
    return true;
  }

  int Finish(int code) {
    sockets_.Close();
    if (own_state_dir_) {
      std::error_code ec;
      std::filesystem::remove_all(state_dir_, ec);
    }
    return code;
  }

  // The signal read, or 0.
  int ReadSignal() {
    signalfd_siginfo info{};
    if (::read(signal_fd_, &info, sizeof(info)) != sizeof(info)) return 0;
    return static_cast<int>(info.ssi_signo);
  }

  // Until the child ends; returns its wait status. Forwards the signals.
  int WaitForChild(Child& child, bool* ready) {
    auto kill_at = SteadyClock::time_point::max();
    while (true) {
      pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {child.ready_fd, POLLIN, 0}};
      int timeout = -1;
      if (kill_at != SteadyClock::time_point::max()) {
        timeout = static_cast<int>(std::max<int64_t>(
            0, std::chrono::duration_cast<milliseconds>(kill_at - SteadyClock::now()).count()));
      }
      ::poll(fds, child.ready_fd >= 0 ? 2 : 1, timeout);
      if (child.ready_fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
        char byte = 0;
        *ready = ::read(child.ready_fd, &byte, 1) == 1;
        ::close(child.ready_fd);
        child.ready_fd = -1;
      }
      if (fds[0].revents & POLLIN) {
        const int sig = ReadSignal();
        if (sig == SIGHUP) {
          ::kill(child.pid, SIGHUP);
        } else if ((sig == SIGTERM || sig == SIGINT) && !stopping_) {
          stopping_ = true;
          stop_signal_ = sig;
          ::kill(child.pid, sig);
          // The child's copies keep serving through the drain; once it
          // closes them the ports refuse, as without a supervisor.
          sockets_.Close();
          kill_at = SteadyClock::now() +
                    std::chrono::duration_cast<SteadyClock::duration>(
                        std::chrono::duration<double>(options_.drain_timeout_s + 10));
        }
      }
      int status = 0;
      if (::waitpid(child.pid, &status, WNOHANG) == child.pid) {
        if (child.ready_fd >= 0) ::close(child.ready_fd);
        return status;
      }
      if (SteadyClock::now() >= kill_at) {
        spdlog::warn("supervisor: serving process {} still runs {} s after the drain's end: "
                     "SIGKILL", child.pid, 10);
        ::kill(child.pid, SIGKILL);
        kill_at = SteadyClock::time_point::max();
      }
    }
  }

  // Waits until `until`; false when SIGTERM or SIGINT came meanwhile.
  bool WaitOrStop(SteadyClock::time_point until) {
    while (SteadyClock::now() < until) {
      pollfd fd{signal_fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<milliseconds>(until - SteadyClock::now());
      if (::poll(&fd, 1, static_cast<int>(std::max<int64_t>(1, left.count()))) > 0) {
        const int sig = ReadSignal();
        if (sig == SIGTERM || sig == SIGINT) return false;
      }
    }
    return true;
  }

  const SupervisorOptions options_;
  ListeningSockets sockets_;
  int signal_fd_ = -1;
  std::string state_dir_;
  bool own_state_dir_ = false;
  int restarts_ = 0;
  std::string previous_exit_;
  bool stopping_ = false;
  int stop_signal_ = 0;
};

}  // namespace

int RunSupervisor(const SupervisorOptions& options) { return Supervisor(options).Run(); }

}  // namespace inferd::supervisor
