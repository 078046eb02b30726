// Lifecycle: the load job, on a load thread, in three steps:
//   reserve  (under mu_) read the store again if asked, check what can be
//            loaded, make room under the budget (or park until there is),
//            reserve the load's peak and mark its versions loading;
//   load     (no lock) retire the evicted, load every version (the first
//            load of a file alone, to measure it);
//   install  (under mu_) put the instances in place, answer the waiters,
//            release the reservation, chain the next job, evict if the
//            measured footprints exceed the estimates.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "backend/registry.h"
#include "repository/internal/lifecycle.h"
#include "repository/internal/precision_metrics.h"
#include "repository/memory_budget.h"

namespace inferd::repository::internal {

void Lifecycle::RunLoad(const std::string& name) {
  const TimePoint ran = options_.clock->Now();
  Aftermath after;
  MutexLock lock(&mu_);
  Entry* e = FindLocked(name);
  if (!accepting_jobs_) {
    FinishJobLocked(*e, Unavailable("the server is shutting down"), Event::kCancelled, &after);
    lock.Unlock();
    return Carry(std::move(after));
  }
  if (e->rescan) {
    e->rescan = false;
    lock.Unlock();
    auto stored = store_.Read(name);  // parses a file: outside the lock
    lock.Lock();
    if (!stored.ok()) {
      e->error = stored.status().message();
      FinishJobLocked(*e, stored.status(), Event::kLoadEnded, &after);
      lock.Unlock();
      return Carry(std::move(after));
    }
    RefreshFromStoreLocked(*e, *stored, &after);
  }
  std::optional<LoadPlan> plan = ReserveLocked(*e, ran, &after);
  lock.Unlock();
  if (!plan) return Carry(std::move(after));

  Aftermath evicted;
  evicted.retire = std::move(plan->victims);
  evicted.release_memory = !evicted.retire.empty();
  Carry(std::move(evicted));
  std::vector<LoadedVersion> loaded = LoadVersions(name, *plan);

  lock.Lock();
  InstallAllLocked(*FindLocked(name), *plan, std::move(loaded), &after);
  lock.Unlock();
  Carry(std::move(after), /*measure=*/true);
}

std::optional<Lifecycle::LoadPlan> Lifecycle::ReserveLocked(Entry& e, TimePoint ran,
                                                            Aftermath* after) {
  const std::string& name = e.name;
  Status cannot;
  if (!e.config) {
    cannot = FailedPrecondition(e.config_error);
  } else if (e.versions.empty()) {
    const std::string backend_name(config::Name(e.config->backend));
    if (!backend::Registry::Find(backend_name)) {
      // Its model file is unknown, so the store found no version: say why.
      std::string built;
      for (const std::string& n : backend::Registry::Names()) built += (built.empty() ? "" : ", ") + n;
      cannot = FailedPrecondition("backend '" + backend_name +
                                  "' is not built into this binary (it has: " + built +
                                  "; docs/CONFIG.md says how to build it), so no version folder "
                                  "with a model file was found in " + e.dir);
    } else {
      cannot = FailedPrecondition("no version folder with a model file in " + e.dir +
                                  " (expected " + e.dir + "/1/" +
                                  backend::Registry::ModelFiles(*e.config).front() + ")");
    }
  }
  if (!cannot.ok()) {
    e.error = cannot.message();
    spdlog::error("model '{}' failed to load: {}", name, e.error);
    if (metrics_) metrics_->loads_failed->Increment();
    FinishJobLocked(e, cannot, Event::kLoadEnded, after);
    return std::nullopt;
  }

  // Make room, then reserve the estimate while loading.
  LoadPlan plan;
  int64_t need = 0, peak = 0;
  for (const auto& [v, slot] : e.versions) {
    need += EstimateFootprint(slot.stored, slot.footprint);
    peak += EstimateLoadPeak(slot.stored, slot.footprint);
    plan.measure |= !slot.footprint.measured;
  }
  bool fits = true, soft_left_out = false;
  std::string why_not;
  if (ledger_.limited()) {
    plan.victims = EvictLocked(name, need, peak - need, &fits, &why_not, &soft_left_out);
  }
  if (!fits) {
    int64_t pinned = 0;
    for (const auto& [other, o] : entries_) {
      if (other != name && o.pinned) pinned += ledger_.ResidentOf(other);
    }
    if (!e.waiters.empty() && need <= ledger_.budget() - pinned) {
      // Room appears when the models in use go idle: the requests wait for it.
      Step(e, Event::kNoRoom);
      parked_.push_back(name);
      timer_->Wake(options_.clock->Now() + kParkedRetry);
      return std::nullopt;
    }
    // Not the model's fault: no error is recorded, the next request tries again.
    spdlog::warn("model '{}' not loaded: {}", name, why_not);
    if (metrics_) metrics_->loads_no_room->Increment();
    FinishJobLocked(e, Unavailable("model '" + name + "' cannot be loaded now: " + why_not),
                    Event::kLoadEnded, after);
    return std::nullopt;
  }
  // The load's peak while it runs, unless no eviction could make room for it.
  plan.reserve = soft_left_out ? need : std::max(need, peak);
  ledger_.Reserve(plan.reserve);
  plan.config = *e.config;
  plan.dir = e.dir;
  for (auto& [v, slot] : e.versions) {
    Step(e, slot, v, VersionEvent::kLoadStarted);
    plan.todo.emplace_back(slot.stored, slot.footprint, slot.memory);
  }
  // A load on demand has requests waiting: calibration must not hold them
  // (nor, on the executors, other models' requests); it runs once the
  // model's requests queue. Eager models calibrate at start-up, as before.
  plan.defer_calibration = e.policy != LoadPolicy::kEager;
  // Queued behind other jobs, or parked until room appeared.
  plan.queued = ran - e.load_posted;
  return plan;
}

std::vector<Lifecycle::LoadedVersion> Lifecycle::LoadVersions(const std::string& name,
                                                              const LoadPlan& plan) {
  std::vector<LoadedVersion> loaded;
  // A first load runs alone, after the freed memory went back to the
  // system, so that the resident memory it adds is its own.
  std::unique_lock<std::shared_mutex> alone(measure_mu_, std::defer_lock);
  std::shared_lock<std::shared_mutex> shared(measure_mu_, std::defer_lock);
  const TimePoint locking = options_.clock->Now();
  if (plan.measure) {
    alone.lock();
  } else {
    shared.lock();
  }
  const double waited_ms =
      std::chrono::duration<double, std::milli>(plan.queued + (options_.clock->Now() - locking))
          .count();
  if (plan.measure && options_.release_memory) options_.release_memory();
  for (auto [stored, known, memory] : plan.todo) {
    known.load_wait_ms = waited_ms;
    uint64_t serial = 0;
    {
      MutexLock l(&mu_);
      serial = ledger_.NewSerial();
    }
    const TimePoint start = options_.clock->Now();
    auto handle = LoadVersion(
        load_context_, plan.config, plan.dir, stored, known, memory, plan.defer_calibration,
        known.measured ? nullptr : options_.resident_bytes, options_.peak_resident_bytes,
        {OnRelease(serial), OnIdle(), Successor(name, stored.version),
         OnHung(name, stored.version, serial)});
    const double seconds = std::chrono::duration<double>(options_.clock->Now() - start).count();
    if (metrics_) metrics_->load_seconds->Observe(seconds);
    if (handle.ok()) {
      if (options_.metrics) {
        ExportPrecision(*options_.metrics, name, stored.version, (*handle)->precision());
      }
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
    loaded.push_back({stored.version, serial, std::move(handle)});
  }
  return loaded;
}

void Lifecycle::InstallAllLocked(Entry& e, const LoadPlan& plan, std::vector<LoadedVersion> loaded,
                                 Aftermath* after) {
  const std::string& name = e.name;
  ledger_.Unreserve(plan.reserve);
  for (auto& l : loaded) InstallLocked(e, l.version, l.serial, std::move(l.handle), after);
  const Version& top = e.versions.rbegin()->second;
  e.error = top.handle || top.error.empty() ? "" : top.error;
  e.lru_time = options_.clock->Now();
  const Status outcome = e.error.empty() ? Status::Ok() : FailedPrecondition(e.error);
  if (metrics_) (outcome.ok() ? metrics_->loads_ok : metrics_->loads_failed)->Increment();
  // Waiters get the version they asked for, or its error; they used the model.
  // (Resolved once the load has ended: an error is not "LOADING".)
  Step(e, Event::kLoadEnded);
  if (!e.waiters.empty()) e.last_request = e.lru_time;
  for (auto& w : e.waiters) {
    after->answers.emplace_back(std::move(w.done), ResolveLocked(e, w.version));
  }
  e.waiters.clear();
  AnswerJobLocked(e, outcome, after);
  PostChainedLocked(e);
  if (!accepting_jobs_) {
    for (auto& [v, slot] : e.versions) {
      if (slot.handle) RetireLocked(e, slot, v, VersionEvent::kRetired, after);
    }
  }
  // The measured footprints may exceed the estimates: evict others if so.
  if (ledger_.OverBudget()) {
    bool fits = true;
    auto more = EvictLocked(name, 0, 0, &fits, nullptr, nullptr);
    for (auto& h : more) after->retire.push_back(std::move(h));
    after->release_memory |= !more.empty();
    if (!fits) {
      spdlog::warn(
          "memory budget: {} committed, over the budget of {}: the rest is in use or "
          "pinned",
          FormatBytes(ledger_.committed()), FormatBytes(ledger_.budget()));
    }
  }
  UpdateGaugesLocked();
  RetryParkedLocked();  // the reservation is gone; others may fit now
  after->release_memory |= !after->retire.empty();
}

// Puts a freshly loaded instance in place (the one it replaces is retired),
// or records its error (the one it would replace keeps serving).
void Lifecycle::InstallLocked(Entry& e, int64_t version, uint64_t serial,
                              StatusOr<ModelHandle> loaded, Aftermath* after) {
  Version& slot = e.versions.at(version);
  if (!loaded.ok()) {
    Step(e, slot, version, VersionEvent::kLoadFailed);
    slot.error = loaded.status().message();
    return;
  }
  ModelHandle handle = std::move(*loaded);
  if (slot.handle) {
    ledger_.Retire(slot.serial);
    after->retire.push_back(std::move(slot.handle));
  }
  Step(e, slot, version, VersionEvent::kLoaded);
  slot.error.clear();
  slot.footprint = handle->footprint();
  slot.serial = serial;  // taken before the load: the release callback carries it
  ledger_.Commit(slot.serial, e.name, slot.footprint.bytes);
  slot.handle = std::move(handle);
}

}  // namespace inferd::repository::internal
