// Scheduler: per-model queues served by a fixed set of executors shared by all
// models.
//
// Each executor is one thread with its own intra-op pool, pinned to its core
// group (backend::Backend::InitExecutorThread). The executors together never
// run more compute threads than the core plan allows, however many models are
// registered: a model does not get threads of its own, it gets a queue. When an
// executor is free it takes the most urgent ready batch of any model it may run
// (a model's `max_concurrency` caps how many executors run it at once).
//
// Each model is three one-way parts that the scheduler joins
// (internal/scheduled_model.h): its ModelQueue forms batches
// (max_batch_size, max_queue_delay_us, preferred sizes) and knows nothing of
// who runs them; its BatchRunner runs each batch on the executor that took
// it (pre-processing, assembly, execute, split and post-processing, inside
// the core budget); its BatchCalibrator measures at load which batch sizes
// pay. A batch of raw payloads starts as soon as an executor is free, and
// requests queued while it is pre-processed join it (BatchRunner::TopUp) up
// to the model's batch limit, unless another executor is idle:
// pre-processing, not an idle core, is the batching window. Whatever a
// batch throws answers its requests kInternal; the executor lives on.
//
// Thread-safety: every public method may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/clock.h"
#include "common/status.h"
#include "common/thread_team.h"
#include "metrics/registry.h"
#include "scheduler/activation_memory.h"
#include "scheduler/batch_calibration.h"
#include "scheduler/inference_request.h"
#include "scheduler/model_spec.h"

namespace inferd::scheduler {

class ScheduledModel;  // a model's queue and runner; opaque to callers

class Scheduler {
 public:
  struct Options {
    std::vector<ExecutorSpec> executors;  // at least one
    backend::Backend* backend = nullptr;  // for InitExecutorThread; may be null in tests
    Clock* clock = Clock::Real();
    // The CPU time an executor thread (OS id) has run, nullopt once it
    // ended: a demoted forward's max_execution_ms counts what it ran, not
    // the time it waited for a core at SCHED_IDLE (running_batches.h). Null:
    // wall time, as for every other forward.
    std::function<std::optional<Duration>(int thread_id)> thread_cpu_time = ThreadCpuTime;
    // Queue depth, batch sizes and rejections by reason; may be null.
    metrics::Registry* metrics = nullptr;
    // Measure each model's batch sizes at AddModel (on an executor) and form
    // only those that pay (batch_calibration.h). A model's config may still
    // say `calibrate: false`. Tests of batch formation turn it off.
    bool calibrate = true;
    CalibrationOptions calibration;
    // Bytes of requests the scheduler holds at once (queued or running: their
    // tensors and raw payloads), all models together; past it Enqueue fails
    // kUnavailable (503, as Triton answers a full queue) with a log line at most
    // every 10 s. max_queue_size counts requests per model, and 128 requests of
    // 64 MiB are 8 GiB: this bounds the memory. 0 = no limit.
    size_t max_queue_bytes = 0;
    // A lone request (nothing else queued) of a model that can run wide
    // takes the cores of the executors idle at that moment, which are parked
    // meanwhile (lone_request_width.h); under load the plan's shape stands.
    bool widen_lone_requests = true;
    // A running batch whose every request has been answered (deadline
    // passed, client gone) while other work waits is given up at once: its
    // thread (and its OpenMP team) goes to SCHED_IDLE and a new thread takes
    // its executor, as at max_execution_ms. Bounds on the threads so given
    // up and still inside their forward: past `max_stuck_per_model` for one
    // model (0: as many as there are executors), that model is quarantined
    // with the reason; at `max_stuck_threads` for the node (0: twice the
    // executors), unwaited batches keep their executor until
    // max_execution_ms. A stuck thread at SCHED_IDLE takes only cycles no
    // other thread wants, but keeps its stack, its OpenMP team and what its
    // forward allocated.
    int max_stuck_per_model = 0;
    int max_stuck_threads = 0;
    // Time one forward of each max_batch_size 1 model at AddModel, on an
    // executor in the background, so that its execution limit derives from
    // a measurement (ModelQueue::SetTimedForward). Off by default: tests
    // that count a fake model's calls keep their counts; the server sets it.
    bool time_unbatched = false;
    // Memory admission (memory_admission.h): the process's memory limit in
    // bytes, before the margin (the server's: the smaller of --memory-budget
    // and the cgroup's limit), and where it came from, for messages. 0 = none:
    // batches are not checked (one null test each).
    int64_t memory_limit = 0;
    std::string memory_limit_source;
    // Reads the process's memory, to measure each model's activation memory
    // (at calibration, on a max_batch_size 1 model's timed forward, and, with
    // a memory_limit, one forward in the background for a model neither
    // measures) and for admission. Off when not set: nothing measured, and
    // admission has no figure to check.
    MemoryProbe memory_probe;
  };

  static StatusOr<std::unique_ptr<Scheduler>> Create(const Options& options);
  ~Scheduler();  // stops the executors; queued requests complete with kUnavailable

  // Registers a model version. The returned handle stays valid while held.
  // Unless the spec has a known calibration or defers it (ModelSpec),
  // blocks while the model's batch sizes are calibrated on an executor (up to
  // about CalibrationBudget: 1.5 to 10 s; nothing for max_batch_size 1 or
  // `calibrate: false`): call it from a loading thread, never an executor.
  std::shared_ptr<ScheduledModel> AddModel(ModelSpec spec);
  // Stops accepting requests for `model`; requests already queued still run.
  void RemoveModel(const std::shared_ptr<ScheduledModel>& model);

  // Validates `request` against the model's config and queues it. On OK the
  // scheduler has moved from `request` and `done`, owns the request, and calls
  // `done` exactly once, later, on an executor thread. On error neither is
  // moved from and `done` is not called: the caller still owns both, with the
  // request's inputs possibly put in the config's order (nothing else is
  // changed), and may enqueue them elsewhere. Errors: kInvalidArgument (shape,
  // dtype, missing input...), kResourceExhausted (queue full), kUnavailable
  // (model removed, draining, or max_queue_bytes held; a removed model is
  // checked first and its refusals are not counted as rejections).
  Status Enqueue(ScheduledModel& model, InferenceRequest&& request, Completion&& done);

  // Refuses new requests from now on (kUnavailable); returns at once.
  void StopAccepting();
  // Waits until every queued and running request has completed or `deadline`
  // passes. Returns true when all completed.
  bool WaitIdle(TimePoint deadline);
  // For a drain whose grace is over: answers `status` to every request
  // still queued or running (the batches run on; their results are
  // dropped), so that clients hear before the ports close. Returns how many.
  size_t AnswerUnfinished(const Status& status);

  size_t num_executors() const;
  // Requests queued (not yet running) for one model.
  size_t QueueDepth(const ScheduledModel& model) const;
  // What calibration measured and chose for one model (a copy).
  BatchCalibration GetCalibration(const ScheduledModel& model) const;
  // Bytes of the requests queued or running, all models (see max_queue_bytes).
  size_t HeldBytes() const;

  // Replaces every executor thread with a new one at its next idle moment
  // (between batches and tasks; a running batch finishes first). What
  // libtorch keeps per thread (ideep's convolution cache, the OpenMP team,
  // the allocator's thread cache) for every model an executor ever ran goes
  // with the old thread. The successor joins it, runs `after_exit` (the
  // repository hands the freed memory back), sets itself up like the first
  // (Backend::InitExecutorThread) and takes work. For when no model is
  // resident: a model's next batches would rebuild that state.
  void RecycleExecutors(std::function<void()> after_exit);
  // Executor threads replaced so far (tests).
  int recycled_executors() const;
  // Executor threads given up while stuck in a batch past its model's
  // max_execution_ms, and not returned since. The destructor waits for
  // them: a process that must end now (a drain past its grace) exits
  // without destroying the scheduler.
  int abandoned_executors() const;
  // One line per batch running now: model, executor, time running (for the
  // log of a drain that gives up).
  std::vector<std::string> DescribeRunning() const;

 private:
  class Impl;
  explicit Scheduler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferd::scheduler
