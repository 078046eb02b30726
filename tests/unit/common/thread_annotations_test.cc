#include "common/thread_annotations.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace inferd {
namespace {

// The shape annotated classes take: guarded state, a waiting consumer.
class Mailbox {
 public:
  void Put(int v) {
    MutexLock lock(&mu_);
    items_.push_back(v);
    cv_.SignalAll();
  }
  int Take() {
    MutexLock lock(&mu_);
    while (items_.empty()) cv_.Wait(&mu_);
    int v = items_.front();
    items_.erase(items_.begin());
    return v;
  }
  bool TakeWithin(std::chrono::milliseconds timeout, int* out) {
    MutexLock lock(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (items_.empty()) {
      if (!cv_.WaitUntil(&mu_, deadline)) {
        if (items_.empty()) return false;
      }
    }
    *out = items_.front();
    items_.erase(items_.begin());
    return true;
  }
  // Drops the lock around work done without it, then takes it back.
  size_t SizeAfterUnlockedWork() {
    MutexLock lock(&mu_);
    lock.Unlock();
    const bool free_now = mu_.TryLock();
    if (free_now) mu_.Unlock();
    lock.Lock();
    return free_now ? items_.size() : 999;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::vector<int> items_ GUARDED_BY(mu_);
};

TEST(ThreadAnnotationsTest, WaitWakesOnSignalFromAnotherThread) {
  Mailbox box;
  std::thread producer([&] {
    for (int i = 0; i < 100; ++i) box.Put(i);
  });
  for (int i = 0; i < 100; ++i) EXPECT_EQ(box.Take(), i);
  producer.join();
}

TEST(ThreadAnnotationsTest, WaitUntilReturnsFalseWhenNothingArrives) {
  Mailbox box;
  int v = 0;
  EXPECT_FALSE(box.TakeWithin(std::chrono::milliseconds(1), &v));
  box.Put(7);
  EXPECT_TRUE(box.TakeWithin(std::chrono::milliseconds(1), &v));
  EXPECT_EQ(v, 7);
}

TEST(ThreadAnnotationsTest, MutexLockUnlockReleasesTheMutex) {
  Mailbox box;
  box.Put(1);
  EXPECT_EQ(box.SizeAfterUnlockedWork(), 1u);
}

}  // namespace
}  // namespace inferd
