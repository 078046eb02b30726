// ServedModel: one loaded, servable model version, held through a ModelHandle.
//
// A ModelHandle (shared_ptr) pins the version: the weights and the queue stay
// alive while any handle exists. Every request enqueued through a handle keeps
// one until its completion has run, so "nobody but the repository holds a
// handle" means "no request is queued, running or about to be enqueued": that
// is how the repository knows a model is idle and may be evicted.
//
// Unloading is the repository's job: it calls Retire (the scheduler refuses new
// requests for the version; queued ones still run) before it lets its own
// handle go. The destructor never calls the scheduler, because the last handle
// may be dropped anywhere, including inside a completion that the scheduler
// destroys under its own mutex. It only runs `on_release`, which must not call
// the scheduler either. `on_idle` runs (on the thread that destroys the last
// completion) when the version's last request in flight is gone, so that the
// repository can retry a load that waits for room in the budget.
//
// A reload replaces a version's instance with a new one and retires the old:
// a request that resolved the old handle just before then reaches a retired
// queue. Enqueue hands such a request to `successor` (the instance the
// repository now serves for the same name and version, or null when it serves
// none: unloaded by hand, evicted, version gone from the store, shutting
// down), so that a reload never refuses a request it raced.
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "common/status.h"
#include "config/model_config.h"
#include "repository/internal/load_memory.h"
#include "repository/model_status.h"
#include "scheduler/scheduler.h"

namespace inferd::repository {

class ServedModel : public std::enable_shared_from_this<ServedModel> {
 public:
  struct Parts {
    config::ModelConfig config;
    int64_t version = 0;
    std::string dir;  // DIR/<model>
    std::shared_ptr<backend::Model> model;
    std::shared_ptr<scheduler::ScheduledModel> queue;  // the version's place in the scheduler
    scheduler::Scheduler* scheduler = nullptr;
    Footprint footprint;
    // Receives the queue's calibration when the version retires, for the
    // next load of the same file (internal/version_loader.h); may be null.
    std::shared_ptr<internal::LoadMemory> memory;
    std::function<void()> on_release;  // run by the destructor; may be empty
    std::function<void()> on_idle;     // see above; may be empty
    // The repository's ready instance for this name and version now (never a
    // version retired before it was asked), or null. Called by Enqueue on the
    // caller's thread with no lock held; it takes the repository's mutex and
    // must not call the scheduler. May be empty (no successor, ever).
    std::function<std::shared_ptr<ServedModel>()> successor;
  };
  // Successors tried, one after the other, for one request: each is asked
  // only when the previous one retired meanwhile.
  static constexpr int kMaxSuccessorHops = 3;
  explicit ServedModel(Parts parts);
  ~ServedModel();
  ServedModel(const ServedModel&) = delete;
  ServedModel& operator=(const ServedModel&) = delete;

  const config::ModelConfig& config() const { return parts_.config; }
  const std::string& name() const { return parts_.config.name; }
  int64_t version() const { return parts_.version; }
  const std::string& dir() const { return parts_.dir; }
  const Footprint& footprint() const { return parts_.footprint; }
  // The queue's calibration now (a copy: a deferred one arrives later).
  scheduler::BatchCalibration calibration() const;
  // What the backend measured when it chose the precision (fixed at load);
  // empty `requested` when it had no choice.
  backend::PrecisionReport precision() const;
  // What the backend's load-time measurement skipped for its budget; empty
  // when nothing (backend::ExecutionReport::skipped).
  std::string load_skipped() const;

  // Stops accepting requests; those already queued still run. Idempotent.
  void Retire();

  // See Scheduler::Enqueue for errors. On OK the completion will run once and
  // keeps a handle to the instance that queued the request until it has run;
  // on error it is not called (and is dropped). When this instance is retired
  // (Retire), the request goes to `successor` instead, with the same handling
  // there; when there is none, the refusal is kUnavailable "is being unloaded".
  Status Enqueue(scheduler::InferenceRequest request, scheduler::Completion done);
  size_t QueueDepth() const;
  // Requests enqueued whose completion has not run yet.
  int in_flight() const { return in_flight_->load(std::memory_order_relaxed); }

 private:
  class InFlight;
  struct Counted;
  // Enqueues on this instance only; moves from `request` and `done` only on
  // success (Scheduler::Enqueue).
  Status EnqueueHere(scheduler::InferenceRequest& request, scheduler::Completion& done);

  Parts parts_;
  std::atomic<bool> retired_{false};
  // Shared with the completions, which may outlive nothing but need no `this`.
  std::shared_ptr<std::atomic<int>> in_flight_ = std::make_shared<std::atomic<int>>(0);
};

using ModelHandle = std::shared_ptr<ServedModel>;

}  // namespace inferd::repository
