#include "backend/fake/fake_backend.h"

#include <algorithm>
#include <fstream>

namespace inferd::backend {
namespace {

int& ThreadWidth() {
  thread_local int threads = 1;
  return threads;
}

int WidthOf(const std::vector<int>& cores, int num_threads) {
  return cores.empty() ? std::max(num_threads, 1) : static_cast<int>(cores.size());
}

}  // namespace

StatusOr<std::vector<NamedTensor>> FakeModel::Execute(const std::vector<NamedTensor>& inputs) {
  std::unique_lock<std::mutex> lock(mu_);
  calls_.push_back(inputs);
  call_threads_.push_back(ThreadWidth());
  if (calls_.size() == close_at_) gate_closed_ = true;
  ++running_;
  max_running_ = std::max(max_running_, running_);
  cv_.notify_all();
  cv_.wait(lock, [&] { return !gate_closed_; });
  --running_;
  if (!fail_.ok()) return fail_;
  std::vector<NamedTensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = i < config_.outputs.size() ? config_.outputs[i].name
                                                  : "output" + std::to_string(i);
    out.push_back({name, inputs[i].tensor});
  }
  return out;
}

std::vector<int> FakeModel::call_threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return call_threads_;
}

void FakeBackend::InitExecutorThread(const std::vector<int>& cores, int num_threads) {
  ThreadWidth() = WidthOf(cores, num_threads);
}

void FakeBackend::SetCallWidth(const std::vector<int>& cores, int num_threads) {
  ThreadWidth() = WidthOf(cores, num_threads);
}

void FakeModel::FailWith(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_ = std::move(status);
}

void FakeModel::CloseGate() {
  std::lock_guard<std::mutex> lock(mu_);
  gate_closed_ = true;
}

void FakeModel::OpenGate() {
  std::lock_guard<std::mutex> lock(mu_);
  gate_closed_ = false;
  cv_.notify_all();
}

void FakeModel::CloseGateAt(size_t call) {
  std::lock_guard<std::mutex> lock(mu_);
  close_at_ = call;
}

void FakeModel::WaitForCalls(size_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return calls_.size() >= n; });
}

std::vector<int64_t> FakeModel::batch_sizes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> sizes;
  for (const auto& c : calls_) sizes.push_back(c.empty() ? 0 : c[0].tensor.shape()[0]);
  return sizes;
}

std::vector<std::vector<NamedTensor>> FakeModel::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

int FakeModel::max_concurrent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_running_;
}

StatusOr<std::shared_ptr<Model>> FakeBackend::Load(const LoadOptions& options) {
  std::string text;
  int64_t bytes = 0;
  if (std::ifstream in(options.model_path, std::ios::binary); in) {
    std::getline(in, text);
    in.clear();
    in.seekg(0, std::ios::end);
    bytes = static_cast<int64_t>(in.tellg());
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    ++loads_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !load_gate_closed_; });
  }
  if (text.rfind("fail", 0) == 0) {
    return InvalidArgument(options.model_path + ": fake load failure");
  }
  auto model = std::make_shared<FakeModel>(options.config, bytes);
  std::lock_guard<std::mutex> lock(mu_);
  last_models_[options.model_path] = model;
  return std::shared_ptr<Model>(std::move(model));
}

void FakeBackend::CloseLoadGate() {
  std::lock_guard<std::mutex> lock(mu_);
  load_gate_closed_ = true;
}

void FakeBackend::OpenLoadGate() {
  std::lock_guard<std::mutex> lock(mu_);
  load_gate_closed_ = false;
  cv_.notify_all();
}

void FakeBackend::WaitForLoads(size_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return loads_ >= n; });
}

size_t FakeBackend::loads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loads_;
}

std::shared_ptr<FakeModel> FakeBackend::LastModel(const std::string& model_path) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = last_models_.find(model_path);
  return it == last_models_.end() ? nullptr : it->second.lock();
}

}  // namespace inferd::backend
