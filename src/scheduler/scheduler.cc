#include "scheduler/scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "scheduler/answer_once.h"
#include "scheduler/internal/scheduled_model.h"
#include "scheduler/internal/scheduler_impl.h"
#include "scheduler/model_queue.h"
#include "scheduler/request_validation.h"

namespace inferd::scheduler {

void Scheduler::Impl::Start() {
  if (options_.metrics) {
    abandoned_total_ = &options_.metrics->GetCounter(
        "inferd_executors_abandoned_total",
        "executor threads given up in a batch (past its model's max_execution_ms, or nobody "
        "waited for it), and replaced",
        {});
    unwaited_total_ = &options_.metrics->GetCounter(
        "inferd_executors_unwaited_total",
        "executor threads given up in a batch whose every request had been answered "
        "(deadline passed, client gone) while other work waited, and replaced",
        {});
    overdue_total_ = &options_.metrics->GetCounter(
        "inferd_executors_overdue_total",
        "executor threads demoted (SCHED_IDLE) in a forward that ran far past its measured time "
        "while other models' work waited, and replaced; their requests still wait for them",
        {});
    stuck_gauge_ = &options_.metrics->GetGauge(
        "inferd_executors_stuck", "executor threads given up and still inside their forward", {});
    threads_gauge_ = &options_.metrics->GetGauge(
        "inferd_compute_threads",
        "intra-op threads of the batches running now (a lone request's counts its lent cores)", {});
    threads_peak_gauge_ = &options_.metrics->GetGauge(
        "inferd_compute_threads_peak",
        "the most intra-op threads that ran batches at once since start (<= the usable cores)", {});
  }
  MutexLock lock(&mu_);
  executor_state_.assign(options_.executors.size(), ExecutorState::kBusy);
  slots_.AssertLockedBy(&mu_);
  slots_.Start(static_cast<int>(options_.executors.size()),
               [this](int id, uint64_t generation) { ExecutorLoop(id, generation); });
  watchdog_ = std::thread([this] { WatchdogLoop(); });
}

void Scheduler::Impl::RecycleExecutors(std::function<void()> after_exit) {
  {
    MutexLock lock(&mu_);
    slots_.AssertLockedBy(&mu_);
    if (!slots_.Recycle(std::move(after_exit))) return;
  }
  cv_.SignalAll();
}

int Scheduler::Impl::recycled_executors() const {
  MutexLock lock(&mu_);
  slots_.AssertLockedBy(&mu_);
  return slots_.recycled();
}

int Scheduler::Impl::abandoned_executors() const {
  MutexLock lock(&mu_);
  return stuck_;
}

std::vector<std::string> Scheduler::Impl::DescribeRunning() const {
  MutexLock lock(&mu_);
  return running_.Describe(options_.clock->Now());
}

// Stops the executors and the watchdog. Waits for executor threads given up
// while stuck (see the header): a process that must end now exits instead.
void Scheduler::Impl::Stop() {
  std::vector<QueuedRequest> orphans;
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    slots_.AssertLockedBy(&mu_);
    threads = slots_.Stop();  // from here no executor is replaced
    orphans = TakeAllQueued();
    Release(SumBytes(orphans), 0);
  }
  cv_.SignalAll();
  watch_cv_.SignalAll();
  for (auto& t : threads) t.join();
  if (watchdog_.joinable()) watchdog_.join();
  tasks_.CancelAll();
  for (auto& r : orphans) r.done(Unavailable("server is shutting down"));
  MutexLock lock(&mu_);
  while (stuck_ > 0) stuck_cv_.Wait(&mu_);
}

// The queue, runner and calibrator of the model are made together, each
// told only its part (internal/scheduled_model.h), before the model is shared.
std::shared_ptr<ScheduledModel> Scheduler::Impl::AddModel(ModelSpec spec) {
  const int executors = static_cast<int>(options_.executors.size());
  auto m = std::make_shared<ScheduledModel>(std::move(spec), &mu_, options_.clock, options_.metrics,
                                            executors, options_.memory_probe, admission_);
  tasks_.CalibrateAtAdd(m);
  MutexLock lock(&mu_);
  models_.push_back(m);
  return m;
}

BatchCalibration Scheduler::Impl::GetCalibration(const ScheduledModel& model) const {
  MutexLock lock(&mu_);
  model.AssertLockedBy(&mu_);
  return model.calibration();
}

void Scheduler::Impl::RemoveModel(const std::shared_ptr<ScheduledModel>& model) {
  std::shared_ptr<ScheduledModel> drop;  // released after the lock: it may hold the model
  MutexLock lock(&mu_);
  ModelQueue& q = model->queue();
  q.AssertLockedBy(&mu_);
  q.MarkRemoved();
  // An idle model goes now, so that an unloaded model's memory is freed when
  // its last handle goes (not when an executor next wakes); a busy one stays
  // in models_ until its last queued request has run.
  if (q.empty() && q.running() == 0) {
    auto it = std::find(models_.begin(), models_.end(), model);
    if (it != models_.end()) {
      drop = std::move(*it);
      models_.erase(it);
    }
  }
}

// Moves from `request` and `done` only once the request is queued (see
// Scheduler::Enqueue): every refusal returns before the Push.
Status Scheduler::Impl::Enqueue(ScheduledModel& model, InferenceRequest&& request,
                                Completion&& done) {
  ASSIGN_OR_RETURN(
      int items,
      ValidateRequest(model.config(), static_cast<bool>(model.spec().hooks.preprocess), &request));
  const TimePoint now = options_.clock->Now();
  const size_t bytes = RequestBytes(request);
  // Set on the request only when it is queued: a refused request's deadline
  // stays unset, for the next queue's request_timeout_ms.
  TimePoint deadline = request.deadline;
  if (deadline == TimePoint::max()) {
    deadline = now + std::chrono::milliseconds(model.config().request_timeout_ms);
  }
  {
    MutexLock lock(&mu_);
    model.AssertLockedBy(&mu_);
    ModelQueue& queue = model.queue();
    queue.AssertLockedBy(&mu_);
    // First, and not counted as a rejection: the repository may hand the
    // request to the version's replacement (ServedModel::Enqueue).
    if (queue.removed()) return Unavailable("model '" + model.spec().name + "' is being unloaded");
    if (draining_ || stopping_) {
      Count(model.metrics().draining);
      return Unavailable("server is draining: not accepting requests");
    }
    // A mirrored copy that would wait for the executors copies may hold
    // (all but one) behind another copy is refused; the mirror counts it.
    // One may wait: a copy is sent from the executor that has just answered
    // its primary, before the previous copy's executor is back.
    if (request.priority == kSparePriority && spare_running_ + SpareQueued() > SpareCap()) {
      return ResourceExhausted(kNoSpareExecutor);
    }
    RETURN_IF_ERROR(accounting_.CheckBytes(bytes, model.metrics().queue_bytes));
    if (Status room = queue.CheckRoom(); !room.ok()) {
      Count(model.metrics().queue_full);
      return room;
    }
    if (!queue.busy()) queue.Reenter(SystemVirtualTime());
    request.enqueue_time = now;
    request.deadline = deadline;
    const bool client = request.priority != kSparePriority;
    auto late = model.metrics().late_results;
    auto once = std::make_shared<AnswerOnce>(std::move(done));
    Completion safe = RaceSafe(once, [late] { Count(late); });
    QueuedRequest queued{std::move(request), std::move(safe), items, 0, bytes};
    queued.once = std::move(once);
    // Cannot fail: CheckRoom passed under the same lock.
    RETURN_IF_ERROR(queue.Push(std::move(queued)));
    accounting_.Hold(bytes);
    model.PublishDepth();
    // A deadline earlier than the watchdog's next wake: it must see it
    // (every executor may be busy), so it recomputes when to wake.
    // A batch nobody waits for is given up once other work waits: this.
    // So is an overdue batch (watchdog.cc) once another model's work waits.
    if (deadline < watch_wake_ || running_.HasUnwaited() ||
        (client && OverdueWake({&model}) < watch_wake_)) {
      watch_cv_.Signal();
    }
  }
  cv_.Signal();
  return Status::Ok();
}

int Scheduler::Impl::SpareQueued() {
  int n = 0;
  for (auto& m : models_) {
    const ModelQueue& q = m->queue();
    q.AssertLockedBy(&mu_);
    n += q.SpareQueued();
  }
  return n;
}

void Scheduler::Impl::StopAccepting() {
  MutexLock lock(&mu_);
  draining_ = true;
}

bool Scheduler::Impl::WaitIdle(TimePoint deadline) {
  MutexLock lock(&mu_);
  while (accounting_.outstanding() > 0) {
    if (options_.clock->Now() >= deadline) return false;
    options_.clock->WaitUntil(&idle_cv_, &mu_, deadline);
  }
  return true;
}

std::vector<QueuedRequest> Scheduler::Impl::TakeAllQueued() {
  std::vector<QueuedRequest> all;
  for (auto& m : models_) {
    ModelQueue& q = m->queue();
    q.AssertLockedBy(&mu_);
    for (auto& r : q.TakeAll()) all.push_back(std::move(r));
  }
  return all;
}

size_t Scheduler::Impl::AnswerUnfinished(const Status& status) {
  std::vector<QueuedRequest> queued;
  std::vector<Completion> running;
  {
    MutexLock lock(&mu_);
    queued = TakeAllQueued();
    Release(SumBytes(queued), queued.size());
    for (auto& m : models_) {
      m->AssertLockedBy(&mu_);
      m->PublishDepth();
    }
    running = running_.Unanswered();
  }
  for (auto& r : queued) r.done(status);
  for (auto& done : running) done(status);  // race-safe: a batch may answer first
  return queued.size() + running.size();
}

size_t Scheduler::Impl::QueueDepth(const ScheduledModel& model) const {
  MutexLock lock(&mu_);
  const ModelQueue& queue = model.queue();
  queue.AssertLockedBy(&mu_);
  return queue.size();
}

size_t Scheduler::Impl::HeldBytes() const {
  MutexLock lock(&mu_);
  return accounting_.held_bytes();
}

// The smallest virtual start of the busy queues (fair_share.h), never
// moving back: where a queue that becomes busy re-enters.
double Scheduler::Impl::SystemVirtualTime() {
  double v = -1;
  for (auto& m : models_) {
    const ModelQueue& q = m->queue();
    q.AssertLockedBy(&mu_);
    if (q.busy() && (v < 0 || q.virtual_start() < v)) v = q.virtual_start();
  }
  if (v > virtual_now_) virtual_now_ = v;
  return virtual_now_;
}

void Scheduler::Impl::Release(size_t bytes, size_t requests) {
  if (accounting_.Release(bytes, requests)) idle_cv_.SignalAll();
}

std::shared_ptr<ScheduledModel> Scheduler::Impl::Find(ScheduledModel* m) {
  for (auto& s : models_) {
    if (s.get() == m) return s;
  }
  return nullptr;
}

// A loop, not remove_if: the analysis does not carry mu_ into a lambda.
void Scheduler::Impl::PruneRemoved() {
  for (auto it = models_.begin(); it != models_.end();) {
    ModelQueue& q = (*it)->queue();
    q.AssertLockedBy(&mu_);
    it = q.removed() && q.empty() && q.running() == 0 ? models_.erase(it) : std::next(it);
  }
}

StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const Options& options) {
  if (options.executors.empty())
    return InvalidArgument("the scheduler needs at least one executor");
  if (!options.clock) return InvalidArgument("the scheduler needs a clock");
  auto impl = std::make_unique<Impl>(options);
  impl->Start();
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scheduler::~Scheduler() = default;

std::shared_ptr<ScheduledModel> Scheduler::AddModel(ModelSpec spec) {
  return impl_->AddModel(std::move(spec));
}
void Scheduler::RemoveModel(const std::shared_ptr<ScheduledModel>& model) {
  impl_->RemoveModel(model);
}
Status Scheduler::Enqueue(ScheduledModel& model, InferenceRequest&& request, Completion&& done) {
  return impl_->Enqueue(model, std::move(request), std::move(done));
}
void Scheduler::StopAccepting() { impl_->StopAccepting(); }
size_t Scheduler::AnswerUnfinished(const Status& status) { return impl_->AnswerUnfinished(status); }
bool Scheduler::WaitIdle(TimePoint deadline) { return impl_->WaitIdle(deadline); }
size_t Scheduler::num_executors() const { return impl_->num_executors(); }
size_t Scheduler::QueueDepth(const ScheduledModel& model) const { return impl_->QueueDepth(model); }
BatchCalibration Scheduler::GetCalibration(const ScheduledModel& model) const {
  return impl_->GetCalibration(model);
}
size_t Scheduler::HeldBytes() const { return impl_->HeldBytes(); }
void Scheduler::RecycleExecutors(std::function<void()> after_exit) {
  impl_->RecycleExecutors(std::move(after_exit));
}
int Scheduler::recycled_executors() const { return impl_->recycled_executors(); }
int Scheduler::abandoned_executors() const { return impl_->abandoned_executors(); }
std::vector<std::string> Scheduler::DescribeRunning() const { return impl_->DescribeRunning(); }

}  // namespace inferd::scheduler
