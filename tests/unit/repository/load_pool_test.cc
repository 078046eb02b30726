// LoadPool: jobs run on its threads; Recycle replaces each thread once it has
// finished its current job, so that per-thread state (thread_local caches)
// goes with the old thread; the destructor runs what is queued and joins.
#include "repository/internal/load_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace inferd::repository::internal {
namespace {

std::thread::id RunOn(LoadPool& pool) {
  std::promise<std::thread::id> where;
  auto future = where.get_future();
  pool.Post([&where] { where.set_value(std::this_thread::get_id()); });
  return future.get();
}

TEST(LoadPool, RecycleReplacesTheThreadAndItsThreadLocalState) {
  std::atomic<int> inits{0}, exits{0};
  static thread_local int per_thread = 0;
  LoadPool pool(1, [&inits] { ++inits; }, [&exits] { ++exits; });
  const auto first = RunOn(pool);
  pool.Post([] { per_thread = 42; });
  std::promise<int> seen;
  pool.Post([&seen] { seen.set_value(per_thread); });
  EXPECT_EQ(seen.get_future().get(), 42) << "the same thread keeps its state";
  pool.Recycle();
  std::thread::id second;
  for (int i = 0; i < 1000 && (second = RunOn(pool)) == first; ++i) {
    std::this_thread::yield();
  }
  EXPECT_NE(second, first);
  std::promise<int> after;
  pool.Post([&after] { after.set_value(per_thread); });
  EXPECT_EQ(after.get_future().get(), 0) << "a new thread starts without the old one's state";
  EXPECT_EQ(pool.recycled(), 1);
  EXPECT_EQ(inits.load(), 2);
  EXPECT_EQ(exits.load(), 1) << "after_exit ran once the old thread was gone";
}

TEST(LoadPool, AJobRunningWhenRecycleIsCalledFinishesFirst) {
  LoadPool pool(2, nullptr);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> done{0};
  pool.Post([&] {
    pool.Recycle();  // from a job, as the repository does
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
    ++done;
  });
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  std::set<std::thread::id> seen;
  for (int i = 0; i < 4; ++i) seen.insert(RunOn(pool));
  // The jobs above may run on another thread before the released one wakes:
  // wait for it (a bound far beyond any machine's speed) rather than assume.
  for (int i = 0; i < 60000 && done.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(done.load(), 1) << "the job running when Recycle was called finished";
  EXPECT_GE(pool.recycled(), 1);
}

TEST(LoadPool, TheDestructorRunsQueuedJobsAfterARecycle) {
  std::atomic<int> ran{0};
  {
    LoadPool pool(2, nullptr);
    pool.Recycle();
    for (int i = 0; i < 20; ++i) pool.Post([&ran] { ++ran; });
    pool.Recycle();
  }
  EXPECT_EQ(ran.load(), 20);
}

}  // namespace
}  // namespace inferd::repository::internal
