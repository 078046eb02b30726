// ThreadSlots: a fixed number of slots, each run by one thread at a time, whose
// threads can be replaced by new ones while the owner goes on.
//
// What libtorch keeps per thread (ideep's convolution cache, its primitives,
// the OpenMP team, the allocator's thread cache) is freed only when the thread
// ends. An owner of long-lived worker threads (the repository's load threads,
// the scheduler's executors) frees it by Recycle: each slot's thread, at a
// moment of its choosing (between jobs), sees that it is Stale, calls HandOver
// and returns. Its successor joins it, runs the `after_exit` given to Recycle
// (the owner hands the freed memory back), then runs the slot's body again
// with the new generation.
//
// The owner's mutex (given at construction) guards the slots: the owner's
// threads check Stale() under it, in the same loop that waits on the owner's
// condition variable, so that a Recycle made under the lock is never missed.
// After Recycle the owner wakes its threads itself.
//
//   void Worker::Run(int slot, uint64_t generation) {
//     MutexLock lock(&mu_);
//     while (true) {
//       while (!stopping_ && !work() && !slots_.Stale(generation)) cv_.Wait(&mu_);
//       if (slots_.Stale(generation)) { slots_.HandOver(slot); return; }
//       ...
//     }
//   }
//
// Stop (under the lock) ends replacements and gives back the last thread of
// each slot: the owner wakes its threads, then joins those without the lock.
// A successor joins its predecessor, so joining the last of each slot joins
// every thread ever started.
// Thread-safety: every method requires the owner's mutex (the owner calls
// AssertLockedBy once it holds it).
#pragma once

#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"

namespace inferd {

class ThreadSlots {
 public:
  // A slot's thread body; it is called without the lock held.
  using Body = std::function<void(int slot, uint64_t generation)>;

  explicit ThreadSlots(Mutex* mu) : mu_(mu) {}
  ThreadSlots(const ThreadSlots&) = delete;
  ThreadSlots& operator=(const ThreadSlots&) = delete;

  // Starts `n` threads running body(slot, 0).
  void Start(int n, Body body) REQUIRES(mu_);
  // Marks every slot's thread for replacement. False (and nothing marked)
  // once stopped.
  bool Recycle(std::function<void()> after_exit) REQUIRES(mu_);
  // Whether the thread started with `generation` is to hand over its slot.
  bool Stale(uint64_t generation) const REQUIRES(mu_) {
    return !stopped_ && generation != generation_;
  }
  // Called by slot `slot`'s own thread, which then returns from its body: a
  // successor takes the slot (see the top of the file).
  void HandOver(int slot) REQUIRES(mu_);
  // Gives up slot `slot`'s thread, stuck in work that may never end (a hung
  // forward): it is detached, never joined, and must leave without touching
  // the slot when it returns; a new thread takes the slot at once, running
  // the body with the current generation. False (nothing done) once stopped.
  bool Abandon(int slot) REQUIRES(mu_);
  // Threads given up so far.
  int abandoned() const REQUIRES(mu_) { return abandoned_; }
  // No more replacements; the threads to join, without the lock.
  std::vector<std::thread> Stop() REQUIRES(mu_);
  // Threads replaced so far.
  int recycled() const REQUIRES(mu_) { return recycled_; }
  // Tells the analysis that the owner's `held` is the mutex given at
  // construction (clang cannot see that slots_.mu_ is the owner's mu_).
  void AssertLockedBy(Mutex* held) const REQUIRES(held) ASSERT_CAPABILITY(mu_);

 private:
  Mutex* const mu_;
  Body body_ GUARDED_BY(mu_);
  std::function<void()> after_exit_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
  uint64_t generation_ GUARDED_BY(mu_) = 0;
  int recycled_ GUARDED_BY(mu_) = 0;
  int abandoned_ GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
};

}  // namespace inferd
