// Lifecycle: the asks for jobs and their phases (phase.h), and the unload
// job. A model has at most one job at a time (Entry::phase); asks that arrive
// meanwhile join it or are chained after it. The load job is in
// lifecycle_load.cc.
#include <spdlog/spdlog.h>

#include <cassert>

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
      AskLoadLocked(*e, /*rescan=*/true);
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
      const bool idle = e->phase == Phase::kIdle;
      Step(*e, Event::kUnloadAsked);
      if (idle) PostUnloadLocked(*e);
      return;
    }
  }
  done(answer);
}

void Lifecycle::Step(Entry& e, Event event) {
  StatusOr<Phase> next = Next(e.phase, event);
  if (!next.ok()) {
    spdlog::error("model '{}': {}", e.name, next.status().message());
    assert(false && "illegal lifecycle transition");
    return;
  }
  e.phase = *next;
}

void Lifecycle::Step(const Entry& e, Version& slot, int64_t version, VersionEvent event) {
  StatusOr<VersionPhase> next = Next(slot.phase, event);
  if (!next.ok()) {
    spdlog::error("model '{}' version {}: {}", e.name, version, next.status().message());
    assert(false && "illegal version transition");
    return;
  }
  if (slot.phase == VersionPhase::kQuarantined && *next != VersionPhase::kQuarantined) {
    slot.quarantine_reason.clear();
    if (metrics_) QuarantinedGauge(e.name, version).Set(0);
  }
  slot.phase = *next;
}

void Lifecycle::AskLoadLocked(Entry& e, bool rescan) {
  const bool idle = e.phase == Phase::kIdle;
  Step(e, Event::kLoadAsked);
  if (idle) PostLoadLocked(e, rescan);
}

void Lifecycle::PostLoadLocked(Entry& e, bool rescan) {
  e.rescan = rescan;
  e.load_posted = options_.clock->Now();
  pool_->Post([this, name = e.name] { RunLoad(name); });
}

void Lifecycle::PostUnloadLocked(Entry& e) {
  pool_->Post([this, name = e.name] { RunUnload(name); });
}

void Lifecycle::ChainLocked(Entry& e, Event event) {
  Step(e, event);
  PostChainedLocked(e);
}

void Lifecycle::PostChainedLocked(Entry& e) {
  if (e.phase == Phase::kIdle) return;
  if (!accepting_jobs_) return Step(e, Event::kCancelled);
  if (e.phase == Phase::kLoading) return PostLoadLocked(e, /*rescan=*/true);
  if (e.phase == Phase::kUnloading) return PostUnloadLocked(e);
  spdlog::error("model '{}': no job to chain in phase {}", e.name, PhaseName(e.phase));
  assert(false && "no job to chain");
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
  for (auto& [v, slot] : e.versions) {  // gone from the store
    if (slot.handle) RetireLocked(e, slot, v, VersionEvent::kRetired, after);
    if (slot.phase == VersionPhase::kQuarantined && metrics_) QuarantinedGauge(e.name, v).Set(0);
  }
  e.versions = std::move(fresh);
  return true;
}

void Lifecycle::RetireLocked(Entry& e, Version& slot, int64_t version, VersionEvent event,
                             Aftermath* after) {
  ledger_.Retire(slot.serial);
  Step(e, slot, version, event);
  after->retire.push_back(std::move(slot.handle));
  slot.handle = nullptr;
}

void Lifecycle::FinishJobLocked(Entry& e, const Status& status, Event event, Aftermath* after) {
  AnswerJobLocked(e, status, after);
  ChainLocked(e, event);
}

void Lifecycle::AnswerJobLocked(Entry& e, const Status& status, Aftermath* after) {
  for (auto& w : e.waiters) after->answers.emplace_back(std::move(w.done), status);
  e.waiters.clear();
  for (auto& d : e.load_done) after->dones.emplace_back(std::move(d), status);
  e.load_done.clear();
  if (e.startup) {
    e.startup = false;
    --startup_pending_;
    if (!status.ok()) startup_failed_ = true;
    startup_cv_.SignalAll();
  }
}

void Lifecycle::RunUnload(const std::string& name) {
  Aftermath after;
  MutexLock lock(&mu_);
  Entry* e = FindLocked(name);
  for (auto& [v, slot] : e->versions) {
    if (!slot.handle) continue;
    RetireLocked(*e, slot, v, VersionEvent::kRetired, &after);
    spdlog::info("model '{}' version {}: unloaded ({} in flight finish first)", name, v,
                 after.retire.back()->in_flight());
  }
  after.release_memory = !after.retire.empty();
  for (auto& d : e->unload_done) after.dones.emplace_back(std::move(d), Status::Ok());
  e->unload_done.clear();
  ChainLocked(*e, Event::kUnloadEnded);
  UpdateGaugesLocked();
  lock.Unlock();
  Carry(std::move(after), /*measure=*/true);
}

}  // namespace inferd::repository::internal
