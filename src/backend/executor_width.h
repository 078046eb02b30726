// ExecutorWidth: the intra-op threads of the widest executor a backend has
// been told about (Backend::InitExecutorThread), for backends whose thread
// count is a property of the loaded model rather than of the calling thread
// (XGBoost's nthread, an ONNX Runtime session's intra-op pool). 1 until an
// executor is noted. Thread-safe (lock-free).
#pragma once

#include <atomic>
#include <vector>

namespace inferd::backend {

class ExecutorWidth {
 public:
  // `cores` as InitExecutorThread gets them; with none, `num_threads` counts.
  void Note(const std::vector<int>& cores, int num_threads) {
    const int n = cores.empty() ? num_threads : static_cast<int>(cores.size());
    int seen = threads_.load();
    while (n > seen && !threads_.compare_exchange_weak(seen, n)) {
    }
  }
  int threads() const { return threads_.load(); }

 private:
  std::atomic<int> threads_{1};
};

}  // namespace inferd::backend
