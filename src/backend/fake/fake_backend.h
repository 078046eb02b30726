// FakeBackend / FakeModel: a backend for unit tests of the scheduler, never a
// stand-in for the product.
//
// A FakeModel echoes its inputs as outputs (output i = input i, renamed to the
// config's output names when given), records every batch it ran, can fail on
// demand, and can hold each Execute until the test releases it (a gate), so
// that tests control concurrency without sleeping.
// FakeBackend::Load makes one per call: its WeightBytes is the size of the
// model file (0 when there is none), a file whose text starts with "fail"
// fails the load, and loads too can be held at a gate, so that repository
// tests control sizes, failures and the order of loads.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace inferd::backend {

class FakeModel : public Model {
 public:
  explicit FakeModel(config::ModelConfig config, int64_t weight_bytes = 0)
      : config_(std::move(config)), weight_bytes_(weight_bytes) {}

  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override;
  int64_t WeightBytes() const override { return weight_bytes_; }
  bool RunsWide() const override { return runs_wide_.load(); }

  // RunsWide() from now on (false by default); set before the model is served.
  void set_runs_wide(bool wide) { runs_wide_.store(wide); }
  // The calling thread's width (FakeBackend::SetCallWidth) at every call, in order.
  std::vector<int> call_threads() const;

  // Every Execute fails with this status until cleared (Status::Ok()).
  void FailWith(Status status);
  // While closed, Execute blocks after recording its batch; Open() releases all.
  void CloseGate();
  void OpenGate();
  // Closes the gate when call number `call` (counting from 1) starts.
  void CloseGateAt(size_t call);
  // Blocks until `n` Execute calls have started (counting from construction).
  void WaitForCalls(size_t n);

  // Batch sizes (first dim of the first input) of every call, in order.
  std::vector<int64_t> batch_sizes() const;
  // The inputs of every call, in order.
  std::vector<std::vector<NamedTensor>> calls() const;
  int max_concurrent() const;

 private:
  config::ModelConfig config_;
  const int64_t weight_bytes_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Status fail_;                                 // guarded by mu_
  bool gate_closed_ = false;                    // guarded by mu_
  size_t close_at_ = 0;                          // guarded by mu_
  std::vector<std::vector<NamedTensor>> calls_;  // guarded by mu_
  int running_ = 0;                              // guarded by mu_
  int max_running_ = 0;                          // guarded by mu_
  std::vector<int> call_threads_;                // guarded by mu_
  std::atomic<bool> runs_wide_{false};
};

class FakeBackend : public Backend {
 public:
  StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& options) override;
  void InitExecutorThread(const std::vector<int>& cores, int num_threads) override;
  // Sets the calling thread's width that FakeModel::call_threads records.
  void SetCallWidth(const std::vector<int>& cores, int num_threads) override;
  void ReleaseCaches() override { ++cache_releases_; }
  int cache_releases() const { return cache_releases_.load(); }

  // While closed, Load blocks after counting the call; OpenLoadGate releases all.
  void CloseLoadGate();
  void OpenLoadGate();
  // Blocks until `n` Load calls have started (counting from construction).
  void WaitForLoads(size_t n);
  size_t loads() const;
  // The model of the last load of `model_path`, if it is still alive.
  std::shared_ptr<FakeModel> LastModel(const std::string& model_path) const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool load_gate_closed_ = false;                                // guarded by mu_
  size_t loads_ = 0;                                             // guarded by mu_
  std::map<std::string, std::weak_ptr<FakeModel>> last_models_;  // guarded by mu_
  std::atomic<int> cache_releases_{0};
};

}  // namespace inferd::backend
