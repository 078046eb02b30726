// ThreadSlots: Recycle makes each slot's thread hand over to a new one that
// joins it, runs after_exit, then runs the body again; Stop gives back the
// threads to join, and none is replaced after it.
#include "common/thread_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "unit/support/eventually.h"

namespace inferd {
namespace {

// Slots whose threads wait for a Recycle or the stop, as the owners' loops do.
class Owner {
 public:
  explicit Owner(int n) {
    MutexLock lock(&mu_);
    slots_.AssertLockedBy(&mu_);
    slots_.Start(n, [this](int slot, uint64_t generation) { Run(slot, generation); });
  }
  ~Owner() { Stop(); }

  void Stop() {
    std::vector<std::thread> threads;
    {
      MutexLock lock(&mu_);
      stopping_ = true;
      slots_.AssertLockedBy(&mu_);
      threads = slots_.Stop();
    }
    cv_.SignalAll();
    for (auto& t : threads) t.join();
  }
  bool Recycle(std::function<void()> after_exit) {
    bool marked;
    {
      MutexLock lock(&mu_);
      slots_.AssertLockedBy(&mu_);
      marked = slots_.Recycle(std::move(after_exit));
    }
    cv_.SignalAll();
    return marked;
  }
  int recycled() {
    MutexLock lock(&mu_);
    slots_.AssertLockedBy(&mu_);
    return slots_.recycled();
  }
  std::multiset<std::pair<int, uint64_t>> runs() {
    MutexLock lock(&mu_);
    return runs_;
  }
  // Runs that found a thread_local set by an earlier run: the same thread.
  int again() {
    MutexLock lock(&mu_);
    return again_;
  }

 private:
  void Run(int slot, uint64_t generation) {
    MutexLock lock(&mu_);
    slots_.AssertLockedBy(&mu_);
    runs_.insert({slot, generation});
    static thread_local bool ran_here = false;
    if (ran_here) ++again_;
    ran_here = true;
    while (!stopping_ && !slots_.Stale(generation)) cv_.Wait(&mu_);
    if (slots_.Stale(generation)) slots_.HandOver(slot);
  }

  Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::multiset<std::pair<int, uint64_t>> runs_ GUARDED_BY(mu_);
  int again_ GUARDED_BY(mu_) = 0;
  ThreadSlots slots_{&mu_};
};

TEST(ThreadSlots, ARecycleRunsEachSlotAgainOnANewThreadAfterAfterExit) {
  Owner owner(2);
  ASSERT_TRUE(test_support::Eventually([&] { return owner.runs().size() == 2; }));
  std::atomic<int> exits{0};
  ASSERT_TRUE(owner.Recycle([&] { ++exits; }));
  ASSERT_TRUE(test_support::Eventually([&] { return owner.runs().size() == 4; }));
  EXPECT_EQ(exits.load(), 2);
  EXPECT_EQ(owner.recycled(), 2);
  const std::multiset<std::pair<int, uint64_t>> expected = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  EXPECT_EQ(owner.runs(), expected);
  EXPECT_EQ(owner.again(), 0) << "every run on a thread of its own";
}

TEST(ThreadSlots, TwoRecyclesEndWithTheSlotOnTheLatestGeneration) {
  Owner owner(1);
  ASSERT_TRUE(owner.Recycle(nullptr));
  ASSERT_TRUE(owner.Recycle(nullptr));
  ASSERT_TRUE(test_support::Eventually([&] { return owner.runs().count({0, 2}) == 1; }));
  EXPECT_LE(owner.recycled(), 2);
  EXPECT_EQ(owner.runs().count({0, 1}) + 1, static_cast<size_t>(owner.recycled()));
}

TEST(ThreadSlots, StopJoinsEveryThreadAndEndsReplacements) {
  for (int round = 0; round < 20; ++round) {
    Owner owner(2);
    owner.Recycle(nullptr);
    if (round % 2) owner.Recycle(nullptr);
    owner.Stop();  // joins predecessors and successors alike (ASan/TSan: no leak, no race)
    EXPECT_FALSE(owner.Recycle(nullptr));
    const int after = owner.recycled();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(owner.recycled(), after);
  }
}

}  // namespace
}  // namespace inferd
