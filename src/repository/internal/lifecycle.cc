// Lifecycle: registration, requests (Acquire, Get), status, and the release
// of instances. The budget is in lifecycle_budget.cc, the load and unload jobs
// in lifecycle_jobs.cc.
#include "repository/internal/lifecycle.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>

#include "repository/memory_budget.h"
#include "repository/model_name.h"

namespace inferd::repository::internal {
namespace {

// True while Carry drops handles: their release is trimmed by Carry itself, on
// the thread that freed them (the allocator's thread cache holds them).
thread_local bool t_in_carry = false;

}  // namespace

Lifecycle::Lifecycle(Options options)
    : options_(std::move(options)),
      store_(options_.store_dir),
      load_context_{options_.clock, options_.backend, options_.scheduler,
                    options_.hooks_factory, options_.placement, options_.memory_budget},
      ledger_(options_.memory_budget) {
  if (options_.metrics) metrics_ = std::make_unique<CacheMetrics>(*options_.metrics);
}

Status Lifecycle::Init() {
  RETURN_IF_ERROR(store_.Check());
  std::vector<std::string> skipped;
  const std::vector<std::string> names = store_.ListModels(&skipped);
  for (const auto& why : skipped) spdlog::warn("model store: folder skipped: {}", why);
  std::vector<std::string> served = options_.models;
  for (const auto& name : served) {
    if (!std::binary_search(names.begin(), names.end(), name)) {
      spdlog::error("model '{}' (--models) is not in the model store {}", EscapeForMessage(name),
                    options_.store_dir);
    }
  }
  // The server's base for the budget, before any model is loaded (read
  // outside mu_: it calls out).
  const int64_t base = options_.resident_bytes ? options_.resident_bytes() : 0;
  MutexLock lock(&mu_);
  ledger_.set_base(base);
  for (const auto& name : served) {
    if (!std::binary_search(names.begin(), names.end(), name)) startup_failed_ = true;
  }
  for (const auto& name : names) {
    auto stored = store_.Read(name);
    if (!stored.ok()) {  // vanished since the listing
      spdlog::warn("model store: {}", stored.status().message());
      continue;
    }
    Entry& e = entries_[name];
    e.name = name;
    e.dir = stored->dir;
    e.config = stored->config;
    e.config_error = stored->config_error;
    for (const auto& v : stored->versions) {
      Version& slot = e.versions[v.version];
      slot.stored = v;
      slot.footprint.file_bytes = v.file_bytes;
      slot.footprint.bytes = EstimateFootprint(v, slot.footprint);
    }
    const bool named =
        served.empty() || std::find(served.begin(), served.end(), name) != served.end();
    const config::LoadChoice load =
        e.config ? e.config->load : config::LoadChoice::kServerDefault;
    if (!named) {
      e.policy = LoadPolicy::kManual;
    } else if (load == config::LoadChoice::kLazy ||
               (load == config::LoadChoice::kServerDefault && options_.lazy_load)) {
      e.policy = LoadPolicy::kLazy;
    } else {
      e.policy = LoadPolicy::kEager;
    }
    e.pinned = e.config && e.config->pinned;
    if (!e.config) spdlog::error("model '{}': {}", name, e.config_error);
  }
  accepting_jobs_ = true;
  auto* backend = options_.backend;
  pool_ = std::make_unique<LoadPool>(
      options_.load_threads,
      [backend] {
        // Warm-up runs on the load thread: one intra-op thread, unpinned.
        backend->InitExecutorThread({}, 1);
      },
      options_.release_memory);
  std::weak_ptr<Lifecycle> weak = weak_from_this();
  timer_ = std::make_unique<DeadlineTimer>(options_.clock, [weak](TimePoint now) {
    auto self = weak.lock();
    return self ? self->ExpireWaiters(now) : TimePoint::max();
  });
  if (metrics_) metrics_->budget_bytes->Set(static_cast<double>(options_.memory_budget));
  return Status::Ok();
}

void Lifecycle::Shutdown() {
  Aftermath after;
  {
    MutexLock lock(&mu_);
    accepting_jobs_ = false;
    const Status down = Unavailable("the server is shutting down");
    for (auto& [name, e] : entries_) {
      for (auto& w : e.waiters) after.answers.emplace_back(std::move(w.done), down);
      e.waiters.clear();
      if (Parked(e.phase)) {  // its job will not run again
        for (auto& d : e.load_done) after.dones.emplace_back(std::move(d), down);
        e.load_done.clear();
        parked_.erase(std::remove(parked_.begin(), parked_.end(), name), parked_.end());
        Step(e, Event::kCancelled);
      }
    }
  }
  timer_.reset();
  Carry(std::move(after));
  pool_.reset();  // runs the jobs still queued: they see !accepting_jobs_ and stop
  Aftermath rest;
  {
    MutexLock lock(&mu_);
    for (auto& [name, e] : entries_) {
      for (auto& [v, slot] : e.versions) {
        if (slot.handle) RetireLocked(e, slot, v, VersionEvent::kRetired, &rest);
      }
    }
  }
  Carry(std::move(rest));
}

void Lifecycle::StartEagerLoads() {
  MutexLock lock(&mu_);
  started_ = true;
  for (auto& [name, e] : entries_) {
    if (e.policy != LoadPolicy::kEager || e.phase != Phase::kIdle) continue;
    if (QuarantinedVersionLocked(e)) continue;  // quarantined before the start
    e.startup = true;
    ++startup_pending_;
    AskLoadLocked(e, /*rescan=*/false);
  }
  startup_cv_.SignalAll();
}

bool Lifecycle::WaitForStartup(TimePoint deadline) {
  MutexLock lock(&mu_);
  while (startup_pending_ != 0) {
    if (!startup_cv_.WaitUntil(&mu_, deadline)) return startup_pending_ == 0;
  }
  return true;
}

bool Lifecycle::AllReady() const {
  MutexLock lock(&mu_);
  return started_ && startup_pending_ == 0 && !startup_failed_;
}

Lifecycle::Entry* Lifecycle::FindLocked(const std::string& name) {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

const Lifecycle::Entry* Lifecycle::FindLocked(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::string Lifecycle::UnknownModelLocked(const std::string& name) const {
  std::string known;
  size_t shown = 0;
  for (const auto& [n, e] : entries_) {
    if (++shown > 20) {
      known += ", ... (" + std::to_string(entries_.size()) + " in all)";
      break;
    }
    known += (known.empty() ? "" : ", ") + n;
  }
  return "unknown model '" + name + "' (known models: " + (known.empty() ? "none" : known) + ")";
}

StatusOr<ModelHandle> Lifecycle::ResolveLocked(const Entry& e,
                                               std::optional<int64_t> version) const {
  if (version) {
    auto it = e.versions.find(*version);
    if (it == e.versions.end()) {
      std::string known;
      for (const auto& [v, slot] : e.versions)
        known += (known.empty() ? "" : ", ") + std::to_string(v);
      return NotFound("model '" + e.name + "' has no version " + std::to_string(*version) +
                      "; versions: " + (known.empty() ? "none" : known));
    }
    const Version& slot = it->second;
    if (slot.handle) return slot.handle;
    if (slot.phase == VersionPhase::kQuarantined) return QuarantinedLocked(e, *version);
    const std::string state = slot.phase == VersionPhase::kLoading ? "LOADING" : "UNAVAILABLE";
    return Unavailable("model '" + e.name + "' version " + std::to_string(*version) +
                       " is not ready (" + state + (slot.error.empty() ? "" : ": " + slot.error) +
                       ")");
  }
  for (auto it = e.versions.rbegin(); it != e.versions.rend(); ++it) {
    if (it->second.handle) return it->second.handle;
  }
  if (Loading(e.phase)) return Unavailable("model '" + e.name + "' is not ready (LOADING)");
  if (auto q = QuarantinedVersionLocked(e)) return QuarantinedLocked(e, *q);
  if (!e.error.empty()) return Unavailable("model '" + e.name + "' is not ready: " + e.error);
  return Unavailable("model '" + e.name + "' is not ready (not loaded)");
}

// Why a request cannot load `e` on demand, or OK when it can.
Status Lifecycle::NotLoadableLocked(const Entry& e) const {
  const std::string how = "; load it through the management API (POST /models?url=" + e.name +
                          " or POST /v2/repository/models/" + e.name + "/load)";
  if (!e.config) return Unavailable("model '" + e.name + "' is not ready: " + e.config_error);
  // Never loaded on demand: it stays out of service until loaded by hand.
  if (auto q = QuarantinedVersionLocked(e)) return QuarantinedLocked(e, *q);
  if (!e.error.empty()) return Unavailable("model '" + e.name + "' failed to load: " + e.error);
  if (Unloading(e.phase)) return Unavailable("model '" + e.name + "' is being unloaded");
  if (e.policy == LoadPolicy::kManual) {
    return Unavailable("model '" + e.name + "' is not loaded: " +
                       (e.unloaded_by_hand ? "it was unloaded through the management API"
                                           : "--models did not name it") +
                       how);
  }
  return Status::Ok();
}

void Lifecycle::Acquire(const std::string& model, std::optional<int64_t> version,
                        TimePoint deadline, AcquireCallback done) {
  if (Status valid = ValidateModelName(model); !valid.ok()) return done(valid);
  StatusOr<ModelHandle> answer = Unavailable("");
  {
    MutexLock lock(&mu_);
    Entry* e = FindLocked(model);
    const bool resident =
        e && std::any_of(e->versions.begin(), e->versions.end(),
                         [](const auto& v) { return v.second.handle != nullptr; });
    const Status loadable = e ? NotLoadableLocked(*e) : Status::Ok();
    if (!e) {
      answer = NotFound(UnknownModelLocked(model));
    } else if (resident || (version && !e->versions.count(*version))) {
      answer = ResolveLocked(*e, version);
      if (answer.ok()) {
        const TimePoint now = options_.clock->Now();
        e->lru_time = now;
        e->last_request = now;
        if (metrics_) metrics_->hits->Increment();
      }
    } else if (!Loading(e->phase) && !loadable.ok()) {
      answer = loadable;
    } else if (!accepting_jobs_) {
      answer = Unavailable("the server is shutting down");
    } else {
      const TimePoint now = options_.clock->Now();
      if (deadline == TimePoint::max()) {
        deadline =
            now + std::chrono::milliseconds(e->config ? e->config->request_timeout_ms : 5000);
      }
      e->waiters.push_back({version, now, deadline, std::move(done)});
      if (metrics_) metrics_->misses->Increment();
      if (e->phase == Phase::kIdle) AskLoadLocked(*e, /*rescan=*/false);
      timer_->Wake(deadline);
      return;
    }
  }
  done(std::move(answer));
}

StatusOr<ModelHandle> Lifecycle::Get(const std::string& model,
                                     std::optional<int64_t> version) const {
  RETURN_IF_ERROR(ValidateModelName(model));
  MutexLock lock(&mu_);
  const Entry* e = FindLocked(model);
  if (!e) return NotFound(UnknownModelLocked(model));
  return ResolveLocked(*e, version);
}

TimePoint Lifecycle::ExpireWaiters(TimePoint now) {
  std::vector<std::pair<AcquireCallback, Status>> expired;
  TimePoint next = TimePoint::max();
  {
    MutexLock lock(&mu_);
    for (auto& [name, e] : entries_) {
      if (e.waiters.empty()) continue;
      auto keep = e.waiters.begin();
      for (auto& w : e.waiters) {
        if (w.deadline <= now) {
          expired.emplace_back(std::move(w.done),
                               DeadlineExceeded("model '" + name + "' was still loading after " +
                                                std::to_string(MillisBetween(w.since, now)) +
                                                " ms when the request's deadline passed"));
        } else {
          next = std::min(next, w.deadline);
          *keep++ = std::move(w);
        }
      }
      e.waiters.erase(keep, e.waiters.end());
      if (Parked(e.phase) && e.waiters.empty() && e.load_done.empty()) {
        // Nobody waits for room any more: the next request asks again.
        parked_.erase(std::remove(parked_.begin(), parked_.end(), name), parked_.end());
        if (e.startup) {
          e.startup = false;
          --startup_pending_;
          startup_cv_.SignalAll();
        }
        ChainLocked(e, Event::kAbandoned);
      }
    }
    // A load that waits for room is also retried now and then: a model can go
    // idle without an event (a handle dropped outside a request).
    if (!parked_.empty()) {
      RetryParkedLocked();
      next = std::min(next, now + kParkedRetry);
    }
  }
  for (auto& [done, status] : expired) done(status);
  return next;
}

void Lifecycle::RetryParkedLocked() {
  if (parked_.empty() || !accepting_jobs_) return;
  for (const auto& name : parked_) {
    Entry* e = FindLocked(name);
    if (!e || !Parked(e->phase)) continue;
    Step(*e, Event::kRoom);
    pool_->Post([this, name] { RunLoad(name); });
  }
  parked_.clear();
}

// The last handle of an instance is gone (any thread; the caller may hold the
// scheduler's mutex, never ours).
void Lifecycle::Released(uint64_t serial) {
  {
    MutexLock lock(&mu_);
    const std::optional<std::string> model = ledger_.Release(serial);
    if (!model) return;
    if (Entry* e = FindLocked(*model)) ForgetSeriesIfGoneLocked(*e);
    UpdateGaugesLocked();
    RetryParkedLocked();
    // Instances dropped by a job are trimmed by that job (Carry); one released
    // elsewhere (by the last request of a retired version) gets a trim on the
    // load threads.
    // (Posted under mu_: Shutdown stops accepting jobs under mu_ before it
    // destroys the pool.)
    if (!t_in_carry && options_.release_memory && accepting_jobs_ && !trim_posted_) {
      trim_posted_ = true;
      pool_->Post([this] {
        {
          MutexLock lock(&mu_);
          trim_posted_ = false;
        }
        options_.release_memory();
        MeasureOutside();
      });
    }
  }
}

void Lifecycle::ForgetSeriesIfGoneLocked(const Entry& e) {
  // A load under way has registered (or will register) its queue's series:
  // they are the next instance's, not leftovers.
  if (!options_.metrics || Loading(e.phase)) return;
  // Another version (or the one replacing it) is alive.
  if (ledger_.Holds(e.name)) return;
  // Under mu_ (the registry's own mutex is a leaf: it never calls out), so
  // that a load cannot start between the check and the removal.
  const size_t removed = RemoveModelSeries(*options_.metrics, e.name);
  if (removed > 0) spdlog::debug("model '{}': {} metric series removed", e.name, removed);
}

void Lifecycle::Carry(Aftermath after, bool measure) {
  for (auto& h : after.retire) h->Retire();
  t_in_carry = true;
  after.retire.clear();  // drops the handles: Released runs for the last ones
  t_in_carry = false;
  if (after.release_memory && options_.release_memory) options_.release_memory();
  if (measure) MeasureOutside();  // before the answers: callers see the ledger it leaves
  for (auto& [done, answer] : after.answers) done(std::move(answer));
  for (auto& [done, status] : after.dones) done(status);
}

}  // namespace inferd::repository::internal
