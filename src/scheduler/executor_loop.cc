// The executors' side of Scheduler::Impl (internal/scheduler_impl.h): each
// executor thread loops over expiry, tasks, picking a ready queue
// (FairShare) and running its batch, with the watchdog told what runs. Here
// the parts of a model meet: a batch taken from its queue is run by its
// runner, with callbacks (TopUpFor, GiveBackFor) through which the running
// batch reaches the queue again, under the scheduler's mutex.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/thread_team.h"
#include "scheduler/fair_share.h"
#include "scheduler/internal/scheduled_model.h"
#include "scheduler/internal/scheduler_impl.h"
#include "scheduler/model_queue.h"

namespace inferd::scheduler {

// The model whose ready queue this executor serves next (FairShare::Pick),
// or null; lowers `next_wake` to when a queue not ready yet will be.
ScheduledModel* Scheduler::Impl::PickReady(int executor, TimePoint now, TimePoint* next_wake) {
  std::vector<ScheduledModel*> ready;
  std::vector<Contender> contenders;
  for (auto& m : models_) {
    const ModelQueue& q = m->queue();
    q.AssertLockedBy(&mu_);
    if (q.empty()) continue;
    *next_wake = std::min(*next_wake, q.EarliestDeadline());
    if (!q.CanStartOn(executor)) continue;
    // Mirrored copies take only spare capacity: all executors but one.
    if (spare_running_ >= SpareCap() && q.HeadIsSpare()) continue;
    auto when = q.ReadyTime(/*executors_idle=*/idle_ > 0);
    if (*when > now) {
      *next_wake = std::min(*next_wake, *when);
      continue;
    }
    ready.push_back(m.get());
    contenders.push_back(q.AsContender());
  }
  const int pick = FairShare::Pick(contenders);
  return pick < 0 ? nullptr : ready[static_cast<size_t>(pick)];
}

namespace {

// A batch 1 this dear is heavy; one this cheap is not worth cutting.
constexpr double kHeavyBatchMs = 20;
// A model whose client sent a request this recently is a neighbour to yield to.
constexpr int kNeighbourWindowMs = 1000;

}  // namespace

int Scheduler::Impl::YieldCap(const ScheduledModel& m, TimePoint now) {
  const ModelQueue& own = m.queue();
  own.AssertLockedBy(&mu_);
  if (own.Batch1Seconds() * 1e3 < kHeavyBatchMs) return 0;
  for (auto& other : models_) {
    if (other.get() == &m) continue;
    const ModelQueue& q = other->queue();
    q.AssertLockedBy(&mu_);
    if (q.removed()) continue;
    if ((!q.empty() && !q.HeadIsSpare()) ||
        now - q.last_arrival() < std::chrono::milliseconds(kNeighbourWindowMs)) {
      return 1;
    }
  }
  return 0;
}

// Answers queued requests whose deadline passed or whose client went away.
// Returns with mu_ held; true when it answered any (it unlocked to do so).
bool Scheduler::Impl::ExpireQueued(TimePoint now) {
  std::vector<QueuedRequest> expired, cancelled;
  for (auto& m : models_) {
    m->AssertLockedBy(&mu_);
    ModelQueue& q = m->queue();
    q.AssertLockedBy(&mu_);
    const size_t e0 = expired.size(), c0 = cancelled.size();
    q.TakeExpired(now, &expired, &cancelled);
    Count(m->metrics().deadline, expired.size() - e0);
    Count(m->metrics().cancelled, cancelled.size() - c0);
    if (expired.size() != e0 || cancelled.size() != c0) m->PublishDepth();
  }
  if (expired.empty() && cancelled.empty()) return false;
  mu_.Unlock();
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
  mu_.Lock();
  Release(bytes, n);
  return true;
}

void Scheduler::Impl::ExecutorLoop(int id, uint64_t generation) {
  const ExecutorSpec& spec = options_.executors[static_cast<size_t>(id)];
  // Named for `top -H` and /proc/PID/task/*/comm (15 characters at most).
  pthread_setname_np(pthread_self(), ("inferd-exec-" + std::to_string(id % 1000)).c_str());
  if (options_.backend) options_.backend->InitExecutorThread(spec.cores, spec.num_threads);
  const int tid = static_cast<int>(gettid());
  // Its OpenMP team, noted by the backend for the watchdog, goes with it.
  struct ForgetTeam {
    int tid;
    ~ForgetTeam() { ForgetThreadTeam(tid); }
  } forget{tid};
  MutexLock lock(&mu_);
  slots_.AssertLockedBy(&mu_);
  while (true) {
    const TimePoint now = options_.clock->Now();
    if (ExpireQueued(now)) continue;
    if (stopping_) return;
    if (slots_.Stale(generation)) {
      slots_.HandOver(id);  // RecycleExecutors: a new thread takes this slot
      return;
    }
    tasks_.AssertLockedBy(&mu_);
    if (tasks_.RunOne(id)) continue;  // unlocks while the task runs
    TimePoint wake = TimePoint::max();
    ScheduledModel* m = PickReady(id, now, &wake);
    if (!m) {
      PruneRemoved();
      ++idle_;
      executor_state_[static_cast<size_t>(id)] = ExecutorState::kIdle;
      options_.clock->WaitUntil(&cv_, &mu_, wake);
      // Parked: its cores run a lone request; ReturnLent makes it idle again.
      while (executor_state_[static_cast<size_t>(id)] == ExecutorState::kLent) {
        options_.clock->WaitUntil(&cv_, &mu_, TimePoint::max());
      }
      executor_state_[static_cast<size_t>(id)] = ExecutorState::kBusy;
      --idle_;
      continue;
    }
    if (!RunBatch(id, tid, m, now)) return;  // given up while it ran: the slot has a new thread
  }
}

// Takes a batch from `m`'s queue, runs it unlocked on `m`'s runner, and
// accounts for it. False when the watchdog gave the batch up meanwhile: this
// thread must then leave, touching nothing (another thread has its slot).
bool Scheduler::Impl::RunBatch(int id, int tid, ScheduledModel* m, TimePoint now) {
  // Spread the queued items over the executors that are idle now and may
  // run this model, instead of handing them all to this one while the
  // others wait: batching must not leave cores idle.
  m->AssertLockedBy(&mu_);
  ModelQueue& q = m->queue();
  q.AssertLockedBy(&mu_);
  const int helpers = q.spec().max_concurrency > 0
                          ? std::min(idle_, q.spec().max_concurrency - q.running() - 1)
                          : idle_;
  Batch batch = q.TakeBatch(now, 1 + std::max(helpers, 0), YieldCap(*m, now));
  m->PublishDepth();
  q.BeginRun(batch.items);
  std::vector<int> lent = LendTo(id, *m, batch.requests.size());
  const ExecutorSpec& own = options_.executors[static_cast<size_t>(id)];
  const ExecutorSpec wide = WidenedExecutor(options_.executors, id, lent);
  CountThreads(wide.num_threads);
  // Hold the model (its queue, runner and backend model) alive while running unlocked.
  std::shared_ptr<ScheduledModel> hold = Find(m);
  tasks_.AssertLockedBy(&mu_);
  tasks_.MaybeStartDeferred(hold, batch.items);
  RunningBatches::Entry entry{id,
                              tid,
                              hold,
                              now,
                              now + q.ExecutionLimit(),
                              {},
                              batch.items,
                              batch.requests.size(),
                              SumBytes(batch.requests),
                              lent,
                              wide.num_threads,
                              false};
  if (const Duration after = q.OverdueAfter(); after != Duration::max()) {
    entry.overdue_at = now + after;
  }
  entry.spare = !batch.requests.empty();
  for (const auto& r : batch.requests) {
    entry.requests.push_back({r.request.deadline, r.done, r.seq, r.request.is_cancelled, r.once});
    entry.spare = entry.spare && r.request.priority == kSparePriority;
  }
  if (entry.spare) {
    ++spare_running_;
    // Mirrored copies take only spare capacity: one is overdue at once, so
    // that a client's request of another model that waits for its executor
    // demotes it (overdue.cc); it then runs on idle cycles only.
    entry.overdue_at = now;
  }
  if (entry.limit < watch_wake_) watch_cv_.Signal();
  const RunningBatches::Token token = running_.Begin(std::move(entry));
  // This batch may take the last idle executor while another model's
  // requests wait, queued before: no Enqueue will tell the watchdog that an
  // overdue batch should now be demoted (the clients wait for answers).
  if (idle_ == 0 && models_.size() > 1 && OverdueWake(WaitingModels()) < watch_wake_) {
    watch_cv_.Signal();
  }
  mu_.Unlock();
  BatchRunner::TopUp top_up = TopUpFor(*hold, batch, token);
  const TimePoint started = options_.clock->Now();
  if (!lent.empty()) options_.backend->SetCallWidth(wide.cores, wide.num_threads);
  RunOnExecutor(*hold, batch, now, top_up, GiveBackFor(*hold, token));
  if (!lent.empty()) options_.backend->SetCallWidth(own.cores, own.num_threads);
  const double seconds = std::chrono::duration<double>(options_.clock->Now() - started).count();
  batch.requests.clear();
  mu_.Lock();
  std::optional<RunningBatches::Entry> ended = running_.End(token);
  // Given up (no entry) or demoted by the watchdog, which did the
  // accounting of its executor (lent and threads too): this thread leaves,
  // the slot has a new one.
  if (!ended || ended->demoted) {
    if (ended) Release(ended->bytes, ended->num_requests);
    if (ended && ended->spare) {  // a demoted copy counted till now: another may start
      --spare_running_;
      cv_.SignalAll();
    }
    --stuck_;
    hold->AssertLockedBy(&mu_);
    hold->add_stuck(-1);
    if (stuck_gauge_) stuck_gauge_->Set(stuck_);
    stuck_cv_.SignalAll();
    return false;
  }
  q.AssertLockedBy(&mu_);
  if (ended->spare) --spare_running_;
  q.EndRun(ended->items);
  q.Charge(seconds);
  Release(ended->bytes, ended->num_requests);
  CountThreads(-ended->threads);
  ReturnLent(ended->lent);
  cv_.SignalAll();  // a concurrency slot freed; other executors may start
  return true;
}

std::vector<int> Scheduler::Impl::LendTo(int id, ScheduledModel& m, size_t batch_requests) {
  LoneRequestInput in;
  in.enabled = options_.widen_lone_requests && options_.backend != nullptr && idle_ > 0;
  in.model_runs_wide = m.spec().model && m.spec().model->RunsWide();
  in.batch_requests = batch_requests;
  m.AssertLockedBy(&mu_);
  in.previous_batch_requests = m.last_batch_requests();
  m.set_last_batch_requests(batch_requests);
  in.self = id;
  if (in.enabled && in.model_runs_wide && batch_requests == 1) {
    for (auto& other : models_) {
      const ModelQueue& q = other->queue();
      q.AssertLockedBy(&mu_);
      in.anything_queued = in.anything_queued || !q.empty();
    }
    in.executors = executor_state_;
  }
  std::vector<int> lent = ExecutorsToLend(in);
  for (int e : lent) {
    executor_state_[static_cast<size_t>(e)] = ExecutorState::kLent;
    --idle_;
  }
  if (!lent.empty()) Count(m.metrics().wide_batches, 1);
  return lent;
}

void Scheduler::Impl::ReturnLent(const std::vector<int>& lent) {
  for (int e : lent) {
    executor_state_[static_cast<size_t>(e)] = ExecutorState::kIdle;
    ++idle_;
  }
  if (!lent.empty()) cv_.SignalAll();
}

void Scheduler::Impl::CountThreads(int delta) {
  compute_threads_ += delta;
  compute_threads_peak_ = std::max(compute_threads_peak_, compute_threads_);
  if (threads_gauge_) threads_gauge_->Set(compute_threads_);
  if (threads_peak_gauge_) threads_peak_gauge_->Set(compute_threads_peak_);
}

// For a batch of raw requests of a model with pre-processing: requests
// queued while it is pre-processed join it, up to the queue's ShareCap(),
// unless another executor that may run the model is idle (it takes them
// instead: batching never leaves a core idle). Null for other batches.
BatchRunner::TopUp Scheduler::Impl::TopUpFor(ScheduledModel& m, const Batch& batch,
                                             RunningBatches::Token token) {
  if (!m.spec().hooks.preprocess || batch.requests.empty() ||
      batch.requests.front().request.raw.empty()) {
    return nullptr;
  }
  return [this, &m, token](int items) -> std::vector<QueuedRequest> {
    MutexLock lock(&mu_);
    m.AssertLockedBy(&mu_);
    ModelQueue& q = m.queue();
    q.AssertLockedBy(&mu_);
    // A batch given up or demoted runs off the executors: nothing joins it.
    if (!running_.OnExecutor(token)) return {};
    const int cap = YieldCap(m, options_.clock->Now());
    const int room = (cap > 0 ? std::min(cap, q.ShareCap()) : q.ShareCap()) - items;
    const int slots = q.spec().max_concurrency > 0 ? q.spec().max_concurrency - q.running() : idle_;
    const TimePoint now = options_.clock->Now();
    std::vector<QueuedRequest> more;
    if (!stopping_ && room > 0 && !q.empty() && std::min(idle_, slots) <= 0) {
      more = q.TakeMore(room, now);
    }
    if (more.empty()) return more;  // the batch is formed
    for (auto& r : more) {
      r.joined = now;
      q.Join(r.items);
      running_.Join(token, {r.request.deadline, r.done, r.seq, r.request.is_cancelled, r.once}, r.items,
                    r.bytes);
    }
    m.PublishDepth();
    return more;
  };
}

BatchRunner::GiveBack Scheduler::Impl::GiveBackFor(ScheduledModel& m, RunningBatches::Token token) {
  if (m.runner().length_input() < 0) return nullptr;
  return [this, &m, token](std::vector<QueuedRequest>& back) {
    std::vector<uint64_t> seqs;
    int items = 0;
    for (const QueuedRequest& r : back) {
      seqs.push_back(r.seq);
      items += r.items;
    }
    MutexLock lock(&mu_);
    m.AssertLockedBy(&mu_);
    ModelQueue& q = m.queue();
    q.AssertLockedBy(&mu_);
    if (stopping_ || q.removed() || !running_.Leave(token, seqs, items, SumBytes(back))) {
      return false;
    }
    q.GiveBack(std::move(back));
    m.PublishDepth();
    cv_.SignalAll();  // an idle executor takes them now
    return true;
  };
}

// The runner answers every request and never throws; this catch is the
// last line that keeps the executor alive if even building its error
// message failed (e.g. out of memory twice).
void Scheduler::Impl::RunOnExecutor(ScheduledModel& m, Batch& batch, TimePoint start,
                                    const BatchRunner::TopUp& top_up,
                                    const BatchRunner::GiveBack& give_back) {
  try {
    m.runner().Run(batch.requests, start, top_up, give_back);
  } catch (...) {
    std::fputs("inferd: an executor survived an exception while answering a failed batch\n",
               stderr);
  }
}

}  // namespace inferd::scheduler
