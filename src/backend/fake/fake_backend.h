// FakeBackend / FakeModel: a backend for unit tests of the scheduler, never a
// stand-in for the product.
//
// A FakeModel echoes its inputs as outputs (output i = input i, renamed to the
// config's output names when given), records every batch it ran, can fail on
// demand, and can hold each Execute until the test releases it (a gate), so
// that tests control concurrency without sleeping.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

#include "backend/backend.h"

namespace inferd::backend {

class FakeModel : public Model {
 public:
  explicit FakeModel(config::ModelConfig config) : config_(std::move(config)) {}

  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override;

  // Every Execute fails with this status until cleared (Status::Ok()).
  void FailWith(Status status);
  // While closed, Execute blocks after recording its batch; Open() releases all.
  void CloseGate();
  void OpenGate();
  // Blocks until `n` Execute calls have started (counting from construction).
  void WaitForCalls(size_t n);

  // Batch sizes (first dim of the first input) of every call, in order.
  std::vector<int64_t> batch_sizes() const;
  // The inputs of every call, in order.
  std::vector<std::vector<NamedTensor>> calls() const;
  int max_concurrent() const;

 private:
  config::ModelConfig config_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Status fail_;                                 // guarded by mu_
  bool gate_closed_ = false;                    // guarded by mu_
  std::vector<std::vector<NamedTensor>> calls_;  // guarded by mu_
  int running_ = 0;                              // guarded by mu_
  int max_running_ = 0;                          // guarded by mu_
};

class FakeBackend : public Backend {
 public:
  StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& options) override;
  void InitExecutorThread(const std::vector<int>&, int) override {}
};

}  // namespace inferd::backend
