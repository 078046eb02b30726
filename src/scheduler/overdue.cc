// The batches Scheduler::Impl (internal/scheduler_impl.h) hands over before
// their limit (issue 38), on the watchdog's thread:
// - a batch nobody waits for (every request answered: deadline passed,
//   client gone) while other work waits: given up, its thread replaced;
// - an overdue batch (running past ModelQueue::OverdueAfter, far longer
//   than its model's measured forward) while another model's work waits and
//   no executor is idle: demoted, its thread replaced, its requests still
//   waiting for it (answered if it finishes, or at their deadline).
// Either way the old thread and its OpenMP team go to SCHED_IDLE before the
// new one starts, and count as stuck: past the model's bound it is
// quarantined, at the node's bound nothing more is handed over.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/thread_team.h"
#include "scheduler/internal/scheduled_model.h"
#include "scheduler/internal/scheduler_impl.h"
#include "scheduler/model_queue.h"

namespace inferd::scheduler {

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
  const int bound = NodeStuckBound();
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
  if (reason == std::string("overdue") && overdue_total_) overdue_total_->Increment(1);
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
  // Lowered before its replacement starts: the threads at normal priority
  // never outnumber the cores.
  LowerToIdle(e.thread_id);
  slots_.AssertLockedBy(&mu_);
  if (slots_.Abandon(e.executor)) CountStuck(m, "unwaited");
  const int64_t ran_ms = MillisBetween(e.start, now);
  const std::string reason = QuarantinePastBound(m, refused);
  spdlog::warn(
      "model '{}': every request of the batch on executor {} was answered after {} ms and other "
      "work waits: its thread is given up (SCHED_IDLE, {} stuck in this model's forwards) and "
      "replaced{}",
      m.spec().name, e.executor, ran_ms, m.stuck(),
      reason.empty() ? "" : "; the model is quarantined: " + reason);
  cv_.SignalAll();
  return reason;
}

std::vector<const ScheduledModel*> Scheduler::Impl::WaitingModels() {
  std::vector<const ScheduledModel*> waiting;
  for (auto& m : models_) {
    const ModelQueue& q = m->queue();
    q.AssertLockedBy(&mu_);
    if (!q.empty() && !q.HeadIsSpare()) waiting.push_back(m.get());
  }
  return waiting;
}

TimePoint Scheduler::Impl::OverdueWake(const std::vector<const ScheduledModel*>& waiting) {
  if (idle_ > 0 || stuck_ >= NodeStuckBound() || waiting.empty()) return TimePoint::max();
  return running_.NextOverdue(waiting);
}

std::vector<RunningBatches::Entry> Scheduler::Impl::TakeOverdue(TimePoint now, size_t reserved) {
  const int left = NodeStuckBound() - stuck_ - static_cast<int>(reserved);
  if (stopping_ || idle_ > 0 || left <= 0) return {};
  const std::vector<const ScheduledModel*> waiting = WaitingModels();
  if (waiting.empty()) return {};
  return running_.TakeOverdue(now, static_cast<size_t>(left), waiting, options_.thread_cpu_time);
}

std::string Scheduler::Impl::Demote(const RunningBatches::Entry& e, TimePoint now,
                                    std::vector<QueuedRequest>* refused) {
  ScheduledModel& m = *e.model;
  m.AssertLockedBy(&mu_);
  ModelQueue& q = m.queue();
  q.AssertLockedBy(&mu_);
  // A demoted copy still counts among the copies running (SpareCap) until
  // its thread ends: no other copy starts meanwhile, on one executor either.
  q.EndRun(e.items);
  // Its time so far is charged to fair sharing, not to its cost estimate.
  q.ChargeShare(std::chrono::duration<double>(now - e.start).count());
  // Its bytes and requests stay held: they are released when its requests
  // are all answered (TakeDue's settled), or when its thread ends it.
  CountThreads(-e.threads);
  ReturnLent(e.lent);
  LowerToIdle(e.thread_id);  // before its replacement starts
  slots_.AssertLockedBy(&mu_);
  if (slots_.Abandon(e.executor)) CountStuck(m, "overdue");
  if (e.spare) {  // expected: copies take only spare capacity; never quarantined for it
    spdlog::info(
        "model '{}': a batch of mirrored copies on executor {} (run {} ms) is demoted "
        "(SCHED_IDLE) and its executor handed to a client's request",
        m.spec().name, e.executor, MillisBetween(e.start, now));
    cv_.SignalAll();
    return "";
  }
  // Not quarantined for it: an overdue forward may only be slow (an input
  // of more work than the timed one), and its requests still wait for it. It
  // counts against the model's bound once nobody waits for it (settled).
  (void)refused;
  spdlog::warn(
      "model '{}': a forward on executor {} has run {} ms, overdue (its measured forward "
      "predicts at most {} ms) while other models' work waits: its thread is demoted "
      "(SCHED_IDLE, {} stuck in this model's forwards) and replaced; its requests wait for it "
      "until their deadline",
      m.spec().name, e.executor, MillisBetween(e.start, now), MillisBetween(e.start, e.overdue_at),
      m.stuck());
  cv_.SignalAll();
  return "";
}

std::string Scheduler::Impl::QuarantinePastBound(ScheduledModel& m,
                                                 std::vector<QueuedRequest>* refused) {
  m.AssertLockedBy(&mu_);
  const int bound = ModelStuckBound();
  if (m.stuck() <= bound) return "";
  ModelQueue& q = m.queue();
  q.AssertLockedBy(&mu_);
  q.MarkRemoved();
  *refused = q.TakeAll();
  m.PublishDepth();
  Release(SumBytes(*refused), refused->size());
  return std::to_string(m.stuck()) +
         " of its forwards still run after their executors were handed over (every request "
         "of their batch answered, or far past their measured time), past the bound of " +
         std::to_string(bound);
}

}  // namespace inferd::scheduler
