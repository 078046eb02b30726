#include "common/thread_slots.h"

#include <cassert>
#include <utility>

namespace inferd {

void ThreadSlots::AssertLockedBy([[maybe_unused]] Mutex* held) const { assert(held == mu_); }

void ThreadSlots::Start(int n, Body body) {
  body_ = std::move(body);
  for (int i = 0; i < n; ++i) {
    threads_.emplace_back([body = body_, i] { body(i, 0); });
  }
}

bool ThreadSlots::Recycle(std::function<void()> after_exit) {
  if (stopped_) return false;
  ++generation_;
  after_exit_ = std::move(after_exit);
  return true;
}

void ThreadSlots::HandOver(int slot) {
  const size_t i = static_cast<size_t>(slot);
  std::thread self = std::move(threads_[i]);
  ++recycled_;
  threads_[i] = std::thread([body = body_, after_exit = after_exit_, generation = generation_, slot,
                             self = std::move(self)]() mutable {
    self.join();
    if (after_exit) after_exit();
    body(slot, generation);
  });
}

bool ThreadSlots::Abandon(int slot) {
  if (stopped_) return false;
  const size_t i = static_cast<size_t>(slot);
  threads_[i].detach();
  ++abandoned_;
  threads_[i] = std::thread([body = body_, generation = generation_, slot] { body(slot, generation); });
  return true;
}

std::vector<std::thread> ThreadSlots::Stop() {
  stopped_ = true;
  std::vector<std::thread> threads;
  threads.swap(threads_);
  return threads;
}

}  // namespace inferd
