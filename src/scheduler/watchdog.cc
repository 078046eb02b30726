// The watchdog's side of Scheduler::Impl (internal/scheduler_impl.h): one
// thread that answers running requests at their deadline (504) and gives up
// a batch that runs past its model's max_execution_ms: its requests are
// answered, its executor thread replaced, its model quarantined.
#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "scheduler/internal/scheduled_model.h"
#include "scheduler/internal/scheduler_impl.h"
#include "scheduler/model_queue.h"

namespace inferd::scheduler {

// The watchdog: answers running requests at their deadline and gives up
// batches that run past their limit (running_batches.h). One thread.
void Scheduler::Impl::WatchdogLoop() {
  pthread_setname_np(pthread_self(), "inferd-watchdog");
  MutexLock lock(&mu_);
  while (!stopping_) {
    const TimePoint now = options_.clock->Now();
    RunningBatches::Due due = running_.TakeDue(now);
    if (due.expired.empty() && due.hung.empty()) {
      // Queued requests expire here too, for when every executor is busy.
      if (ExpireQueued(now)) continue;
      TimePoint wake = running_.NextWake();
      for (auto& m : models_) {
        const ModelQueue& q = m->queue();
        q.AssertLockedBy(&mu_);
        if (!q.empty()) wake = std::min(wake, q.EarliestDeadline());
      }
      watch_wake_ = wake;
      options_.clock->WaitUntil(&watch_cv_, &mu_, wake);
      watch_wake_ = TimePoint::min();  // awake: nobody needs to signal
      continue;
    }
    std::vector<std::vector<QueuedRequest>> refused(due.hung.size());
    for (size_t i = 0; i < due.hung.size(); ++i) refused[i] = GiveUp(due.hung[i], now);
    mu_.Unlock();
    for (auto& r : due.expired) {
      r.done(
          DeadlineExceeded("request passed its deadline while its batch was running; "
                           "its result will be dropped"));
    }
    for (size_t i = 0; i < due.hung.size(); ++i) AnswerHung(due.hung[i], now, &refused[i]);
    refused.clear();
    mu_.Lock();
  }
}

// Under mu_: the accounting of a hung batch (its thread no longer will),
// its model's queue emptied and closed, the slot's thread replaced.
// Returns the requests that were queued behind it, to be refused unlocked.
std::vector<QueuedRequest> Scheduler::Impl::GiveUp(const RunningBatches::Entry& hung,
                                                   TimePoint now) {
  ScheduledModel& m = *hung.model;
  m.AssertLockedBy(&mu_);
  ModelQueue& q = m.queue();
  q.AssertLockedBy(&mu_);
  q.EndRun(hung.items);
  q.MarkRemoved();
  std::vector<QueuedRequest> refused = q.TakeAll();
  m.PublishDepth();
  Release(hung.bytes + SumBytes(refused), hung.num_requests + refused.size());
  CountThreads(-hung.threads);
  ReturnLent(hung.lent);
  slots_.AssertLockedBy(&mu_);
  if (slots_.Abandon(hung.executor)) {
    ++stuck_;
    if (abandoned_total_) abandoned_total_->Increment(1);
    if (stuck_gauge_) stuck_gauge_->Set(stuck_);
  }
  spdlog::error(
      "model '{}': a batch ran {} ms on executor {}, past its limit of {} ms; "
      "the executor's thread is given up and replaced, the model quarantined",
      m.spec().name, MillisBetween(hung.start, now), hung.executor,
      MillisBetween(hung.start, hung.limit));
  cv_.SignalAll();
  return refused;
}

// Unlocked: answers what is left of a hung batch and the requests queued
// behind it, lowers the stuck thread to SCHED_IDLE (it keeps its core only
// when the core has nothing else to run), and quarantines the model.
void Scheduler::Impl::AnswerHung(const RunningBatches::Entry& hung, TimePoint now,
                                 std::vector<QueuedRequest>* refused) {
  const std::string reason = "its forward ran " + std::to_string(MillisBetween(hung.start, now)) +
                             " ms, past max_execution_ms (" +
                             std::to_string(MillisBetween(hung.start, hung.limit)) + " ms)";
  const std::string model = hung.model->spec().name;
  for (const auto& r : hung.requests) r.done(Internal("model '" + model + "': " + reason));
  for (auto& r : *refused) {
    r.done(Unavailable("model '" + model + "' is quarantined: " + reason));
  }
  sched_param param{};
  sched_setscheduler(hung.thread_id, SCHED_IDLE, &param);
  if (hung.model->spec().quarantine) hung.model->spec().quarantine(reason);
}
}  // namespace inferd::scheduler
