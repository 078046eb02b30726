// Scheduler::Impl: the scheduler's state and threads, declared here and
// defined across three files by what runs where:
//   scheduler.cc      the public calls: models, Enqueue, drain, stop
//   executor_loop.cc  an executor's loop: pick (FairShare), run, account
//   watchdog.cc       the watchdog thread: deadlines of running requests,
//                     batches past their max_execution_ms given up
//   overdue.cc        batches given up or demoted before their limit
// It joins each model's parts (internal/scheduled_model.h): it takes a
// batch from the queue and hands it to the runner, with the TopUp and
// GiveBack callbacks that let the running batch reach the queue again, and
// it counts what the queue refuses or expires.
// One mutex (mu_) guards the queues, the running batches and the counts;
// every ScheduledModel (and its ModelQueue), CalibrationTasks and
// ThreadSlots is given it.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"
#include "common/thread_slots.h"
#include "scheduler/batch.h"
#include "scheduler/batch_runner.h"
#include "scheduler/calibration_tasks.h"
#include "scheduler/lone_request_width.h"
#include "scheduler/memory_admission.h"
#include "scheduler/internal/scheduled_model.h"
#include "scheduler/running_batches.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_accounting.h"

namespace inferd::scheduler {

class Scheduler::Impl {
 public:
  explicit Impl(const Options& options)
      : options_(options),
        accounting_(options_.metrics, options_.clock, options_.max_queue_bytes),
        tasks_(&mu_, &cv_,
               {options_.calibrate, options_.time_unbatched, options_.calibration, options_.executors,
                options_.metrics, options_.memory_probe.enabled(),
                options_.memory_probe.enabled() && options_.memory_limit > 0}),
        admission_(options_.memory_limit > 0
                       ? std::make_shared<MemoryAdmission>(MemoryAdmission::Options{
                             options_.memory_limit, options_.memory_limit_source,
                             options_.memory_probe})
                       : nullptr) {}
  ~Impl() { Stop(); }

  void Start();
  void RecycleExecutors(std::function<void()> after_exit);
  int recycled_executors() const;
  int abandoned_executors() const;
  std::vector<std::string> DescribeRunning() const;
  // Stops the executors and the watchdog. Waits for executor threads given up
  // while stuck (see the header): a process that must end now exits instead.
  void Stop();
  std::shared_ptr<ScheduledModel> AddModel(ModelSpec spec);
  BatchCalibration GetCalibration(const ScheduledModel& model) const;
  void RemoveModel(const std::shared_ptr<ScheduledModel>& model);
  // Moves from `request` and `done` only once the request is queued (see
  // Scheduler::Enqueue): every refusal returns before the Push.
  Status Enqueue(ScheduledModel& model, InferenceRequest&& request, Completion&& done);
  void StopAccepting();
  bool WaitIdle(TimePoint deadline);
  size_t AnswerUnfinished(const Status& status);
  size_t QueueDepth(const ScheduledModel& model) const;
  size_t HeldBytes() const;
  size_t num_executors() const { return options_.executors.size(); }

 private:
  // The smallest virtual start of the busy queues (fair_share.h), never
  // moving back: where a queue that becomes busy re-enters.
  double SystemVirtualTime() REQUIRES(mu_);
  // The model whose ready queue this executor serves next (FairShare::Pick),
  // or null; lowers `next_wake` to when a queue not ready yet will be.
  ScheduledModel* PickReady(int executor, TimePoint now, TimePoint* next_wake) REQUIRES(mu_);
  // Answers queued requests whose deadline passed or whose client went away.
  // Returns with mu_ held; true when it answered any (it unlocked to do so).
  bool ExpireQueued(TimePoint now) REQUIRES(mu_);
  void ExecutorLoop(int id, uint64_t generation);
  // Takes a batch from `m`'s queue, runs it unlocked on `m`'s runner, and
  // accounts for it. False when the watchdog gave the batch up meanwhile:
  // this thread must then leave, touching nothing (another thread has its
  // slot).
  bool RunBatch(int id, int tid, ScheduledModel* m, TimePoint now) REQUIRES(mu_);
  // For a batch of raw requests of a model with pre-processing: requests
  // queued while it is pre-processed join it, up to the queue's ShareCap(),
  // unless another executor that may run the model is idle (it takes them
  // instead: batching never leaves a core idle). Null for other batches.
  BatchRunner::TopUp TopUpFor(ScheduledModel& m, const Batch& batch, RunningBatches::Token token);
  // For a model whose batches are cut by length: takes back the groups its
  // runner will not run now (batch_runner.h) into the queue, unless the
  // scheduler is stopping, the model is being removed or the batch was
  // given up. Null for other models.
  BatchRunner::GiveBack GiveBackFor(ScheduledModel& m, RunningBatches::Token token);
  // The watchdog: answers running requests at their deadline and gives up
  // batches that run past their limit (running_batches.h). One thread.
  void WatchdogLoop();
  // Under mu_: the accounting of a hung batch (its thread no longer will),
  // its model's queue emptied and closed, the slot's thread replaced.
  // Returns the requests that were queued behind it, to be refused unlocked.
  std::vector<QueuedRequest> GiveUp(const RunningBatches::Entry& hung, TimePoint now) REQUIRES(mu_);
  // Unlocked: answers what is left of a hung batch and the requests queued
  // behind it, lowers the stuck thread to SCHED_IDLE (it keeps its core only
  // when the core has nothing else to run), and quarantines the model.
  static void AnswerHung(const RunningBatches::Entry& hung, TimePoint now,
                         std::vector<QueuedRequest>* refused);
  // Whether any queue holds requests or a task waits: an unwaited batch's
  // executor is then worth more to them.
  bool WorkWaits() REQUIRES(mu_);
  // The unwaited batches to give up now (running_batches.h), within the
  // node's bound on stuck threads.
  std::vector<RunningBatches::Entry> TakeUnwaited() REQUIRES(mu_);
  // Under mu_: the accounting of an unwaited batch (its thread no longer
  // will), the slot's thread replaced; past the model's bound on stuck
  // threads its queue is emptied and closed. Returns the quarantine reason
  // (empty: not quarantined) and, in `refused`, the requests queued behind.
  std::string GiveUpUnwaited(const RunningBatches::Entry& e, TimePoint now,
                             std::vector<QueuedRequest>* refused) REQUIRES(mu_);
  // The models whose queue holds a client's request (not only mirrored copies).
  std::vector<const ScheduledModel*> WaitingModels() REQUIRES(mu_);
  // The overdue batches to demote now (running_batches.h): only while no
  // executor is idle, within the node's bound on stuck threads less
  // `reserved` (threads about to be given up).
  std::vector<RunningBatches::Entry> TakeOverdue(TimePoint now, size_t reserved) REQUIRES(mu_);
  // When the watchdog must look for an overdue batch, given that `waiting`
  // have work queued (TimePoint::max(): no need).
  TimePoint OverdueWake(const std::vector<const ScheduledModel*>& waiting) REQUIRES(mu_);
  // Under mu_: an overdue batch's thread lowered to SCHED_IDLE and its
  // executor handed to a new thread; its requests stay tracked. Past the
  // model's bound on stuck threads its queue is emptied and closed. Returns
  // the quarantine reason (empty: none) and, in `refused`, the requests
  // queued behind.
  std::string Demote(const RunningBatches::Entry& e, TimePoint now,
                     std::vector<QueuedRequest>* refused) REQUIRES(mu_);
  // Past the model's bound on stuck threads: its queue emptied and closed,
  // the requests refused in `refused`; returns the reason (empty: within).
  std::string QuarantinePastBound(ScheduledModel& m, std::vector<QueuedRequest>* refused)
      REQUIRES(mu_);
  // Stuck threads allowed for one model (past it, quarantine) and for the node.
  int ModelStuckBound() const {
    return options_.max_stuck_per_model > 0 ? options_.max_stuck_per_model
                                            : static_cast<int>(options_.executors.size());
  }
  int NodeStuckBound() const {
    return options_.max_stuck_threads > 0 ? options_.max_stuck_threads
                                          : 2 * static_cast<int>(options_.executors.size());
  }
  // How many executors may run batches of mirrored copies at once: all but
  // one, at least one.
  int SpareCap() const { return std::max(1, static_cast<int>(options_.executors.size()) - 1); }
  // Heavy batches yield (issue 38): 1 when `m` is heavy (batch 1 costs at
  // least kHeavyBatchMs) and another model's client sent a request within
  // the last kNeighbourWindowMs (or has requests queued): its batches are
  // then single items, so that a neighbour waits at most one item's
  // forward, not a whole batch's. 0 (no cap) otherwise.
  int YieldCap(const ScheduledModel& m, TimePoint now) REQUIRES(mu_);
  // Mirrored copies queued, all models.
  int SpareQueued() REQUIRES(mu_);
  // Counts a thread given up in `m`'s forward (both reasons).
  void CountStuck(ScheduledModel& m, const char* reason) REQUIRES(mu_);
  void Release(size_t bytes, size_t requests) REQUIRES(mu_);
  // Every model's queued requests, taken out of their queues (Stop, and a
  // drain's end).
  std::vector<QueuedRequest> TakeAllQueued() REQUIRES(mu_);
  // The executors idle now that a batch of `m` about to run on `id` may
  // park (lone_request_width.h); parks them and counts them out of idle_.
  std::vector<int> LendTo(int id, ScheduledModel& m, size_t batch_requests) REQUIRES(mu_);
  // Un-parks `lent` (they wait idle again) and wakes them.
  void ReturnLent(const std::vector<int>& lent) REQUIRES(mu_);
  // The intra-op threads computing now, and their peak (the metrics).
  void CountThreads(int delta) REQUIRES(mu_);
  std::shared_ptr<ScheduledModel> Find(ScheduledModel* m) REQUIRES(mu_);
  // A loop, not remove_if: the analysis does not carry mu_ into a lambda.
  void PruneRemoved() REQUIRES(mu_);
  // The runner answers every request and never throws; this catch is the
  // last line that keeps the executor alive if even building its error
  // message failed (e.g. out of memory twice).
  static void RunOnExecutor(ScheduledModel& m, Batch& batch, TimePoint start,
                            const BatchRunner::TopUp& top_up,
                            const BatchRunner::GiveBack& give_back);

  Options options_;
  // Guards everything below and every ScheduledModel's state and queue (each
  // gets it at AddModel).
  mutable Mutex mu_;
  CondVar cv_;        // work arrived, or a slot freed
  CondVar watch_cv_;  // a deadline or a batch to watch
  CondVar stuck_cv_;  // a given-up thread returned
  CondVar idle_cv_;   // no request outstanding
  std::vector<std::shared_ptr<ScheduledModel>> models_ GUARDED_BY(mu_);
  SchedulerAccounting accounting_ GUARDED_BY(mu_);  // held bytes, outstanding requests
  CalibrationTasks tasks_;                          // its own annotations (mu_)
  // The process's memory limit, shared by every model's runner; null: none.
  const std::shared_ptr<MemoryAdmission> admission_;
  RunningBatches running_ GUARDED_BY(mu_);
  TimePoint watch_wake_ GUARDED_BY(mu_) = TimePoint::min();  // when the watchdog wakes next
  double virtual_now_ GUARDED_BY(mu_) = 0;                   // fair_share.h's V
  int idle_ GUARDED_BY(mu_) = 0;                             // executors waiting for work
  std::vector<ExecutorState> executor_state_ GUARDED_BY(mu_);  // by id (lone_request_width.h)
  int compute_threads_ GUARDED_BY(mu_) = 0;  // intra-op threads of the batches running
  int compute_threads_peak_ GUARDED_BY(mu_) = 0;
  int stuck_ GUARDED_BY(mu_) = 0;                            // given-up threads still running
  int spare_running_ GUARDED_BY(mu_) = 0;  // batches of mirrored copies running (kSparePriority)
  bool draining_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  ThreadSlots slots_{&mu_};  // one per executor
  std::thread watchdog_;
  // inferd_executors_abandoned_total / inferd_executors_stuck; null without metrics.
  metrics::Counter* abandoned_total_ = nullptr;
  // inferd_executors_unwaited_total: of those, given up because nobody
  // waited for their batch any more.
  metrics::Counter* unwaited_total_ = nullptr;
  // inferd_executors_overdue_total: of those, demoted while still waited for
  // because their forward ran far past its measured time while others waited.
  metrics::Counter* overdue_total_ = nullptr;
  metrics::Gauge* stuck_gauge_ = nullptr;
  // inferd_compute_threads / inferd_compute_threads_peak; null without metrics.
  metrics::Gauge* threads_gauge_ = nullptr;
  metrics::Gauge* threads_peak_gauge_ = nullptr;
  bool node_bound_logged_ GUARDED_BY(mu_) = false;
};

}  // namespace inferd::scheduler
