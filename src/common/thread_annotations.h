// Clang thread-safety annotations and a mutex that carries them.
//
// The macros are the standard set (the names of Abseil's
// absl/base/thread_annotations.h without the ABSL_ prefix): with clang and
// -Wthread-safety the compiler checks that a GUARDED_BY member is only touched
// with its mutex held and that a REQUIRES function is only called so; with g++
// they expand to nothing. CI builds once with clang -Wthread-safety -Werror
// (`make thread-safety`).
//
// libstdc++'s std::mutex carries no capability attributes, so clang cannot see
// std::lock_guard take it: annotated code uses inferd::Mutex, MutexLock and
// CondVar below instead. They are thin (a std::mutex, a std::condition_variable)
// and cost nothing over the std types.
//
//   class Queue {
//     void Push(int v) { MutexLock lock(&mu_); items_.push_back(v); cv_.Signal(); }
//     int Pop() {
//       MutexLock lock(&mu_);
//       while (items_.empty()) cv_.Wait(&mu_);  // a loop the analysis can follow
//       ...
//     }
//     void DrainLocked() REQUIRES(mu_);
//     Mutex mu_;
//     CondVar cv_;
//     std::vector<int> items_ GUARDED_BY(mu_);
//   };
//
// Write condition waits as explicit loops around CondVar::Wait: the analysis
// does not look inside predicate lambdas.
// Thread-safety: Mutex and CondVar are what make other classes thread-safe;
// MutexLock belongs to the thread that made it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define INFERD_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define INFERD_THREAD_ANNOTATION(x)
#endif

// On a data member: read and written only with `x` held.
#define GUARDED_BY(x) INFERD_THREAD_ANNOTATION(guarded_by(x))
// On a pointer member: the pointee is read and written only with `x` held.
#define PT_GUARDED_BY(x) INFERD_THREAD_ANNOTATION(pt_guarded_by(x))
// On a mutex member: lock order (this one before / after the others).
#define ACQUIRED_BEFORE(...) INFERD_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) INFERD_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// On a function: the caller must hold (exclusively / shared) the capabilities.
#define REQUIRES(...) INFERD_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) INFERD_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
// On a function: takes / gives back the capability (no argument: `this`).
#define ACQUIRE(...) INFERD_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) INFERD_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) INFERD_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) INFERD_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) INFERD_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// On a function: the caller must NOT hold the capabilities (it takes them).
#define EXCLUDES(...) INFERD_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: asserts at run time that the capability is held.
#define ASSERT_CAPABILITY(x) INFERD_THREAD_ANNOTATION(assert_capability(x))
// On a function: returns a reference to the capability.
#define RETURN_CAPABILITY(x) INFERD_THREAD_ANNOTATION(lock_returned(x))
// On a class: it is a capability ("mutex") / an RAII holder of one.
#define CAPABILITY(x) INFERD_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY INFERD_THREAD_ANNOTATION(scoped_lockable)
// On a function: not analysed. Each use says why in a comment.
#define NO_THREAD_SAFETY_ANALYSIS INFERD_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace inferd {

class CondVar;

// A std::mutex the analysis can see.
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds the mutex (a callback documented to
  // run under it); checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope; Unlock/Lock let a scope drop it for a while
// (to run a callback or block without it) and take it back.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    held_ = false;
    mu_->Unlock();
  }
  void Lock() ACQUIRE() {
    mu_->Lock();
    held_ = true;
  }

 private:
  Mutex* mu_;
  bool held_ = true;
};

// A condition variable waited on with a Mutex held; spurious wake-ups happen,
// so every wait sits in a loop that re-checks its condition.
class CondVar {
 public:
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's MutexLock owns it
  }
  // False when `deadline` passed (the condition may still have become true).
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex* mu, std::chrono::time_point<Clock, Duration> deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout) REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + timeout);
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace inferd
