// The watchdog's side of Scheduler::Impl (internal/scheduler_impl.h): one
// thread that answers running requests at their deadline (504) or when their
// client went away, gives up a batch that runs past its model's
// max_execution_ms (its requests are answered, its executor thread replaced,
// its model quarantined), and gives up at once a batch nobody waits for any
// more while other work waits (its thread replaced; its model quarantined
// only past the bound on its stuck threads).
#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/thread_team.h"
#include "scheduler/internal/scheduled_model.h"
#include "scheduler/internal/scheduler_impl.h"
#include "scheduler/model_queue.h"

namespace inferd::scheduler {
namespace {

// How often the watchdog looks for running requests whose client went away,
// only while other work waits for the executors.
constexpr int kCancelPollMs = 50;

}  // namespace

// The watchdog: answers running requests at their deadline and gives up
// batches that run past their limit (running_batches.h). One thread.
void Scheduler::Impl::WatchdogLoop() {
  pthread_setname_np(pthread_self(), "inferd-watchdog");
  MutexLock lock(&mu_);
  while (!stopping_) {
    const TimePoint now = options_.clock->Now();
    RunningBatches::Due due = running_.TakeDue(now);
    std::vector<RunningBatches::Entry> unwaited = TakeUnwaited();
    if (due.expired.empty() && due.cancelled.empty() && due.hung.empty() && unwaited.empty()) {
      // Queued requests expire here too, for when every executor is busy.
      if (ExpireQueued(now)) continue;
      TimePoint wake = running_.NextWake();
      for (auto& m : models_) {
        const ModelQueue& q = m->queue();
        q.AssertLockedBy(&mu_);
        if (!q.empty()) wake = std::min(wake, q.EarliestDeadline());
      }
      // A client that goes away says so to nobody: while other work waits
      // for the executors, look for running requests whose client left.
      if (running_.AnyCancellable() && WorkWaits()) {
        wake = std::min(wake, now + std::chrono::milliseconds(kCancelPollMs));
      }
      watch_wake_ = wake;
      options_.clock->WaitUntil(&watch_cv_, &mu_, wake);
      watch_wake_ = TimePoint::min();  // awake: nobody needs to signal
      continue;
    }
    std::vector<std::vector<QueuedRequest>> refused(due.hung.size());
    for (size_t i = 0; i < due.hung.size(); ++i) refused[i] = GiveUp(due.hung[i], now);
    std::vector<std::vector<QueuedRequest>> unwaited_refused(unwaited.size());
    std::vector<std::string> quarantined(unwaited.size());
    for (size_t i = 0; i < unwaited.size(); ++i) {
      quarantined[i] = GiveUpUnwaited(unwaited[i], now, &unwaited_refused[i]);
    }
    mu_.Unlock();
    for (auto& r : due.expired) {
      r.done(
          DeadlineExceeded("request passed its deadline while its batch was running; "
                           "its result will be dropped"));
    }
    for (auto& r : due.cancelled) r.done(Cancelled("client went away while its batch ran"));
    for (size_t i = 0; i < due.hung.size(); ++i) AnswerHung(due.hung[i], now, &refused[i]);
    refused.clear();
    for (size_t i = 0; i < unwaited.size(); ++i) {
      LowerToIdle(unwaited[i].thread_id);
      if (quarantined[i].empty()) continue;
      const std::string& model = unwaited[i].model->spec().name;
      for (auto& r : unwaited_refused[i]) {
        r.done(Unavailable("model '" + model + "' is quarantined: " + quarantined[i]));
      }
      if (unwaited[i].model->spec().quarantine) unwaited[i].model->spec().quarantine(quarantined[i]);
    }
    unwaited_refused.clear();
    unwaited.clear();
    mu_.Lock();
  }
}

bool Scheduler::Impl::WorkWaits() {
  tasks_.AssertLockedBy(&mu_);
  if (tasks_.pending()) return true;
  for (auto& m : models_) {
    const ModelQueue& q = m->queue();
    q.AssertLockedBy(&mu_);
    if (!q.empty()) return true;
  }
  return false;
}

std::vector<RunningBatches::Entry> Scheduler::Impl::TakeUnwaited() {
  if (!running_.HasUnwaited() || !WorkWaits()) return {};
  const int bound = options_.max_stuck_threads > 0
                        ? options_.max_stuck_threads
                        : 2 * static_cast<int>(options_.executors.size());
  if (stuck_ >= bound) {
    if (!node_bound_logged_) {
      spdlog::warn(
          "{} executor threads are stuck in forwards given up, the node's bound: a batch "
          "nobody waits for now keeps its executor until its model's max_execution_ms",
          stuck_);
      node_bound_logged_ = true;
    }
    return {};
  }
  node_bound_logged_ = false;
  return running_.TakeUnwaited(static_cast<size_t>(bound - stuck_));
}

void Scheduler::Impl::CountStuck(ScheduledModel& m, const char* reason) {
  m.AssertLockedBy(&mu_);
  slots_.AssertLockedBy(&mu_);
  ++stuck_;
  m.add_stuck(1);
  if (abandoned_total_) abandoned_total_->Increment(1);
  if (reason == std::string("unwaited") && unwaited_total_) unwaited_total_->Increment(1);
  if (stuck_gauge_) stuck_gauge_->Set(stuck_);
}

std::string Scheduler::Impl::GiveUpUnwaited(const RunningBatches::Entry& e, TimePoint now,
                                            std::vector<QueuedRequest>* refused) {
  ScheduledModel& m = *e.model;
  m.AssertLockedBy(&mu_);
  ModelQueue& q = m.queue();
  q.AssertLockedBy(&mu_);
  if (e.spare) --spare_running_;
  q.EndRun(e.items);
  // Charged for what it ran, so that fair sharing does not favour it next.
  q.Charge(std::chrono::duration<double>(now - e.start).count());
  Release(e.bytes, e.num_requests);
  CountThreads(-e.threads);
  ReturnLent(e.lent);
  slots_.AssertLockedBy(&mu_);
  if (slots_.Abandon(e.executor)) CountStuck(m, "unwaited");
  const int64_t ran_ms = MillisBetween(e.start, now);
  std::string reason;
  const int bound = options_.max_stuck_per_model > 0
                        ? options_.max_stuck_per_model
                        : static_cast<int>(options_.executors.size());
  if (m.stuck() > bound) {
    reason = std::to_string(m.stuck()) +
             " of its forwards still run after every request of their batch was answered "
             "(deadline passed or client gone), past the bound of " +
             std::to_string(bound);
    q.MarkRemoved();
    *refused = q.TakeAll();
    m.PublishDepth();
    Release(SumBytes(*refused), refused->size());
  }
  spdlog::warn(
      "model '{}': every request of the batch on executor {} was answered after {} ms and other "
      "work waits: its thread is given up (SCHED_IDLE, {} stuck in this model's forwards) and "
      "replaced{}",
      m.spec().name, e.executor, ran_ms, m.stuck(),
      reason.empty() ? "" : "; the model is quarantined: " + reason);
  cv_.SignalAll();
  return reason;
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
  if (hung.spare) --spare_running_;
  q.EndRun(hung.items);
  q.MarkRemoved();
  std::vector<QueuedRequest> refused = q.TakeAll();
  m.PublishDepth();
  Release(hung.bytes + SumBytes(refused), hung.num_requests + refused.size());
  CountThreads(-hung.threads);
  ReturnLent(hung.lent);
  slots_.AssertLockedBy(&mu_);
  if (slots_.Abandon(hung.executor)) CountStuck(m, "max_execution_ms");
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
  LowerToIdle(hung.thread_id);
  if (hung.model->spec().quarantine) hung.model->spec().quarantine(reason);
}
}  // namespace inferd::scheduler
