// The watchdog's side of Scheduler::Impl (internal/scheduler_impl.h): one
// thread that answers running requests at their deadline (504) or when their
// client went away, and gives up a batch that runs past its model's
// max_execution_ms (its requests are answered, its executor thread replaced,
// its model quarantined). What it hands over before that limit (a batch
// nobody waits for, an overdue one) is in overdue.cc.
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
    RunningBatches::Due due = running_.TakeDue(now, options_.thread_cpu_time);
    std::vector<RunningBatches::Entry> unwaited = TakeUnwaited();
    // Within what is left of the node's bound once those are given up.
    std::vector<RunningBatches::Entry> overdue = TakeOverdue(now, unwaited.size());
    for (const auto& s : due.settled) Release(s.bytes, s.num_requests);
    if (due.expired.empty() && due.cancelled.empty() && due.hung.empty() && unwaited.empty() &&
        due.settled.empty() && overdue.empty()) {
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
      // An overdue batch is demoted once another model's work waits.
      wake = std::min(wake, OverdueWake(WaitingModels()));
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
    for (RunningBatches::Entry& e : overdue) {
      unwaited_refused.emplace_back();
      quarantined.push_back(Demote(e, now, &unwaited_refused.back()));
      unwaited.push_back(std::move(e));
    }
    // A demoted forward whose every request was answered without it runs
    // for nobody now: past the model's bound on such threads, quarantined.
    for (RunningBatches::Entry& s : due.settled) {
      unwaited_refused.emplace_back();
      s.model->AssertLockedBy(&mu_);
      quarantined.push_back(QuarantinePastBound(*s.model, &unwaited_refused.back()));
      unwaited.push_back(std::move(s));
    }
    mu_.Unlock();
    due.settled.clear();  // the models they hold go unlocked
    for (auto& r : due.expired) {
      r.done(
          DeadlineExceeded("request passed its deadline while its batch was running; "
                           "its result will be dropped"));
    }
    for (auto& r : due.cancelled) r.done(Cancelled("client went away while its batch ran"));
    for (size_t i = 0; i < due.hung.size(); ++i) AnswerHung(due.hung[i], now, &refused[i]);
    refused.clear();
    for (size_t i = 0; i < unwaited.size(); ++i) {
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

// Under mu_: the accounting of a hung batch (its thread no longer will),
// its model's queue emptied and closed, the slot's thread replaced.
// Returns the requests that were queued behind it, to be refused unlocked.
std::vector<QueuedRequest> Scheduler::Impl::GiveUp(const RunningBatches::Entry& hung,
                                                   TimePoint now) {
  ScheduledModel& m = *hung.model;
  m.AssertLockedBy(&mu_);
  ModelQueue& q = m.queue();
  q.AssertLockedBy(&mu_);
  if (!hung.demoted) {  // a demoted batch's executor was accounted for then
    q.EndRun(hung.items);
  }
  if (hung.spare) --spare_running_;  // a demoted copy too: its thread no longer will
  q.MarkRemoved();
  std::vector<QueuedRequest> refused = q.TakeAll();
  m.PublishDepth();
  Release(hung.bytes + SumBytes(refused), hung.num_requests + refused.size());
  slots_.AssertLockedBy(&mu_);
  if (!hung.demoted) {
    CountThreads(-hung.threads);
    ReturnLent(hung.lent);
    if (slots_.Abandon(hung.executor)) CountStuck(m, "max_execution_ms");
  }
  spdlog::error(
      "model '{}': a batch ran {} ms on executor {}, past its limit of {} ms; "
      "the executor's thread is given up and replaced, the model quarantined",
      m.spec().name, MillisBetween(hung.start, now), hung.executor,
      MillisBetween(hung.start, hung.start + hung.run_limit()));
  cv_.SignalAll();
  return refused;
}

// Unlocked: answers what is left of a hung batch and the requests queued
// behind it, lowers the stuck thread to SCHED_IDLE (it keeps its core only
// when the core has nothing else to run), and quarantines the model.
void Scheduler::Impl::AnswerHung(const RunningBatches::Entry& hung, TimePoint now,
                                 std::vector<QueuedRequest>* refused) {
  const std::string reason =
      "its forward ran " + std::to_string(MillisBetween(hung.start, now)) +
      " ms, past max_execution_ms (" +
      std::to_string(MillisBetween(hung.start, hung.start + hung.run_limit())) + " ms)";
  const std::string model = hung.model->spec().name;
  for (const auto& r : hung.requests) r.done(Internal("model '" + model + "': " + reason));
  for (auto& r : *refused) {
    r.done(Unavailable("model '" + model + "' is quarantined: " + reason));
  }
  LowerToIdle(hung.thread_id);
  if (hung.model->spec().quarantine) hung.model->spec().quarantine(reason);
}
}  // namespace inferd::scheduler
