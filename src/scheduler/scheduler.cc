#include "scheduler/scheduler.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <future>
#include <thread>

#include "common/thread_annotations.h"
#include "common/thread_slots.h"
#include "scheduler/calibration_report.h"
#include "scheduler/executor_task.h"
#include "scheduler/model_queue.h"
#include "scheduler/request_validation.h"

namespace inferd::scheduler {
class Scheduler::Impl {
 public:
  explicit Impl(const Options& options) : options_(options) {
    if (options_.metrics) {
      held_bytes_gauge_ = &options_.metrics->GetGauge(
          "inferd_queue_bytes", "bytes of requests queued or running, all models (--max-queue-bytes)",
          {});
    }
  }

  ~Impl() { Stop(); }

  void Start() {
    MutexLock lock(&mu_);
    slots_.AssertLockedBy(&mu_);
    slots_.Start(static_cast<int>(options_.executors.size()),
                 [this](int id, uint64_t generation) { ExecutorLoop(id, generation); });
  }

  void RecycleExecutors(std::function<void()> after_exit) {
    {
      MutexLock lock(&mu_);
      slots_.AssertLockedBy(&mu_);
      if (!slots_.Recycle(std::move(after_exit))) return;
    }
    cv_.SignalAll();
  }

  int recycled_executors() const {
    MutexLock lock(&mu_);
    slots_.AssertLockedBy(&mu_);
    return slots_.recycled();
  }

  void Stop() {
    std::vector<QueuedRequest> orphans;
    std::deque<std::shared_ptr<ExecutorTask>> tasks;
    std::vector<std::thread> threads;
    {
      MutexLock lock(&mu_);
      if (stopping_) return;
      stopping_ = true;
      slots_.AssertLockedBy(&mu_);
      threads = slots_.Stop();  // from here no executor is replaced
      for (auto& q : queues_) {
        q->AssertLockedBy(&mu_);
        for (auto& r : q->TakeAll()) orphans.push_back(std::move(r));
      }
      tasks.swap(tasks_);
      Release(SumBytes(orphans));
    }
    cv_.SignalAll();
    for (auto& t : threads) t.join();
    for (auto& t : tasks) t->cancel();
    for (auto& r : orphans) r.done(Unavailable("server is shutting down"));
  }

  std::shared_ptr<ModelQueue> AddModel(ModelSpec spec) {
    auto q = std::make_shared<ModelQueue>(std::move(spec), &mu_, options_.clock);
    q->set_executors(static_cast<int>(options_.executors.size()));  // before it is shared
    if (options_.metrics) {
      q->set_metrics(ModelQueue::MakeMetrics(*options_.metrics, q->config().name,
                                             q->spec().version));  // before the queue is shared
    }
    if (q->spec().known_calibration) {
      BatchCalibration known = *q->spec().known_calibration;
      known.seconds = 0;  // nothing measured at this load
      Publish(*q, std::move(known), "measured at an earlier load of this file");
    } else if (q->spec().defer_calibration && WouldCalibrate(q->config())) {
      BatchCalibration none;
      none.note = "deferred: measured once the model's requests queue";
      Publish(*q, std::move(none), "");
      MutexLock lock(&mu_);
      q->AssertLockedBy(&mu_);
      q->set_calibration_deferred(true);
    } else {
      Calibrate(q);
    }
    MutexLock lock(&mu_);
    queues_.push_back(q);
    return q;
  }

  BatchCalibration GetCalibration(const ModelQueue& queue) const {
    MutexLock lock(&mu_);
    queue.AssertLockedBy(&mu_);
    return queue.calibration();
  }

  void RemoveModel(const std::shared_ptr<ModelQueue>& queue) {
    std::shared_ptr<ModelQueue> drop;  // released after the lock: it may hold the model
    MutexLock lock(&mu_);
    queue->AssertLockedBy(&mu_);
    queue->MarkRemoved();
    // An idle queue goes now, so that an unloaded model's memory is freed when
    // its last handle goes (not when an executor next wakes); a busy one stays
    // in queues_ until its last queued request has run.
    if (queue->empty() && queue->running() == 0) {
      auto it = std::find(queues_.begin(), queues_.end(), queue);
      if (it != queues_.end()) {
        drop = std::move(*it);
        queues_.erase(it);
      }
    }
  }

  // Moves from `request` and `done` only once the request is queued (see
  // Scheduler::Enqueue): every refusal returns before the Push.
  Status Enqueue(ModelQueue& queue, InferenceRequest&& request, Completion&& done) {
    ASSIGN_OR_RETURN(int items,
                     ValidateRequest(queue.config(), static_cast<bool>(queue.spec().hooks.preprocess),
                                     &request));
    const TimePoint now = options_.clock->Now();
    const size_t bytes = RequestBytes(request);
    // Set on the request only when it is queued: a refused request's deadline
    // stays unset, for the next queue's request_timeout_ms.
    TimePoint deadline = request.deadline;
    if (deadline == TimePoint::max()) {
      deadline = now + std::chrono::milliseconds(queue.config().request_timeout_ms);
    }
    {
      MutexLock lock(&mu_);
      queue.AssertLockedBy(&mu_);
      // First, and not counted as a rejection: the repository may hand the
      // request to the version's replacement (ServedModel::Enqueue).
      if (queue.removed()) return Unavailable("model '" + queue.spec().name + "' is being unloaded");
      if (draining_ || stopping_) {
        Count(queue.metrics().draining);
        return Unavailable("server is draining: not accepting requests");
      }
      const size_t max = options_.max_queue_bytes;
      if (max > 0 && bytes > max - held_bytes_) {  // held_bytes_ <= max always
        Count(queue.metrics().queue_bytes);
        const std::string what = "the server holds " + std::to_string(held_bytes_) +
                                 " bytes of queued and running requests; this one's " +
                                 std::to_string(bytes) + " would pass its limit (--max-queue-bytes " +
                                 std::to_string(max) + ")";
        if (ShouldLog()) spdlog::warn("refusing requests with 503: {}", what);
        return Unavailable(what + "; retry later");
      }
      if (Status room = queue.CheckRoom(); !room.ok()) {
        Count(queue.metrics().queue_full);
        return room;
      }
      request.enqueue_time = now;
      request.deadline = deadline;
      // Cannot fail: CheckRoom passed under the same lock.
      RETURN_IF_ERROR(queue.Push(QueuedRequest{std::move(request), std::move(done), items, 0, bytes}));
      Hold(bytes);
      ++outstanding_;
      SetDepth(queue);
    }
    cv_.Signal();
    return Status::Ok();
  }

  void StopAccepting() {
    MutexLock lock(&mu_);
    draining_ = true;
  }

  bool WaitIdle(TimePoint deadline) {
    MutexLock lock(&mu_);
    while (outstanding_ > 0) {
      if (options_.clock->Now() >= deadline) return false;
      idle_cv_.WaitFor(&mu_, std::chrono::milliseconds(50));
    }
    return true;
  }

  size_t QueueDepth(const ModelQueue& queue) const {
    MutexLock lock(&mu_);
    queue.AssertLockedBy(&mu_);
    return queue.size();
  }

  size_t num_executors() const { return options_.executors.size(); }

  size_t HeldBytes() const {
    MutexLock lock(&mu_);
    return held_bytes_;
  }

 private:
  // Picks the ready queue this executor should serve: highest priority head
  // first, then the longest-waiting head, across all models.
  ModelQueue* PickReady(int executor, TimePoint now, TimePoint* next_wake) REQUIRES(mu_) {
    ModelQueue* best = nullptr;
    std::pair<int, TimePoint> best_key;
    for (auto& q : queues_) {
      q->AssertLockedBy(&mu_);
      if (q->empty()) continue;
      *next_wake = std::min(*next_wake, q->EarliestDeadline());
      if (!q->CanStartOn(executor)) continue;
      auto ready = q->ReadyTime(/*executors_idle=*/idle_ > 0);
      if (*ready > now) {
        *next_wake = std::min(*next_wake, *ready);
        continue;
      }
      auto key = *q->HeadKey();
      if (!best || key < best_key) {
        best = q.get();
        best_key = key;
      }
    }
    return best;
  }

  void ExecutorLoop(int id, uint64_t generation) {
    const ExecutorSpec& spec = options_.executors[static_cast<size_t>(id)];
    // Named for `top -H` and /proc/PID/task/*/comm (15 characters at most).
    pthread_setname_np(pthread_self(), ("inferd-exec-" + std::to_string(id % 1000)).c_str());
    if (options_.backend) options_.backend->InitExecutorThread(spec.cores, spec.num_threads);
    MutexLock lock(&mu_);
    slots_.AssertLockedBy(&mu_);
    while (true) {
      const TimePoint now = options_.clock->Now();
      std::vector<QueuedRequest> expired, cancelled;
      for (auto& q : queues_) {
        q->AssertLockedBy(&mu_);
        const size_t e0 = expired.size(), c0 = cancelled.size();
        q->TakeExpired(now, &expired, &cancelled);
        Count(q->metrics().deadline, expired.size() - e0);
        Count(q->metrics().cancelled, cancelled.size() - c0);
        if (expired.size() != e0 || cancelled.size() != c0) SetDepth(*q);
      }
      if (!expired.empty() || !cancelled.empty()) {
        lock.Unlock();
        for (auto& r : expired) {
          r.done(DeadlineExceeded("request waited " +
                                  std::to_string(MicrosBetween(r.request.enqueue_time, now) / 1000) +
                                  " ms in the queue and passed its deadline before compute"));
        }
        for (auto& r : cancelled) r.done(Cancelled("client went away before compute"));
        const size_t n = expired.size() + cancelled.size();
        const size_t bytes = SumBytes(expired) + SumBytes(cancelled);
        expired.clear();  // their memory goes before their bytes are released
        cancelled.clear();
        lock.Lock();
        Release(bytes);
        Finish(n);
        continue;
      }
      if (stopping_) return;
      if (slots_.Stale(generation)) {
        slots_.HandOver(id);  // RecycleExecutors: a new thread takes this slot
        return;
      }
      if (auto task = TakeTask(id)) {
        lock.Unlock();
        task->run(id);
        lock.Lock();
        continue;
      }
      TimePoint wake = TimePoint::max();
      ModelQueue* q = PickReady(id, now, &wake);
      if (!q) {
        PruneRemoved();
        ++idle_;
        if (wake == TimePoint::max()) {
          cv_.Wait(&mu_);
        } else {
          cv_.WaitFor(&mu_, wake - now);
        }
        --idle_;
        continue;
      }
      // Spread the queued items over the executors that are idle now and may
      // run this model, instead of handing them all to this one while the
      // others wait: batching must not leave cores idle.
      q->AssertLockedBy(&mu_);
      const int helpers = q->spec().max_concurrency > 0
                              ? std::min(idle_, q->spec().max_concurrency - q->running() - 1)
                              : idle_;
      Batch batch = q->TakeBatch(now, 1 + std::max(helpers, 0));
      SetDepth(*q);
      q->BeginRun(batch.items);
      // Hold the queue (and its model) alive while running unlocked.
      std::shared_ptr<ModelQueue> hold = Find(q);
      MaybeStartDeferredCalibration(hold, batch.items);
      lock.Unlock();
      Joined joined;
      BatchRunner::TopUp top_up = TopUpFor(*hold, batch, &joined);
      if (!top_up && hold->metrics().batch_size) hold->metrics().batch_size->Observe(batch.items);
      const size_t n = batch.requests.size();
      const size_t bytes = SumBytes(batch.requests);
      RunOnExecutor(*hold, batch, now, top_up);
      batch.requests.clear();
      lock.Lock();
      q->AssertLockedBy(&mu_);
      if (top_up && !joined.observed && q->metrics().batch_size) {
        q->metrics().batch_size->Observe(batch.items + joined.items);
      }
      q->EndRun(batch.items + joined.items);
      Release(bytes + joined.bytes);
      Finish(n + joined.requests);
      cv_.SignalAll();  // a concurrency slot freed; other executors may start
    }
  }

  // What joined a running batch (TopUpFor), for the accounting after it.
  struct Joined {
    int items = 0;
    size_t requests = 0;
    size_t bytes = 0;
    bool observed = false;  // the batch's size went to inferd_batch_size
  };

  // For a batch of raw requests of a model with pre-processing: requests
  // queued while it is pre-processed join it, up to the queue's max_items(),
  // unless another executor that may run the model is idle (it takes them
  // instead: batching never leaves a core idle). Null for other batches.
  BatchRunner::TopUp TopUpFor(ModelQueue& q, const Batch& batch, Joined* joined) {
    if (!q.spec().hooks.preprocess || batch.requests.empty() ||
        batch.requests.front().request.raw.empty()) {
      return nullptr;
    }
    return [this, &q, joined](int items) -> std::vector<QueuedRequest> {
      MutexLock lock(&mu_);
      q.AssertLockedBy(&mu_);
      const int room = q.ShareCap() - items;
      const int slots =
          q.spec().max_concurrency > 0 ? q.spec().max_concurrency - q.running() : idle_;
      const TimePoint now = options_.clock->Now();
      std::vector<QueuedRequest> more;
      if (!stopping_ && room > 0 && !q.empty() && std::min(idle_, slots) <= 0) {
        more = q.TakeMore(room, now);
      }
      if (more.empty()) {  // the batch is formed: its size is known before its answers go
        joined->observed = true;
        if (q.metrics().batch_size) q.metrics().batch_size->Observe(items);
        return more;
      }
      for (auto& m : more) {
        m.joined = now;
        q.Join(m.items);
        joined->items += m.items;
        joined->bytes += m.bytes;
      }
      joined->requests += more.size();
      SetDepth(q);
      return more;
    };
  }

  std::shared_ptr<ModelQueue> Find(ModelQueue* q) REQUIRES(mu_) {
    for (auto& s : queues_) {
      if (s.get() == q) return s;
    }
    return nullptr;
  }

  // A loop, not remove_if: the analysis does not carry mu_ into a lambda.
  void PruneRemoved() REQUIRES(mu_) {
    for (auto it = queues_.begin(); it != queues_.end();) {
      ModelQueue& q = **it;
      q.AssertLockedBy(&mu_);
      it = q.removed() && q.empty() && q.running() == 0 ? queues_.erase(it) : std::next(it);
    }
  }

  static void Count(const std::shared_ptr<metrics::Counter>& c, size_t n = 1) {
    if (c && n) c->Increment(static_cast<double>(n));
  }
  void SetDepth(const ModelQueue& q) REQUIRES(mu_) {
    q.AssertLockedBy(&mu_);
    if (q.metrics().queue_depth) q.metrics().queue_depth->Set(static_cast<double>(q.size()));
  }

  void Hold(size_t bytes) REQUIRES(mu_) { SetHeld(held_bytes_ + bytes); }
  void Release(size_t bytes) REQUIRES(mu_) { SetHeld(held_bytes_ - bytes); }
  void SetHeld(size_t bytes) REQUIRES(mu_) {
    held_bytes_ = bytes;
    if (held_bytes_gauge_) held_bytes_gauge_->Set(static_cast<double>(held_bytes_));
  }

  // At most one log line per 10 s about refusals (a flood must not become a
  // flood of log lines). Called with mu_ held.
  bool ShouldLog() REQUIRES(mu_) {
    const TimePoint now = options_.clock->Now();
    if (logged_once_ && now - last_refusal_log_ < std::chrono::seconds(10)) return false;
    logged_once_ = true;
    last_refusal_log_ = now;
    return true;
  }

  void Finish(size_t n) REQUIRES(mu_) {
    outstanding_ -= n;
    if (outstanding_ == 0) idle_cv_.SignalAll();
  }

  bool WouldCalibrate(const config::ModelConfig& config) const {
    return options_.calibrate && config.max_batch_size > 1 && config.dynamic_batching.calibrate;
  }

  // Queues a task for the executors; cancels it when stopping.
  void Post(std::shared_ptr<ExecutorTask> task) {
    {
      MutexLock lock(&mu_);
      if (!stopping_) {
        tasks_.push_back(std::move(task));
        task = nullptr;
      }
    }
    if (task) {
      task->cancel();
      return;
    }
    cv_.SignalAll();
  }

  // Runs the model's calibration on an executor, blocking the caller (the
  // loading thread) until it is done. Nothing to measure for a model with
  // max_batch_size 1 or `calibrate: false`.
  void Calibrate(const std::shared_ptr<ModelQueue>& q) {
    BatchCalibration result;
    if (!options_.calibrate) {
      result.note = "calibration is off for this server";
    } else if (WouldCalibrate(q->config())) {
      auto promise = std::make_shared<std::promise<BatchCalibration>>();
      Post(CalibrationTask(q, options_.calibration, options_.executors,
                           [promise](BatchCalibration c) { promise->set_value(std::move(c)); }));
      result = promise->get_future().get();
    } else {
      result = q->runner().Calibrate(options_.calibration);  // only explains why not
    }
    Publish(*q, std::move(result), "");
  }

  // Called with mu_ held, as a batch of `q` was just taken: the first time
  // requests of a model with a deferred calibration queue (a batch of more
  // than one, or more waiting), its calibration starts in the background.
  void MaybeStartDeferredCalibration(const std::shared_ptr<ModelQueue>& q, int items)
      REQUIRES(mu_) {
    q->AssertLockedBy(&mu_);
    if (!q->calibration_deferred() || stopping_ || (items <= 1 && q->empty())) return;
    q->set_calibration_deferred(false);
    spdlog::info("model '{}': requests queue; calibrating its batch sizes", q->spec().name);
    auto publish = [this, q](BatchCalibration c) { Publish(*q, std::move(c), ""); };
    tasks_.push_back(CalibrationTask(q, options_.calibration, options_.executors, publish));
    cv_.SignalAll();
  }

  // Logs the table, exports it and hands it to the queue. `origin` says where
  // a calibration not measured now came from.
  void Publish(ModelQueue& q, BatchCalibration result, const std::string& origin) {
    LogCalibration(q.spec().name, result, origin);
    bool removed = false;
    {
      MutexLock lock(&mu_);
      q.AssertLockedBy(&mu_);
      removed = q.removed();
    }
    // A deferred calibration that ends after its version was unloaded is not
    // exported: the repository removes an unloaded model's series, and these
    // would come back for a model no longer in memory.
    if (options_.metrics && !removed) {
      ExportCalibration(*options_.metrics,
                        {{"model", q.config().name}, {"version", q.spec().version}},
                        q.config().max_batch_size, result);
    }
    MutexLock lock(&mu_);
    q.AssertLockedBy(&mu_);
    q.SetCalibration(std::move(result));
  }

  // Takes a task this executor may run; null when none.
  std::shared_ptr<ExecutorTask> TakeTask(int executor) REQUIRES(mu_) {
    for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
      const auto& allowed = (*it)->executors;
      if (allowed.empty() || std::find(allowed.begin(), allowed.end(), executor) != allowed.end()) {
        auto task = *it;
        tasks_.erase(it);
        return task;
      }
    }
    return nullptr;
  }

  // The runner answers every request and never throws; this catch is the
  // last line that keeps the executor alive if even building its error
  // message failed (e.g. out of memory twice).
  static void RunOnExecutor(ModelQueue& q, Batch& batch, TimePoint start,
                            const BatchRunner::TopUp& top_up) {
    try {
      q.runner().Run(batch.requests, start, top_up);
    } catch (...) {
      std::fputs("inferd: an executor survived an exception while answering a failed batch\n",
                 stderr);
    }
  }

  Options options_;
  // Guards everything below and every ModelQueue's state (each queue gets it
  // at AddModel).
  mutable Mutex mu_;
  CondVar cv_;       // work arrived, or a slot freed
  CondVar idle_cv_;  // outstanding_ reached 0
  std::vector<std::shared_ptr<ModelQueue>> queues_ GUARDED_BY(mu_);
  std::deque<std::shared_ptr<ExecutorTask>> tasks_ GUARDED_BY(mu_);  // run before batches
  size_t outstanding_ GUARDED_BY(mu_) = 0;  // queued + running
  size_t held_bytes_ GUARDED_BY(mu_) = 0;   // their bytes
  metrics::Gauge* held_bytes_gauge_ = nullptr;  // set before the executors start
  bool logged_once_ GUARDED_BY(mu_) = false;
  TimePoint last_refusal_log_ GUARDED_BY(mu_){};
  int idle_ GUARDED_BY(mu_) = 0;  // executors waiting for work
  bool draining_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  ThreadSlots slots_{&mu_};  // one per executor
};

StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const Options& options) {
  if (options.executors.empty()) return InvalidArgument("the scheduler needs at least one executor");
  if (!options.clock) return InvalidArgument("the scheduler needs a clock");
  auto impl = std::make_unique<Impl>(options);
  impl->Start();
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scheduler::~Scheduler() = default;

std::shared_ptr<ModelQueue> Scheduler::AddModel(ModelSpec spec) {
  return impl_->AddModel(std::move(spec));
}
void Scheduler::RemoveModel(const std::shared_ptr<ModelQueue>& queue) { impl_->RemoveModel(queue); }
Status Scheduler::Enqueue(ModelQueue& queue, InferenceRequest&& request, Completion&& done) {
  return impl_->Enqueue(queue, std::move(request), std::move(done));
}
void Scheduler::StopAccepting() { impl_->StopAccepting(); }
bool Scheduler::WaitIdle(TimePoint deadline) { return impl_->WaitIdle(deadline); }
size_t Scheduler::num_executors() const { return impl_->num_executors(); }
size_t Scheduler::QueueDepth(const ModelQueue& queue) const { return impl_->QueueDepth(queue); }
BatchCalibration Scheduler::GetCalibration(const ModelQueue& queue) const {
  return impl_->GetCalibration(queue);
}
size_t Scheduler::HeldBytes() const { return impl_->HeldBytes(); }
void Scheduler::RecycleExecutors(std::function<void()> after_exit) {
  impl_->RecycleExecutors(std::move(after_exit));
}
int Scheduler::recycled_executors() const { return impl_->recycled_executors(); }

}  // namespace inferd::scheduler
