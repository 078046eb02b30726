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
// Thread-safety: one caller at a time (the pool leases each process to one
// executor). The destructor kills the process.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

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
  std::chrono::milliseconds start_timeout{120000};
};

class HandlerProcess {
 public:
  static StatusOr<std::unique_ptr<HandlerProcess>> Start(const HandlerProcessOptions& options);
  ~HandlerProcess();

  // `rows`: the batch's UINT8 [N, W] tensor of handler rows. The answers come
  // back as a UINT8 [N, W'] tensor of handler rows.
  StatusOr<Tensor> Run(const Tensor& rows, TimePoint deadline);

  // Pins the process to `cores` (no-op when empty or unchanged).
  void PinTo(const std::vector<int>& cores);
  pid_t pid() const { return pid_; }
  bool alive() const { return pid_ > 0; }

 private:
  HandlerProcess(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  // Kills (when still running) and reaps the process; `failure` prefixed to
  // how it ended ("exited with code 3", "killed by signal 11 (SIGSEGV)").
  Status Fail(const Status& failure, bool kill_first);
  StatusOr<Tensor> ReadAnswers(TimePoint deadline);

  pid_t pid_ = -1;
  int fd_ = -1;
  std::vector<int> pinned_;
};

}  // namespace inferd::backend::python
