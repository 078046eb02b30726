// ModelRepository: the model store's models and their life: registration,
// loading on demand, unloading, and paging under a memory budget.
//
// Store layout: DIR/<model>/config.yaml and DIR/<model>/<version>/model.pt,
// versions positive integers, the highest the default. Create scans the store
// and validates every config.yaml: every model is registered (listed, with its
// config or its config error) before any request can reach the repository.
// Loading happens on the repository's own load threads (Options::load_threads,
// Triton's model_load_thread_count): a load or unload of one model never holds
// a lock that a request to another model needs, and one model has at most one
// load or unload running; concurrent requests for a model that is loading wait
// for that one load.
//
// States (model_status.h): UNAVAILABLE -> LOADING -> READY -> UNLOADING ->
// UNAVAILABLE; a failed load goes back to UNAVAILABLE with the error; READY ->
// QUARANTINED (Quarantine) -> LOADING only through the management API.
// (The phases behind them: internal/phase.h.)
//
// Memory budget (Options::memory_budget > 0): each version's footprint is
// measured at its first load (model_status.h, Footprint); before a load, the
// least recently used idle models are unloaded until the load's estimate fits.
// Idle = READY, no request queued or running, no handle held outside the
// repository, no job running; `pinned: true` models are never evicted. When no
// room can be made the load fails with kUnavailable and a message saying what
// holds the memory. An evicted model loads again on its next request.
//
// Lock order: the repository never holds its mutex while it calls the
// scheduler, the backend or a caller's callback, so those may call back in
// (and drop handles) from any thread.
// Thread-safety: every method may be called from any thread, except that the
// blocking Load/Unload/WaitForStartup must not be called from a callback the
// repository runs (they would wait for their own load thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/clock.h"
#include "common/status.h"
#include "config/model_config.h"
#include "metrics/registry.h"
#include "repository/model_status.h"
#include "repository/served_model.h"
#include "scheduler/scheduler.h"

namespace inferd::repository {

// Builds the pipeline hooks for a model (pre/post-processing); injected so that
// repository/ does not depend on pipeline/. May be empty.
using HooksFactory = std::function<StatusOr<scheduler::ModelHooks>(const config::ModelConfig&,
                                                                   const std::string& dir)>;

// Decides where a model may run (ModelSpec::max_concurrency, executor_ids):
// the core plan's answer for this config. May be empty (anywhere, no cap).
using Placement = std::function<void(const config::ModelConfig&, scheduler::ModelSpec*)>;

class ModelRepository {
 public:
  struct Options {
    std::string store_dir;
    // Models served: loaded at start (eager) or on first request (lazy); the
    // others are registered but load only through the management API. Empty = all.
    std::vector<std::string> models;
    bool lazy_load = false;     // the policy of models whose config has no `load:`
    int load_threads = 2;       // loads and unloads run on these, never on the caller's thread
    int64_t memory_budget = 0;  // bytes for the loaded models' footprints; 0 = no budget
    backend::Backend* backend = nullptr;
    scheduler::Scheduler* scheduler = nullptr;
    HooksFactory hooks_factory;
    Placement placement;
    Clock* clock = Clock::Real();
    metrics::Registry* metrics = nullptr;  // loads, evictions, hits, misses...; may be null
    // The process's resident bytes (default: /proc/self/statm); tests inject a fake.
    std::function<int64_t()> resident_bytes;
    // The peak resident bytes since the previous call (default: VmHWM, reset
    // through /proc/self/clear_refs; 0 = unknown); tests inject a fake.
    std::function<int64_t()> peak_resident_bytes;
    // Hands freed heap memory back to the system after unloads (the allocator's
    // release call); may be empty.
    std::function<void()> release_memory;
    // Called with the model's name at each LoadAsync/Load (the management
    // API), before the load runs: the crash journal forgets the model's
    // crashes. May be empty.
    std::function<void(const std::string& model)> on_load_asked;
  };
  // Scans the store and registers every model; loads nothing and runs no
  // request. kNotFound when the store is not a directory.
  static StatusOr<std::unique_ptr<ModelRepository>> Create(const Options& options);
  ~ModelRepository();  // answers waiting callers kUnavailable, retires every version

  // Queues the loads of the eager models and returns at once.
  void StartEagerLoads();
  // Blocks until every load queued by StartEagerLoads has finished or
  // `deadline` passes; true when they finished.
  bool WaitForStartup(TimePoint deadline);
  // True when the eager loads have finished and every eager model is READY.
  bool AllReady() const;

  // The ready version (`version` empty = the highest ready one) for a
  // request. Answers through `done`, exactly once: at once on the calling
  // thread when the model is ready or the call fails; otherwise, when a load
  // is needed (a lazy or evicted model) or running, later on a repository
  // thread, when the load ends or `deadline` passes (kDeadlineExceeded);
  // TimePoint::max() = the model's request_timeout_ms from now. Errors:
  // kInvalidArgument (bad name), kNotFound (unknown model or version),
  // kUnavailable (unloaded by hand, load failed, no room in the budget).
  // A request that finds the model READY counts as a cache hit, one that
  // waits for a load as a miss.
  using AcquireCallback = std::function<void(StatusOr<ModelHandle>)>;
  void Acquire(const std::string& model, std::optional<int64_t> version, TimePoint deadline,
               AcquireCallback done);

  // The ready version now; never loads and never waits (metadata, readiness).
  StatusOr<ModelHandle> Get(const std::string& model, std::optional<int64_t> version = {}) const;

  // Scans the store for `model` again and loads (or reloads) every version;
  // the old versions serve until the new ones are ready, and a request that
  // enqueues through an old version's handle after that is served by the new
  // instance of the same version (ServedModel::Enqueue). `done` runs once,
  // on a repository thread (or at once for a bad or unknown name).
  using DoneCallback = std::function<void(Status)>;
  void LoadAsync(const std::string& model, DoneCallback done);
  // Retires every version of `model` (queued and running requests finish) and
  // leaves it to load only through the management API again. `done` runs once
  // the versions are retired; memory is freed when their last request ends.
  void UnloadAsync(const std::string& model, DoneCallback done);
  // Blocking forms of the two above.
  Status Load(const std::string& model);
  Status Unload(const std::string& model);

  // Before StartEagerLoads (the crash journal's quarantine at start) a
  // version not loaded is quarantined as it is, and the eager loads leave
  // its model alone; after it, such a version is kFailedPrecondition.
  // Takes `version` of `model` out of service at once, as an unload would
  // (its queue leaves the scheduler; requests queued or running are the
  // scheduler's to answer; its memory goes when the last holder lets go):
  // requests for it are refused kUnavailable with `reason`, its state is
  // QUARANTINED (with the reason) until it is loaded again through
  // LoadAsync/Load, and requests never load it on demand meanwhile. Logs one
  // warning and counts it in /metrics. Idempotent (the first reason stays).
  // Errors: kNotFound (unknown model or version), kFailedPrecondition (the
  // version has no serving instance: not loaded, loading, unloaded, evicted).
  // Any thread, but not with the scheduler's mutex held: it calls
  // Scheduler::RemoveModel. The scheduler calls it through ModelSpec::quarantine,
  // which is bound to the one instance it was built for.
  Status Quarantine(const std::string& model, int64_t version, const std::string& reason);

  std::vector<ModelStatus> List() const;
  StatusOr<ModelStatus> GetStatus(const std::string& model) const;

  struct MemoryUse {
    int64_t budget = 0;    // 0 = none
    int64_t resident = 0;  // footprints of resident versions
    int64_t reserved = 0;  // estimates of loads in progress
  };
  MemoryUse memory() const;

 private:
  class Impl;
  explicit ModelRepository(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
  std::function<void(const std::string&)> on_load_asked_;
};

}  // namespace inferd::repository
