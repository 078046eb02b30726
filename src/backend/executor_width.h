// ExecutorWidth: the intra-op threads of the widest executor a backend has
// been told about (Backend::InitExecutorThread), for backends whose thread
// count is a property of the loaded model rather than of the calling thread
// (XGBoost's nthread, an ONNX Runtime session's intra-op pool), and the cores
// of all executors together (the width of a lone request, which the
// scheduler may run on every idle executor's cores). 1 until an executor is
// noted. Thread-safe (lock-free).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
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
    uint64_t bits = 0;
    for (int c : cores) bits |= c >= 0 && c < 64 ? uint64_t{1} << c : 0;
    cores_.fetch_or(bits);
  }
  int threads() const { return threads_.load(); }
  // The distinct cores of the pinned executors noted (cpu ids below 64),
  // never fewer than threads(): unpinned executors count only as the widest.
  int all_cores() const { return std::max(threads(), std::popcount(cores_.load())); }

 private:
  std::atomic<int> threads_{1};
  std::atomic<uint64_t> cores_{0};
};

}  // namespace inferd::backend
