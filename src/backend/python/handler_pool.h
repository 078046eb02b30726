// HandlerPool: the backend::Model of a `backend: python` model: up to
// `workers` handler processes (handler_process.h), each leased to one
// executor for one batch.
//
// Execute takes an idle process (or starts one, or waits for one), pins it to
// the calling executor's cores (the core plan counts one core per worker: one
// torch thread each), runs the batch and gives the process back. A process
// that dies or hangs fails only its batch (kInternal with the reason: 500);
// the next batch starts a new one after a backoff that doubles with each
// death in the window (100 ms up to 5 s). After `quarantine_after` deaths
// within `death_window`, QuarantineReason() says why, the runner quarantines
// the version (backend.h), and the pool starts nothing more.
//
// Two kinds of model share the pool: a handler model (one UINT8 input of
// handler rows, one answer row per request) and, with `tensors`, a tensor
// model (`isolation: process`: the inputs as the scheduler batched them,
// outputs named as the torch backend names them). WorkerResidentBytes is the
// sum of the live processes' resident memory as last read (after a batch).
// Thread-safety: Execute from several executors at once; the pool's state is
// guarded by mu_, the processes themselves are used by one lessee at a time.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/python/handler_process.h"
#include "common/thread_annotations.h"

namespace inferd::backend::python {

struct HandlerPoolOptions {
  HandlerProcessOptions process;
  int workers = 1;
  std::chrono::milliseconds max_execution{120000};
  int quarantine_after = 5;
  std::chrono::seconds death_window{60};
  bool tensors = false;
  // A tensor model's outputs (empty: output0, output1, ... as returned).
  std::vector<config::TensorSpec> outputs;
};

class HandlerPool : public Model {
 public:
  // Starts the first process (its handler's initialize runs) so that a
  // handler that cannot start fails the load with its reason.
  static StatusOr<std::shared_ptr<HandlerPool>> Create(const HandlerPoolOptions& options);

  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override;
  std::optional<std::string> QuarantineReason() const override;
  int64_t WorkerResidentBytes() const override;

 private:
  explicit HandlerPool(HandlerPoolOptions options) : options_(std::move(options)) {}
  StatusOr<std::unique_ptr<HandlerProcess>> Lease();
  void GiveBack(std::unique_ptr<HandlerProcess> process, pid_t pid);
  StatusOr<std::vector<NamedTensor>> RunTensors(HandlerProcess& process,
                                                const std::vector<NamedTensor>& inputs,
                                                TimePoint deadline) const;
  void NoteDeath(const std::string& reason);

  const HandlerPoolOptions options_;
  mutable Mutex mu_;
  CondVar idle_cv_;
  std::vector<std::unique_ptr<HandlerProcess>> idle_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;  // processes alive, idle or leased, or starting
  std::deque<std::chrono::steady_clock::time_point> deaths_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point restart_after_ GUARDED_BY(mu_){};
  std::optional<std::string> quarantine_ GUARDED_BY(mu_);
  std::map<pid_t, int64_t> resident_ GUARDED_BY(mu_);  // live processes' resident bytes
};

// The cores InitExecutorThread gave the calling executor thread (empty when
// none): where its handler process is pinned.
const std::vector<int>& ExecutorCores();
void SetExecutorCores(const std::vector<int>& cores);

}  // namespace inferd::backend::python
