#include "backend/python/handler_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "backend/python/handler_channel.h"
#include "backend/python/tensor_frame.h"
#include "common/byte_size.h"
#include "common/handler_rows.h"

extern char** environ;

namespace inferd::backend::python {
namespace {

// The worker finds its channel on this descriptor.
constexpr int kChannelFd = 3;

std::string HowItEnded(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string text = "killed by signal " + std::to_string(sig);
    if (const char* name = sigabbrev_np(sig)) text += std::string(" (SIG") + name + ")";
    if (sig == SIGKILL) text += "; the kernel's OOM killer sends this too";
    return text;
  }
  return "ended with status " + std::to_string(status);
}

std::vector<std::string> WorkerEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    // One torch (OpenMP, BLAS) thread per worker: the core plan counts one
    // core for it.
    if (var.rfind("OMP_NUM_THREADS=", 0) == 0 || var.rfind("MKL_NUM_THREADS=", 0) == 0 ||
        var.rfind("OPENBLAS_NUM_THREADS=", 0) == 0 || var.rfind("LD_PRELOAD=", 0) == 0) {
      continue;  // LD_PRELOAD: a sanitizer runtime of the server is not the worker's
    }
    env.push_back(var);
  }
  env.push_back("OMP_NUM_THREADS=1");
  env.push_back("MKL_NUM_THREADS=1");
  env.push_back("OPENBLAS_NUM_THREADS=1");
  env.push_back("PYTHONUNBUFFERED=1");
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<HandlerProcess>> HandlerProcess::Start(const HandlerProcessOptions& o) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Internal(std::string("socketpair: ") + strerror(errno));
  }
  std::vector<std::string> args = {o.python,
                                   "-u",
                                   o.worker_script,
                                   "--fd",
                                   std::to_string(kChannelFd),
                                   "--model-dir",
                                   o.model_dir,
                                   "--handler",
                                   o.handler,
                                   "--model-name",
                                   o.model_name,
                                   "--batch-size",
                                   std::to_string(o.batch_size)};
  std::vector<std::string> env = WorkerEnvironment();
  std::vector<char*> argv = Pointers(args);
  std::vector<char*> envp = Pointers(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], kChannelFd);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: a signal for the server's group (Ctrl-C) is not
  // the worker's; the server ends its workers itself.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, o.python.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return FailedPrecondition("cannot start the handler worker " + o.python + ": " + strerror(rc));
  }
  std::unique_ptr<HandlerProcess> process(new HandlerProcess(pid, fds[0], o.memory_limit));
  FrameHeader header;
  const TimePoint deadline = std::chrono::steady_clock::now() + o.start_timeout;
  Status st = ReadExactly(process->fd_, &header, sizeof header, deadline);
  if (st.ok() && header.kind == FrameKind::kReady) {
    // A handler whose initialize alone takes more than the limit can never serve.
    st = process->CheckMemory();
    if (st.ok()) return process;
    st = FailedPrecondition(st.message() + " right after its initialize");
  }
  if (st.ok() && header.kind == FrameKind::kError && header.payload_bytes < (1u << 20)) {
    std::string text(header.payload_bytes, '\0');
    st = ReadExactly(process->fd_, text.data(), text.size(), deadline);
    if (st.ok()) st = FailedPrecondition(text);
  } else if (st.ok()) {
    st = Internal("unexpected first frame from the handler worker");
  }
  // The worker's own message says why when it sent one; otherwise how the
  // process ended does.
  const bool told = st.code() == StatusCode::kFailedPrecondition;
  Status failed = process->Fail(told ? Status::Ok() : Internal("it did not start: " + st.message()),
                                st.code() == StatusCode::kDeadlineExceeded || told);
  if (told) failed = st;
  return FailedPrecondition("model '" + o.model_name + "': handler '" + o.handler +
                            "' failed to start: " + failed.message());
}

HandlerProcess::~HandlerProcess() {
  if (pid_ > 0) (void)Fail(Status::Ok(), /*kill_first=*/true);
  if (fd_ >= 0) close(fd_);
}

Status HandlerProcess::Fail(const Status& failure, bool kill_first) {
  if (pid_ <= 0) return failure;
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
  int status = 0;
  pid_t done = 0;
  if (!kill_first) {
    // It closed its channel: it is on its way out; give it a moment to tell
    // how it ended before it is killed.
    for (int i = 0; i < 50 && done == 0; ++i) {
      done = waitpid(pid_, &status, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::string ended;
  if (done == 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    ended = kill_first ? "killed by inferd with SIGKILL" : HowItEnded(status);
  } else {
    ended = HowItEnded(status);
  }
  pid_ = -1;
  if (failure.ok()) return failure;
  return Status(failure.code(), failure.message() + " (the handler process " + ended + ")");
}

void HandlerProcess::PinTo(const std::vector<int>& cores) {
  if (cores.empty() || cores == pinned_ || pid_ <= 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores) CPU_SET(c, &set);
  if (sched_setaffinity(pid_, sizeof set, &set) == 0) pinned_ = cores;
}

StatusOr<Tensor> HandlerProcess::Run(const Tensor& rows, TimePoint deadline) {
  if (pid_ <= 0) return Unavailable("handler process is not running");
  const int64_t n = rows.shape().empty() ? 0 : rows.shape()[0];
  const size_t width = n > 0 ? rows.byte_size() / static_cast<size_t>(n) : 0;
  std::vector<iovec> payload;
  payload.reserve(n);
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::byte* row = rows.data() + i * width;
    auto read = ReadHandlerRow(row, width);
    if (!read.ok()) return read.status();
    const size_t size = HandlerRowSize(read->content_type, read->body.size());
    payload.push_back({const_cast<std::byte*>(row), size});
    total += size;
  }
  FrameHeader header{FrameKind::kBatch, static_cast<uint32_t>(n), total};
  Status sent = SendFrame(fd_, header, payload);
  if (!sent.ok()) return Fail(Internal("handler process died before its batch was sent"), false);
  return ReadAnswers(deadline);
}

Status HandlerProcess::CheckMemory() {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/statm");
  int64_t size = 0, pages = 0;
  if (in >> size >> pages) resident_ = pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
  if (memory_limit_ <= 0 || resident_ <= memory_limit_) return Status::Ok();
  return ResourceExhausted("killed: resident " + FormatBytes(resident_) +
                           " over worker_memory_limit " + FormatBytes(memory_limit_));
}

Status HandlerProcess::FailReply(const Status& st) {
  if (st.code() == StatusCode::kResourceExhausted) {
    return Fail(Internal(st.message()), /*kill_first=*/true);
  }
  if (st.code() == StatusCode::kDeadlineExceeded) {
    return Fail(Internal("the handler did not answer within max_execution_ms; it was given up"),
                /*kill_first=*/true);
  }
  return Fail(Internal("the handler process died while running this batch"), false);
}

StatusOr<FrameHeader> HandlerProcess::ReadReplyHeader(TimePoint deadline) {
  FrameHeader header;
  ReadWatch watch;
  if (memory_limit_ > 0) watch = [this] { return CheckMemory(); };
  Status st = ReadExactly(fd_, &header, sizeof header, deadline, watch);
  if (!st.ok()) return FailReply(st);
  return header;
}

StatusOr<Tensor> HandlerProcess::ReadAnswers(TimePoint deadline) {
  ASSIGN_OR_RETURN(FrameHeader header, ReadReplyHeader(deadline));
  Status st;
  if (header.kind == FrameKind::kAnswers && header.rows > 0 &&
      header.payload_bytes % header.rows == 0) {
    const int64_t width = static_cast<int64_t>(header.payload_bytes / header.rows);
    Tensor out = Tensor::AllocateUninitialized(DataType::kUint8, {header.rows, width});
    st = ReadExactly(fd_, out.mutable_data(), out.byte_size(), deadline);
    if (st.ok()) st = CheckMemory();
    if (st.ok()) return out;
  } else if (header.kind == FrameKind::kError && header.payload_bytes < (64u << 20)) {
    std::string text(header.payload_bytes, '\0');
    st = ReadExactly(fd_, text.data(), text.size(), deadline);
    if (st.ok()) st = CheckMemory();
    // The handler raised (the process lives on); a 4xx PredictionException
    // says the request was bad.
    if (st.ok())
      return header.rows >= 400 && header.rows < 500 ? InvalidArgument(text) : Internal(text);
  } else {
    return Fail(Internal("malformed answer frame from the handler process"), true);
  }
  return FailReply(st);
}

StatusOr<std::vector<Tensor>> HandlerProcess::RunTensors(const std::vector<NamedTensor>& inputs,
                                                         TimePoint deadline) {
  if (pid_ <= 0) return Unavailable("worker process is not running");
  std::string heads;
  ASSIGN_OR_RETURN(std::vector<iovec> payload, TensorPayload(inputs, &heads));
  uint64_t total = 0;
  for (const iovec& piece : payload) total += piece.iov_len;
  FrameHeader header{FrameKind::kTensors, static_cast<uint32_t>(inputs.size()), total};
  if (!SendFrame(fd_, header, payload).ok()) {
    return Fail(Internal("the worker process died before its batch was sent"), false);
  }
  ASSIGN_OR_RETURN(FrameHeader reply, ReadReplyHeader(deadline));
  if (reply.kind == FrameKind::kTensors) {
    auto outputs = ReadTensors(fd_, reply.rows, reply.payload_bytes, deadline, {});
    if (!outputs.ok()) return FailReply(outputs.status());
    Status st = CheckMemory();
    if (!st.ok()) return FailReply(st);
    return outputs;
  }
  if (reply.kind == FrameKind::kError && reply.payload_bytes < (64u << 20)) {
    std::string text(reply.payload_bytes, '\0');
    Status st = ReadExactly(fd_, text.data(), text.size(), deadline);
    if (st.ok()) st = CheckMemory();
    if (st.ok()) return Internal(text);  // forward() raised: the process lives on
    return FailReply(st);
  }
  return Fail(Internal("malformed answer frame from the worker process"), true);
}

}  // namespace inferd::backend::python
