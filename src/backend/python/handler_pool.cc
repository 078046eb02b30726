#include "backend/python/handler_pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

namespace inferd::backend::python {
namespace {

thread_local std::vector<int> executor_cores;

}  // namespace

const std::vector<int>& ExecutorCores() { return executor_cores; }
void SetExecutorCores(const std::vector<int>& cores) { executor_cores = cores; }

StatusOr<std::shared_ptr<HandlerPool>> HandlerPool::Create(const HandlerPoolOptions& options) {
  std::shared_ptr<HandlerPool> pool(new HandlerPool(options));
  ASSIGN_OR_RETURN(std::unique_ptr<HandlerProcess> first, HandlerProcess::Start(options.process));
  MutexLock lock(&pool->mu_);
  pool->resident_[first->pid()] = first->resident_bytes();
  pool->idle_.push_back(std::move(first));
  pool->running_ = 1;
  return pool;
}

int64_t HandlerPool::WorkerResidentBytes() const {
  MutexLock lock(&mu_);
  int64_t total = 0;
  for (const auto& [pid, bytes] : resident_) total += bytes;
  return total;
}

std::optional<std::string> HandlerPool::QuarantineReason() const {
  MutexLock lock(&mu_);
  return quarantine_;
}

StatusOr<std::unique_ptr<HandlerProcess>> HandlerPool::Lease() {
  std::chrono::steady_clock::time_point start_at;
  {
    MutexLock lock(&mu_);
    for (;;) {
      if (quarantine_) return Unavailable("handler quarantined: " + *quarantine_);
      if (!idle_.empty()) {
        auto process = std::move(idle_.back());
        idle_.pop_back();
        return process;
      }
      if (running_ < options_.workers) break;
      idle_cv_.Wait(&mu_);
    }
    ++running_;
    start_at = restart_after_;
  }
  // A restart after deaths waits out its backoff (on this executor, whose
  // core the worker would use anyway).
  std::this_thread::sleep_until(start_at);
  auto started = HandlerProcess::Start(options_.process);
  if (!started.ok()) {
    NoteDeath(started.status().message());
    MutexLock lock(&mu_);
    --running_;
    idle_cv_.Signal();
    return Internal(started.status().message());
  }
  return std::move(*started);
}

void HandlerPool::GiveBack(std::unique_ptr<HandlerProcess> process, pid_t pid) {
  MutexLock lock(&mu_);
  if (process && process->alive()) {
    resident_[pid] = process->resident_bytes();
    idle_.push_back(std::move(process));
  } else {
    resident_.erase(pid);
    --running_;
  }
  idle_cv_.Signal();
}

void HandlerPool::NoteDeath(const std::string& reason) {
  MutexLock lock(&mu_);
  const auto now = std::chrono::steady_clock::now();
  deaths_.push_back(now);
  while (!deaths_.empty() && now - deaths_.front() > options_.death_window) deaths_.pop_front();
  const int recent = static_cast<int>(deaths_.size());
  const auto backoff = std::min<std::chrono::milliseconds>(
      std::chrono::milliseconds(100LL << std::min(recent - 1, 6)), std::chrono::milliseconds(5000));
  restart_after_ = now + backoff;
  spdlog::warn("model '{}': handler process failed ({} in the last {} s): {}",
               options_.process.model_name, recent, options_.death_window.count(), reason);
  if (recent >= options_.quarantine_after && !quarantine_) {
    quarantine_ = "its handler process failed " + std::to_string(recent) + " times within " +
                  std::to_string(options_.death_window.count()) + " s; last: " + reason;
    running_ -= static_cast<int>(idle_.size());
    idle_.clear();  // the idle processes end with the pool's decision
    idle_cv_.SignalAll();
  }
}

StatusOr<std::vector<NamedTensor>> HandlerPool::Execute(const std::vector<NamedTensor>& inputs) {
  if (!options_.tensors && (inputs.size() != 1 || inputs[0].tensor.dtype() != DataType::kUint8 ||
                            inputs[0].tensor.shape().size() != 2)) {
    return InvalidArgument("a handler model takes one UINT8 [batch, bytes] input of handler rows");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<HandlerProcess> process, Lease());
  const pid_t pid = process->pid();
  process->PinTo(ExecutorCores());
  const auto deadline = std::chrono::steady_clock::now() + options_.max_execution;
  StatusOr<std::vector<NamedTensor>> out = [&]() -> StatusOr<std::vector<NamedTensor>> {
    if (options_.tensors) return RunTensors(*process, inputs, deadline);
    ASSIGN_OR_RETURN(Tensor answers, process->Run(inputs[0].tensor, deadline));
    if (answers.shape()[0] != inputs[0].tensor.shape()[0]) {
      return Internal("the handler answered " + std::to_string(answers.shape()[0]) +
                      " items for a batch of " + std::to_string(inputs[0].tensor.shape()[0]) +
                      " (a handler returns one answer per request)");
    }
    std::vector<NamedTensor> named;
    named.push_back({"answer", std::move(answers)});
    return named;
  }();
  const bool died = !process->alive();
  GiveBack(std::move(process), pid);
  if (!out.ok() && died) NoteDeath(out.status().message());
  return out;
}

StatusOr<std::vector<NamedTensor>> HandlerPool::RunTensors(HandlerProcess& process,
                                                           const std::vector<NamedTensor>& inputs,
                                                           TimePoint deadline) const {
  ASSIGN_OR_RETURN(std::vector<Tensor> returned, process.RunTensors(inputs, deadline));
  const auto& specs = options_.outputs;
  if (!specs.empty() && specs.size() != returned.size()) {
    return Internal("forward() returned " + std::to_string(returned.size()) +
                    " tensors but the config lists " + std::to_string(specs.size()) + " outputs");
  }
  std::vector<NamedTensor> out;
  out.reserve(returned.size());
  for (size_t i = 0; i < returned.size(); ++i) {
    std::string name = specs.empty() ? "output" + std::to_string(i) : specs[i].name;
    if (!specs.empty() && returned[i].dtype() != specs[i].dtype) {
      return Internal("output '" + name + "' has datatype " +
                      std::string(DataTypeName(returned[i].dtype())) + " but the config says " +
                      std::string(DataTypeName(specs[i].dtype)));
    }
    out.push_back({std::move(name), std::move(returned[i])});
  }
  return out;
}

}  // namespace inferd::backend::python
