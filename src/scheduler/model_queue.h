// ModelQueue: one model version's bounded queue and its batch formation
// policy. It forms batches and knows nothing of who runs them: the scheduler
// takes a batch from it and hands it to the model's runner (batch_runner.h),
// as TF Serving's SharedBatchScheduler hands a queue's batches to the
// callback given at AddQueue. What it knows of its model is a QueueSpec, the
// batching part of the config; what calibration measured reaches it as
// MeasuredSizes. It records no metrics: the scheduler reads size() and
// publishes it.
//
// Pure logic with time passed in (no clock, no threads), so that batch
// formation is unit-tested with an injected time and no sleeps. The Scheduler
// owns the locking: its mutex (given at construction) guards the queue's state,
// and every method marked REQUIRES(mu_) must be called with it held (clang's
// -Wthread-safety checks this; see AssertLockedBy). spec() is immutable.
// Requests are ordered by priority level (1 first, then the default 0, then
// 2, 3, ...), then arrival.
//
// A batch is ready when the queue's head request has waited
// max_queue_delay_us, or the compatible requests at the head fill
// max_items() (max_batch_size, or the calibrated cap), or they reach the
// largest preferred batch size, or the model
// has no delay configured, or another executor is idle (batching never leaves
// a core idle: it trades latency for throughput only when cores are busy).
// A head that carries raw payloads for the model's pre-processing is ready at
// once: its executor pre-processes it instead of sitting idle for the delay,
// and requests that arrive meanwhile join the running batch (TakeMore) up to
// max_items(). Requests join a batch when their non-batch shapes
// equal the head's, or when every input whose shape differs declares a
// pad_value (then the batch is padded to the largest).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "config/model_config.h"
#include "scheduler/batch.h"
#include "scheduler/fair_share.h"
#include "scheduler/inference_request.h"

namespace inferd::scheduler {

// What a queue knows of its model version: the batching part of its config
// and where it may run. Plain values, copied at construction.
struct QueueSpec {
  std::string name;  // "model:version", in messages
  int max_batch_size = 1;
  int max_queue_size = 128;
  int64_t max_queue_delay_us = 0;
  std::vector<int> preferred_batch_sizes;
  // Per input, in config order: whether requests whose shapes differ there
  // may share a batch (the input declares a pad_value).
  std::vector<bool> pads;
  // Raw payloads are pre-processed on the executor (the model has a
  // preprocess hook): a raw head is ready at once.
  bool preprocess = false;
  int weight = 1;                 // fair_share.h
  int64_t max_execution_ms = 0;   // 0: derived (ExecutionLimit)
  int max_concurrency = 0;        // executors that may run it at once; 0 = all
  std::vector<int> executor_ids;  // executors that may run it; empty = all
};

// The spec of a model version named `name` ("model:version") with `config`;
// max_concurrency and executor_ids are left to the caller.
QueueSpec QueueSpecOf(std::string name, const config::ModelConfig& config, bool preprocess);

class ModelQueue {
 public:
  // What calibration measured (batch_calibration.h), as the queue uses it.
  struct MeasuredSizes {
    int max_batch = 1;       // the largest size worth forming
    std::vector<int> sizes;  // the sizes worth forming, ascending (1 first)
    double batch1_s = 0;     // batch 1's cost: the next batch's, until batches are measured
    double slowest_ms = 0;   // the slowest size measured
  };

  // `mu`: the scheduler's mutex, which guards this queue (outlives it).
  ModelQueue(QueueSpec spec, Mutex* mu);

  // The Scheduler names its mutex as its own member, the analysis names it
  // mu_ here: this tells the analysis that holding `held` is holding mu_
  // (and checks that they are the same mutex in builds with assertions).
  void AssertLockedBy(Mutex* held) const REQUIRES(held) ASSERT_CAPABILITY(mu_);

  const QueueSpec& spec() const { return spec_; }

  // Batch sizes measured at load: batches are then formed up to max_batch,
  // and the measured sizes replace preferred_batch_sizes. nullopt (not
  // calibrated): the spec's values apply.
  void SetMeasuredSizes(std::optional<MeasuredSizes> measured) REQUIRES(mu_);
  // The largest batch this queue forms, in items.
  int max_items() const REQUIRES(mu_);

  // kResourceExhausted when max_queue_size requests are queued, else OK.
  Status CheckRoom() const REQUIRES(mu_);
  // Fails as CheckRoom does (the entry is then dropped).
  Status Push(QueuedRequest entry) REQUIRES(mu_);
  size_t size() const REQUIRES(mu_) { return size_; }
  bool empty() const REQUIRES(mu_) { return size_ == 0; }

  // Removes requests whose deadline passed or whose client went away.
  void TakeExpired(TimePoint now, std::vector<QueuedRequest>* expired,
                   std::vector<QueuedRequest>* cancelled) REQUIRES(mu_);

  // When a batch will be ready (<= now: ready now); nullopt when empty.
  // `executors_idle`: another executor that could run work is idle, so waiting
  // for a fuller batch would leave a core idle: ready at once (the delay only
  // applies while every other executor is busy).
  std::optional<TimePoint> ReadyTime(bool executors_idle = false) const REQUIRES(mu_);
  // The earliest deadline of any queued request (TimePoint::max() if none).
  TimePoint EarliestDeadline() const REQUIRES(mu_);
  // Arrival of the head request and its priority level.
  std::optional<std::pair<int, TimePoint>> HeadKey() const REQUIRES(mu_);

  // Fair sharing between models (fair_share.h): this queue as a contender
  // for the next free executor (call when not empty), the compute it used.
  Contender AsContender() const REQUIRES(mu_);
  // Busy: requests queued or running. A queue that becomes busy re-enters at
  // the system's virtual time `v` (FairShare::Reenter).
  bool busy() const REQUIRES(mu_) { return size_ > 0 || running_ > 0; }
  double virtual_start() const REQUIRES(mu_) { return virtual_start_; }
  void Reenter(double v) REQUIRES(mu_);
  // A batch of this model took `seconds` of an executor.
  void Charge(double seconds) REQUIRES(mu_);
  // Charges `seconds` to fair sharing only, leaving the cost estimate and
  // the slowest batch seen alone: the time an overdue forward held its
  // executor, which says nothing of what its next batch will cost.
  void ChargeShare(double seconds) REQUIRES(mu_);
  // How long one batch may run before it is given up (max_execution_ms, or
  // derived from calibration and the slowest batch seen; model_config.h).
  Duration ExecutionLimit() const REQUIRES(mu_);
  // How long one batch may run before it is overdue (issue 38): max(8 x E,
  // E + 50 ms), E the slowest forward measured at load (calibration, or the
  // timing forward of a max_batch_size 1 model), else the slowest batch seen
  // so far; Duration::max() (never overdue) before anything was measured.
  Duration OverdueAfter() const REQUIRES(mu_);
  // Whether the request that would start the next batch is at
  // kSparePriority (a mirrored copy); false when empty.
  bool HeadIsSpare() const REQUIRES(mu_);
  // Requests queued at kSparePriority.
  int SpareQueued() const REQUIRES(mu_);
  // One forward of a model that is not calibrated, timed at load
  // (BatchCalibrator::TimeOneForward): ExecutionLimit derives from it as
  // from a calibration.
  void SetTimedForward(double ms) REQUIRES(mu_) { timed_forward_ms_ = ms; }

  // Forms the next batch; call when ReadyTime() <= now. `share_with` executors
  // (this one included) are free to run this model now: the batch takes about
  // 1/share_with of the compatible items, so that each of them gets a part.
  // `cap` > 0: at most that many items (a heavy model yielding to its
  // neighbours, Scheduler::Impl::YieldCap).
  Batch TakeBatch(TimePoint now, int share_with = 1, int cap = 0) REQUIRES(mu_);
  // When a client's request last arrived (not a mirrored copy's).
  TimePoint last_arrival() const REQUIRES(mu_) { return last_arrival_; }
  // Batch 1's cost, measured (calibration) or else the running estimate of
  // a batch's cost; 0 before anything ran.
  double Batch1Seconds() const REQUIRES(mu_);
  // Requests with raw payloads, to join a running batch of raw requests
  // (pre-processing makes their shapes equal): taken in queue order up to
  // `max_items` items, stopping at the first that does not fit or whose
  // deadline passed (it is left for TakeExpired). Empty when none.
  std::vector<QueuedRequest> TakeMore(int max_items, TimePoint now) REQUIRES(mu_);
  // Requests of a running batch given back by its runner (batch_runner.h),
  // pre-processed: each goes back to its place by arrival, its items from
  // running to queued. Never refused (they were admitted once).
  void GiveBack(std::vector<QueuedRequest> requests) REQUIRES(mu_);
  // Empties the queue (shutdown).
  std::vector<QueuedRequest> TakeAll() REQUIRES(mu_);

  // Executors running this model now, and whether one more may start.
  // `items`: the batch's; Join adds what joined it while it ran (TakeMore).
  void BeginRun(int items) REQUIRES(mu_) {
    ++running_;
    running_items_ += items;
  }
  void Join(int items) REQUIRES(mu_) { running_items_ += items; }
  void EndRun(int items) REQUIRES(mu_) {
    --running_;
    running_items_ -= items;
  }
  // The most items one executor takes now: its share of this model's items
  // in flight (queued and running) over the executors that may run it, within
  // max_items(). An executor that takes more than its share leaves another
  // one with less or nothing, while the closed loop of clients it serves
  // cannot send more (docs/PERFORMANCE.md, "Batch formation at c=8").
  int ShareCap() const REQUIRES(mu_);
  // How many of the scheduler's `total` executors may run this model at once
  // (executor_ids, max_concurrency); set once, before the queue is shared.
  void set_executors(int total);
  int running() const REQUIRES(mu_) { return running_; }
  bool CanStartOn(int executor_id) const REQUIRES(mu_);
  // Removed from the scheduler: refuses requests, goes when idle.
  void MarkRemoved() REQUIRES(mu_) { removed_ = true; }
  bool removed() const REQUIRES(mu_) { return removed_; }

 private:
  // Requests compatible with `head` at the front, in order, up to max items;
  // returns their total items and positions (level, index).
  int CompatibleItems(std::vector<std::pair<int, size_t>>* picks, int limit) const REQUIRES(mu_);
  bool Compatible(const InferenceRequest& head, const InferenceRequest& other) const;
  const QueuedRequest* Head() const REQUIRES(mu_);
  void DropEmptyLevels() REQUIRES(mu_);

  Mutex* const mu_;
  const QueueSpec spec_;
  std::optional<MeasuredSizes> measured_ GUARDED_BY(mu_);
  // The spec's preferred sizes, or the measured ones.
  std::vector<int> preferred_ GUARDED_BY(mu_);
  std::map<int, std::deque<QueuedRequest>> levels_ GUARDED_BY(mu_);  // LevelKey(priority) -> FIFO
  size_t size_ GUARDED_BY(mu_) = 0;
  uint64_t next_seq_ GUARDED_BY(mu_) = 0;
  int running_ GUARDED_BY(mu_) = 0;
  int queued_items_ GUARDED_BY(mu_) = 0;   // the batch items of the requests queued
  int running_items_ GUARDED_BY(mu_) = 0;  // and of those running
  int executors_ = 1;
  bool removed_ GUARDED_BY(mu_) = false;
  double virtual_start_ GUARDED_BY(mu_) = 0;  // S of fair_share.h
  double cost_s_ GUARDED_BY(mu_) = 0;         // expected seconds of the next batch
  double slowest_s_ GUARDED_BY(mu_) = 0;      // the slowest batch seen
  double timed_forward_ms_ GUARDED_BY(mu_) = 0;  // SetTimedForward; 0: none
  TimePoint last_arrival_ GUARDED_BY(mu_){};     // last_arrival()
};

}  // namespace inferd::scheduler
