#include "common/tensor_pool.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/thread_annotations.h"

namespace inferd {

struct TensorPool::State {
  struct Buffer {
    std::unique_ptr<std::byte[]> bytes;
    size_t capacity = 0;
  };

  // The deleter of a pooled tensor's owner: runs when its last handle goes.
  struct Recycle {
    std::weak_ptr<State> pool;
    size_t capacity = 0;

    void operator()(std::byte* data) const {
      std::unique_ptr<std::byte[]> bytes(data);
      if (auto state = pool.lock()) state->Return(std::move(bytes), capacity);
    }
  };

  explicit State(Options o) : options(o) {}

  // Keeps `bytes` for reuse, or frees them past max_free_bytes.
  void Return(std::unique_ptr<std::byte[]> bytes, size_t capacity) {
    MutexLock lock(&mu);
    if (free_bytes + capacity > options.max_free_bytes) {
      ++stats.dropped;
      lock.Unlock();
      return;  // `bytes` is freed here, outside the lock
    }
    free.push_back({std::move(bytes), capacity});
    free_bytes += capacity;
  }

  const Options options;
  mutable Mutex mu;
  std::vector<Buffer> free GUARDED_BY(mu);
  size_t free_bytes GUARDED_BY(mu) = 0;
  Stats stats GUARDED_BY(mu);
};

TensorPool::TensorPool() : TensorPool(Options()) {}

TensorPool::TensorPool(Options options) : state_(std::make_shared<State>(options)) {}

TensorPool::~TensorPool() = default;

Tensor TensorPool::AllocateUninitialized(DataType dtype, Shape shape) {
  // Tensor::AllocateUninitialized checks the shape (an invalid one throws
  // there) and makes an empty tensor: neither needs pooled bytes.
  const int64_t bytes = ByteSize(dtype, shape);
  if (bytes <= 0) return Tensor::AllocateUninitialized(dtype, std::move(shape));
  const size_t need = static_cast<size_t>(bytes);

  State::Buffer taken, too_small;
  {
    MutexLock lock(&state_->mu);
    auto& free = state_->free;
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->capacity >= need && (best == free.end() || it->capacity < best->capacity)) best = it;
    }
    if (best != free.end()) {
      taken = std::move(*best);
      ++state_->stats.reused;
    } else if (!free.empty()) {
      // None fits: give up the smallest, so that the buffers kept stay as
      // many as were ever in use at once while their sizes grow.
      best = std::min_element(free.begin(), free.end(),
                              [](const auto& a, const auto& b) { return a.capacity < b.capacity; });
      too_small = std::move(*best);
      ++state_->stats.dropped;
    }
    if (best != free.end()) {
      state_->free_bytes -= taken.bytes ? taken.capacity : too_small.capacity;
      *best = std::move(free.back());
      free.pop_back();
    }
    if (!taken.bytes) ++state_->stats.allocated;
  }
  too_small.bytes.reset();  // freed outside the lock
  if (!taken.bytes) {
    taken.bytes.reset(new std::byte[need]);  // default-initialised: no zero fill
    taken.capacity = need;
  }
  std::byte* data = taken.bytes.get();
  std::shared_ptr<std::byte> owner(taken.bytes.release(), State::Recycle{state_, taken.capacity});
  return Tensor::Borrow(dtype, std::move(shape), std::move(owner), data, need);
}

TensorPool::Stats TensorPool::stats() const {
  MutexLock lock(&state_->mu);
  Stats s = state_->stats;
  s.free_buffers = state_->free.size();
  s.free_bytes = state_->free_bytes;
  return s;
}

}  // namespace inferd
