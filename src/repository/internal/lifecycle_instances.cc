// Lifecycle: the callbacks each instance gets (ServedModel::Parts and
// ModelSpec::quarantine: its release, its idle moments, its successor, a hung
// forward) and the quarantine of a version. Registration and requests are in
// lifecycle.cc.
#include <spdlog/spdlog.h>

#include "repository/internal/lifecycle.h"
#include "repository/model_name.h"

namespace inferd::repository::internal {

std::function<void()> Lifecycle::OnRelease(uint64_t serial) {
  std::weak_ptr<Lifecycle> weak = weak_from_this();
  return [weak, serial] {
    if (auto self = weak.lock()) self->Released(serial);
  };
}

std::function<void()> Lifecycle::OnIdle() {
  std::weak_ptr<Lifecycle> weak = weak_from_this();
  return [weak] {
    auto self = weak.lock();
    if (!self) return;
    // Under mu_, always: a check of "is a load parked?" without it raced with
    // a load deciding to park (it saw this version busy, then parked after
    // the check): the wake-up was lost and the load waited for the
    // kParkedRetry timer. One uncontended lock per request, as Acquire takes.
    MutexLock lock(&self->mu_);
    self->RetryParkedLocked();
  };
}

std::function<ModelHandle()> Lifecycle::Successor(const std::string& model, int64_t version) {
  std::weak_ptr<Lifecycle> weak = weak_from_this();
  return [weak, model, version]() -> ModelHandle {
    auto self = weak.lock();
    return self ? self->ReadyInstance(model, version) : nullptr;
  };
}

// Copied out under mu_, as every handle is (EvictableLocked counts on it); the
// copy is never the last, so no release runs under mu_.
ModelHandle Lifecycle::ReadyInstance(const std::string& model, int64_t version) const {
  MutexLock lock(&mu_);
  const Entry* e = FindLocked(model);
  if (!e) return nullptr;
  StatusOr<ModelHandle> handle = ResolveLocked(*e, version);
  return handle.ok() ? *handle : nullptr;
}

metrics::Gauge& Lifecycle::QuarantinedGauge(const std::string& model, int64_t version) {
  return options_.metrics->GetGauge(
      "inferd_model_quarantined",
      "1 while the model version is quarantined (a forward was given up), until loaded again",
      {{"model", model}, {"version", std::to_string(version)}});
}

Status Lifecycle::Quarantine(const std::string& model, int64_t version, const std::string& reason) {
  RETURN_IF_ERROR(ValidateModelName(model));
  return QuarantineInstance(model, version, std::nullopt, reason);
}

Status Lifecycle::QuarantineInstance(const std::string& model, int64_t version,
                                     std::optional<uint64_t> serial, const std::string& reason) {
  Aftermath after;
  {
    MutexLock lock(&mu_);
    Entry* e = FindLocked(model);
    if (!e) return NotFound(UnknownModelLocked(model));
    auto it = e->versions.find(version);
    if (it == e->versions.end()) {
      return NotFound("model '" + model + "' has no version " + std::to_string(version));
    }
    Version& slot = it->second;
    if (slot.phase == VersionPhase::kQuarantined) return Status::Ok();  // once is enough
    if (!started_ && !serial && !slot.handle && slot.phase == VersionPhase::kUnloaded &&
        !Loading(e->phase)) {
      // Before the eager loads (the crash journal's quarantine at start): kept from loading.
      Step(*e, slot, version, VersionEvent::kQuarantined);
      slot.quarantine_reason = reason;
      if (metrics_) {
        metrics_->quarantines->Increment();
        QuarantinedGauge(model, version).Set(1);
      }
      spdlog::warn("model '{}' version {} quarantined: {} (it serves again once loaded through "
                   "the management API)", model, version, reason);
      UpdateGaugesLocked();
      return Status::Ok();
    }
    if (!Serving(slot.phase) || (serial && slot.serial != *serial)) {
      // An instance already replaced, unloaded or evicted: nothing serves to take out.
      return FailedPrecondition("model '" + model + "' version " + std::to_string(version) +
                                " has no serving instance to quarantine");
    }
    const int in_flight = slot.handle->in_flight();
    RetireLocked(*e, slot, version, VersionEvent::kQuarantined, &after);
    if (slot.phase == VersionPhase::kQuarantined) {
      slot.quarantine_reason = reason;
      if (metrics_) {
        metrics_->quarantines->Increment();
        QuarantinedGauge(model, version).Set(1);
      }
      spdlog::warn(
          "model '{}' version {} quarantined: {} ({} requests in flight; it serves again once "
          "loaded through the management API)",
          model, version, reason, in_flight);
    } else {  // a reload under way replaces it
      spdlog::warn(
          "model '{}' version {}: its old instance is taken out of service ({}); the "
          "reload under way replaces it",
          model, version, reason);
    }
    UpdateGaugesLocked();
  }
  // Retire removes the queue from the scheduler; the instance's memory goes
  // when its last holder (a forward still running, its requests) lets go.
  Carry(std::move(after));
  return Status::Ok();
}

std::function<void(std::string)> Lifecycle::OnHung(const std::string& model, int64_t version,
                                                   uint64_t serial) {
  std::weak_ptr<Lifecycle> weak = weak_from_this();
  return [weak, model, version, serial](std::string reason) {
    auto self = weak.lock();
    if (!self) return;
    Status st = self->QuarantineInstance(model, version, serial, reason);
    if (!st.ok()) spdlog::info("model '{}' version {}: {}", model, version, st.message());
  };
}

}  // namespace inferd::repository::internal
