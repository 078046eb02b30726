// Lifecycle: the load and unload jobs, run on the load threads. A model has at
// most one job at a time (Entry::job); asks that arrive meanwhile join it or
// are chained after it (load_after, unload_after).
#include <spdlog/spdlog.h>

#include <future>
#include <tuple>

#include "backend/registry.h"
#include "repository/internal/lifecycle.h"
#include "repository/memory_budget.h"
#include "repository/model_name.h"

namespace inferd::repository::internal {

void Lifecycle::Load(const std::string& model, DoneCallback done) {
  if (Status valid = ValidateModelName(model); !valid.ok()) return done(valid);
  bool known = false;
  {
    MutexLock lock(&mu_);
    known = FindLocked(model) != nullptr;
  }
  // A model added to the store after start-up registers here, and only when
  // its config.yaml exists: unknown names never grow an entry. (Read outside
  // the lock: it parses a file.)
  std::optional<StoredModel> stored;
  if (!known) {
    auto read = store_.Read(model);
    if (!read.ok()) return done(read.status());
    stored = std::move(*read);
  }
  Status answer;
  {
    MutexLock lock(&mu_);
    Entry* e = FindLocked(model);
    if (!e) {
      e = &entries_[model];
      e->name = model;
      e->dir = stored->dir;
      e->policy = LoadPolicy::kLazy;
    }
    if (!accepting_jobs_) {
      answer = Unavailable("the server is shutting down");
    } else {
      e->load_done.push_back(std::move(done));
      // Loaded by hand: from now on it loads again on demand after an eviction.
      if (e->policy == LoadPolicy::kManual) e->policy = LoadPolicy::kLazy;
      e->unloaded_by_hand = false;
      if (e->job == Job::kNone) {
        StartLoadLocked(*e, /*rescan=*/true);
      } else if (e->job == Job::kUnload) {
        e->load_after = true;
      } else {
        e->unload_after = false;  // the latest ask wins
      }
      return;
    }
  }
  done(answer);
}

void Lifecycle::Unload(const std::string& model, DoneCallback done) {
  if (Status valid = ValidateModelName(model); !valid.ok()) return done(valid);
  Status answer;
  {
    MutexLock lock(&mu_);
    Entry* e = FindLocked(model);
    if (!e) {
      answer = NotFound(UnknownModelLocked(model));
    } else if (!accepting_jobs_) {
      answer = Unavailable("the server is shutting down");
    } else {
      e->policy = LoadPolicy::kManual;
      e->unloaded_by_hand = true;
      e->unload_done.push_back(std::move(done));
      if (e->job == Job::kNone) {
        StartUnloadLocked(*e);
      } else if (e->job == Job::kLoad) {
        e->unload_after = true;
      } else {
        e->load_after = false;
      }
      return;
    }
  }
  done(answer);
}

void Lifecycle::StartLoadLocked(Entry& e, bool rescan) {
  e.job = Job::kLoad;
  e.rescan = rescan;
  e.load_posted = std::chrono::steady_clock::now();
  pool_->Post([this, name = e.name] { RunLoad(name); });
}

void Lifecycle::StartUnloadLocked(Entry& e) {
  e.job = Job::kUnload;
  pool_->Post([this, name = e.name] { RunUnload(name); });
}

// Takes what a reread of the store says: config, versions (keeping the
// footprints of files that did not change). Versions gone from the store are
// retired. False when nothing can be loaded (FinishJobLocked already called).
bool Lifecycle::RefreshFromStoreLocked(Entry& e, const StoredModel& stored, Aftermath* after) {
  e.dir = stored.dir;
  e.config = stored.config;
  e.config_error = stored.config_error;
  e.pinned = e.config && e.config->pinned;
  std::map<int64_t, Version> fresh;
  for (const auto& v : stored.versions) {
    Version& slot = fresh[v.version];
    auto old = e.versions.find(v.version);
    if (old != e.versions.end()) {
      slot = std::move(old->second);
      e.versions.erase(old);
      if (slot.stored.file_bytes != v.file_bytes) {
        slot.footprint = Footprint{};
        slot.memory = std::make_shared<LoadMemory>();
      }
    }
    slot.stored = v;
    slot.footprint.file_bytes = v.file_bytes;
    if (!slot.footprint.measured) slot.footprint.bytes = EstimateFootprint(v, slot.footprint);
  }
  for (auto& [v, slot] : e.versions) {
    if (!slot.handle) continue;
    if (auto c = charges_.find(slot.serial); c != charges_.end()) c->second.retired = true;
    ++e.retiring;
    after->retire.push_back(std::move(slot.handle));
  }
  e.versions = std::move(fresh);
  return true;
}

void Lifecycle::FinishJobLocked(Entry& e, const Status& status, Aftermath* after) {
  for (auto& w : e.waiters) after->answers.emplace_back(std::move(w.done), status);
  e.waiters.clear();
  for (auto& d : e.load_done) after->dones.emplace_back(std::move(d), status);
  e.load_done.clear();
  e.job = Job::kNone;
  if (e.startup) {
    e.startup = false;
    --startup_pending_;
    if (!status.ok()) startup_failed_ = true;
    startup_cv_.SignalAll();
  }
}

void Lifecycle::RunLoad(const std::string& name) {
  const auto ran = std::chrono::steady_clock::now();
  Aftermath after;
  MutexLock lock(&mu_);
  Entry* e = FindLocked(name);
  // Queued behind other jobs, or parked until room appeared.
  const auto queued = ran - e->load_posted;
  if (!accepting_jobs_) {
    FinishJobLocked(*e, Unavailable("the server is shutting down"), &after);
    lock.Unlock();
    return Carry(std::move(after));
  }
  if (e->rescan) {
    e->rescan = false;
    lock.Unlock();
    auto stored = store_.Read(name);
    lock.Lock();
    if (!stored.ok()) {
      e->error = stored.status().message();
      FinishJobLocked(*e, stored.status(), &after);
      lock.Unlock();
      return Carry(std::move(after));
    }
    RefreshFromStoreLocked(*e, *stored, &after);
  }
  Status cannot;
  if (!e->config) {
    cannot = FailedPrecondition(e->config_error);
  } else if (e->versions.empty()) {
    cannot = FailedPrecondition("no version folder with a model file in " + e->dir + " (expected " +
                                e->dir + "/1/" +
                                backend::Registry::ModelFiles(*e->config).front() + ")");
  }
  if (!cannot.ok()) {
    e->error = cannot.message();
    spdlog::error("model '{}' failed to load: {}", name, e->error);
    if (metrics_) metrics_->loads_failed->Increment();
    FinishJobLocked(*e, cannot, &after);
    lock.Unlock();
    return Carry(std::move(after));
  }

  // Make room, then reserve the estimate while loading.
  int64_t need = 0, peak = 0;
  bool measure = false;
  for (const auto& [v, slot] : e->versions) {
    need += EstimateFootprint(slot.stored, slot.footprint);
    peak += EstimateLoadPeak(slot.stored, slot.footprint);
    measure |= !slot.footprint.measured;
  }
  bool fits = true, soft_left_out = false;
  std::string why_not;
  std::vector<ModelHandle> victims =
      options_.memory_budget > 0
          ? EvictLocked(name, need, peak - need, &fits, &why_not, &soft_left_out)
          : std::vector<ModelHandle>();
  if (!fits) {
    int64_t pinned = 0;
    for (const auto& [other, o] : entries_) {
      if (other != name && o.pinned) pinned += o.resident_bytes;
    }
    if (!e->waiters.empty() && need <= options_.memory_budget - pinned) {
      // Room appears when the models in use go idle: the requests wait for it.
      e->parked = true;
      parked_.push_back(name);
      timer_->Wake(options_.clock->Now() + kParkedRetry);
      return;
    }
    // Not the model's fault: no error is recorded, the next request tries again.
    spdlog::warn("model '{}' not loaded: {}", name, why_not);
    if (metrics_) metrics_->loads_no_room->Increment();
    FinishJobLocked(*e, Unavailable("model '" + name + "' cannot be loaded now: " + why_not),
                    &after);
    lock.Unlock();
    return Carry(std::move(after));
  }
  // The load's peak while it runs, unless no eviction could make room for it.
  const int64_t reserve = soft_left_out ? need : std::max(need, peak);
  reserved_ += reserve;
  const config::ModelConfig config = *e->config;
  const std::string dir = e->dir;
  std::vector<std::tuple<StoredVersion, Footprint, std::shared_ptr<LoadMemory>>> todo;
  for (auto& [v, slot] : e->versions) {
    slot.loading = true;
    todo.emplace_back(slot.stored, slot.footprint, slot.memory);
  }
  // A load on demand has requests waiting: calibration must not hold them
  // (nor, on the executors, other models' requests); it runs once the
  // model's requests queue. Eager models calibrate at start-up, as before.
  const bool defer_calibration = e->policy != LoadPolicy::kEager;
  lock.Unlock();

  Aftermath evicted;
  evicted.retire = std::move(victims);
  evicted.release_memory = !evicted.retire.empty();
  Carry(std::move(evicted));

  std::vector<std::tuple<int64_t, uint64_t, StatusOr<ModelHandle>>> loaded;
  {
    // A first load runs alone, after the freed memory went back to the
    // system, so that the resident memory it adds is its own.
    std::unique_lock<std::shared_mutex> alone(measure_mu_, std::defer_lock);
    std::shared_lock<std::shared_mutex> shared(measure_mu_, std::defer_lock);
    const auto locking = std::chrono::steady_clock::now();
    if (measure) {
      alone.lock();
    } else {
      shared.lock();
    }
    const double waited_ms =
        std::chrono::duration<double, std::milli>(queued + (std::chrono::steady_clock::now() -
                                                            locking))
            .count();
    if (measure && options_.release_memory) options_.release_memory();
    for (auto& [stored, known, memory] : todo) {
      known.load_wait_ms = waited_ms;
      uint64_t serial = 0;
      {
        MutexLock l(&mu_);
        serial = next_serial_++;
      }
      const auto start = std::chrono::steady_clock::now();
      auto handle = LoadVersion(load_context_, config, dir, stored, known, memory,
                                defer_calibration, known.measured ? nullptr : options_.resident_bytes,
                                options_.peak_resident_bytes,
                                {OnRelease(serial), OnIdle(), Successor(name, stored.version)});
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (metrics_) metrics_->load_seconds->Observe(seconds);
      if (handle.ok()) {
        const Footprint& f = (*handle)->footprint();
        spdlog::info(
            "model '{}' version {} is ready: loaded in {:.0f} ms, footprint {} "
            "(weights {}, resident memory +{}, +{} at the load's peak{})",
            name, stored.version, f.load_ms, FormatBytes(f.bytes), FormatBytes(f.weight_bytes),
            FormatBytes(f.rss_growth), FormatBytes(f.peak_growth),
            known.measured ? ", measured at an earlier load" : "");
      } else {
        spdlog::error("model '{}' version {} failed to load: {}", name, stored.version,
                      handle.status().message());
      }
      loaded.emplace_back(stored.version, serial, std::move(handle));
    }
  }

  lock.Lock();
  e = FindLocked(name);
  reserved_ -= reserve;
  for (auto& [version, serial, handle] : loaded) {
    InstallLocked(*e, version, serial, std::move(handle), &after);
  }
  const Version& top = e->versions.rbegin()->second;
  e->error = top.handle || top.error.empty() ? "" : top.error;
  e->lru_time = options_.clock->Now();
  const Status outcome = e->error.empty() ? Status::Ok() : FailedPrecondition(e->error);
  if (metrics_) (outcome.ok() ? metrics_->loads_ok : metrics_->loads_failed)->Increment();
  e->job = Job::kNone;
  // Waiters get the version they asked for, or its error; they used the model.
  if (!e->waiters.empty()) e->last_request = e->lru_time;
  for (auto& w : e->waiters) {
    after.answers.emplace_back(std::move(w.done), ResolveLocked(*e, w.version));
  }
  e->waiters.clear();
  FinishJobLocked(*e, outcome, &after);
  if (!accepting_jobs_) {
    for (auto& [v, slot] : e->versions) {
      if (slot.handle) after.retire.push_back(std::move(slot.handle));
    }
  } else if (e->unload_after) {
    e->unload_after = false;
    StartUnloadLocked(*e);
  }
  // The measured footprints may exceed the estimates: evict others if so.
  if (options_.memory_budget > 0 && CommittedLocked() + outside_ > options_.memory_budget) {
    bool fits = true;
    auto more = EvictLocked(name, 0, 0, &fits, nullptr, nullptr);
    for (auto& h : more) after.retire.push_back(std::move(h));
    after.release_memory |= !more.empty();
    if (!fits) {
      spdlog::warn(
          "memory budget: {} committed, over the budget of {}: the rest is in use or "
          "pinned",
          FormatBytes(CommittedLocked()), FormatBytes(options_.memory_budget));
    }
  }
  UpdateGaugesLocked();
  RetryParkedLocked();  // the reservation is gone; others may fit now
  after.release_memory |= !after.retire.empty();
  lock.Unlock();
  Carry(std::move(after), /*measure=*/true);
}

// Puts a freshly loaded instance in place (the one it replaces is retired),
// or records its error (the one it would replace keeps serving).
void Lifecycle::InstallLocked(Entry& e, int64_t version, uint64_t serial,
                              StatusOr<ModelHandle> loaded, Aftermath* after) {
  Version& slot = e.versions.at(version);
  slot.loading = false;
  if (!loaded.ok()) {
    slot.error = loaded.status().message();
    return;
  }
  ModelHandle handle = std::move(*loaded);
  if (slot.handle) {
    if (auto c = charges_.find(slot.serial); c != charges_.end()) c->second.retired = true;
    ++e.retiring;
    after->retire.push_back(std::move(slot.handle));
  }
  slot.error.clear();
  slot.footprint = handle->footprint();
  slot.serial = serial;  // taken before the load: the release callback carries it
  charges_[slot.serial] = Charge{e.name, slot.footprint.bytes, false, false};
  resident_ += slot.footprint.bytes;
  resident_since_recycle_ = true;
  e.resident_bytes += slot.footprint.bytes;
  slot.handle = std::move(handle);
}

void Lifecycle::RunUnload(const std::string& name) {
  Aftermath after;
  MutexLock lock(&mu_);
  Entry* e = FindLocked(name);
  for (auto& [v, slot] : e->versions) {
    if (!slot.handle) continue;
    if (auto c = charges_.find(slot.serial); c != charges_.end()) c->second.retired = true;
    ++e->retiring;
    after.retire.push_back(std::move(slot.handle));
    spdlog::info("model '{}' version {}: unloaded ({} in flight finish first)", name, v,
                 after.retire.back()->in_flight());
  }
  after.release_memory = !after.retire.empty();
  for (auto& d : e->unload_done) after.dones.emplace_back(std::move(d), Status::Ok());
  e->unload_done.clear();
  e->job = Job::kNone;
  if (e->load_after && accepting_jobs_) {
    e->load_after = false;
    StartLoadLocked(*e, /*rescan=*/true);
  }
  UpdateGaugesLocked();
  lock.Unlock();
  Carry(std::move(after), /*measure=*/true);
}

}  // namespace inferd::repository::internal
