// HandlerProcess: one handler worker, a Python process running
// share/inferd/python/inferd_worker.py with the model's handler, and its
// channel (handler_channel.h).
//
// Start spawns it (posix_spawn: nothing but exec runs in the child, safe in a
// threaded server) and waits for its kReady frame: a handler whose import or
// initialize fails comes back as kFailedPrecondition with the worker's own
// message. Run sends one batch and waits for its answers until the deadline;
// on any failure the process is killed and reaped, and the Status says why
// (its exit code or signal, or the deadline). A HandlerProcess that failed is
// dead for good: the pool (handler_pool.h) starts another.
//
// Memory: with a `memory_limit`, the process's resident set (/proc/PID/statm)
// is read after each batch and every kWatchInterval while a batch runs; a
// process over the limit is killed (SIGKILL) and its batch fails with
// "killed: resident X over worker_memory_limit Y". Why not RLIMIT_AS: torch
// and glibc reserve far more address space than they touch, so an address
// limit refuses healthy workers; a cgroup per worker needs a delegated
// cgroup tree that a container rarely gives. Reading statm costs a few us.
// Thread-safety: one caller at a time (the pool leases each process to one
// executor). The destructor kills the process.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "backend/python/handler_channel.h"
#include "common/clock.h"
#include "common/status.h"
#include "common/tensor.h"

namespace inferd::backend::python {

struct HandlerProcessOptions {
  std::string python;         // the interpreter: /usr/bin/python3
  std::string worker_script;  // inferd_worker.py
  std::string model_dir;      // the unpacked archive (handler.py, model.pt, ...)
  std::string handler;        // the manifest's handler
  std::string model_name;
  int batch_size = 1;
  int64_t memory_limit = 0;  // bytes of resident memory; 0 = none
  std::chrono::milliseconds start_timeout{120000};
};

class HandlerProcess {
 public:
  static StatusOr<std::unique_ptr<HandlerProcess>> Start(const HandlerProcessOptions& options);
  ~HandlerProcess();

  // `rows`: the batch's UINT8 [N, W] tensor of handler rows. The answers come
  // back as a UINT8 [N, W'] tensor of handler rows.
  StatusOr<Tensor> Run(const Tensor& rows, TimePoint deadline);
  // A tensor model's batch (tensor_frame.h): its inputs in, its outputs back.
  StatusOr<std::vector<Tensor>> RunTensors(const std::vector<NamedTensor>& inputs,
                                           TimePoint deadline);

  // Pins the process to `cores` (no-op when empty or unchanged).
  void PinTo(const std::vector<int>& cores);
  pid_t pid() const { return pid_; }
  bool alive() const { return pid_ > 0; }
  // Resident bytes as last read (after the last batch); 0 before the first.
  int64_t resident_bytes() const { return resident_; }

 private:
  HandlerProcess(pid_t pid, int fd, int64_t memory_limit)
      : pid_(pid), fd_(fd), memory_limit_(memory_limit) {}
  // Kills (when still running) and reaps the process; `failure` prefixed to
  // how it ended ("exited with code 3", "killed by signal 11 (SIGSEGV)").
  Status Fail(const Status& failure, bool kill_first);
  StatusOr<Tensor> ReadAnswers(TimePoint deadline);
  // Reads the reply's header, watching the memory limit meanwhile; on a
  // failure the process is dead and the Status says why.
  StatusOr<FrameHeader> ReadReplyHeader(TimePoint deadline);
  // kResourceExhausted when the process is over its limit; reads resident_.
  Status CheckMemory();
  // Ends the process after a reply that failed to arrive (`st`).
  Status FailReply(const Status& st);

  pid_t pid_ = -1;
  int fd_ = -1;
  const int64_t memory_limit_;
  int64_t resident_ = 0;
  std::vector<int> pinned_;
};

}  // namespace inferd::backend::python
