// Lifecycle: what it tells about its models (List, GetStatus), and why a
// quarantined version is refused. Registration and requests are in
// lifecycle.cc.
#include <filesystem>

#include "repository/internal/lifecycle.h"
#include "repository/model_name.h"
#include "repository/version_files.h"

namespace inferd::repository::internal {

// A version's calibration is read from the scheduler (a deferred one arrives
// late), under the scheduler's lock: never with mu_ held, because a request's
// completion may run the repository's on_idle under the scheduler's lock. Its
// precision report (fixed at load) is read with it.
namespace {
void FillCalibrations(ModelStatus& s, std::vector<ModelHandle>& handles) {
  for (size_t i = 0; i < s.versions.size() && i < handles.size(); ++i) {
    if (!handles[i]) continue;
    s.versions[i].calibration = handles[i]->calibration();
    backend::PrecisionReport precision = handles[i]->precision();
    if (!precision.requested.empty()) s.versions[i].precision = std::move(precision);
    s.versions[i].load_skipped = handles[i]->load_skipped();
  }
  handles.clear();  // released here, outside mu_
}
}  // namespace

std::vector<ModelStatus> Lifecycle::List() const {
  std::vector<ModelStatus> out;
  std::vector<std::vector<ModelHandle>> handles;
  {
    MutexLock lock(&mu_);
    out.reserve(entries_.size());
    handles.resize(entries_.size());
    for (const auto& [name, e] : entries_) out.push_back(StatusLocked(e, &handles[out.size()]));
  }
  for (size_t i = 0; i < out.size(); ++i) FillCalibrations(out[i], handles[i]);
  return out;
}

StatusOr<ModelStatus> Lifecycle::GetStatus(const std::string& model) const {
  RETURN_IF_ERROR(ValidateModelName(model));
  ModelStatus s;
  std::vector<ModelHandle> handles;
  std::vector<std::string> model_paths;  // per version, to list its folder outside mu_
  {
    MutexLock lock(&mu_);
    const Entry* e = FindLocked(model);
    if (!e) return NotFound(UnknownModelLocked(model));
    s = StatusLocked(*e, &handles);
    for (const auto& [v, slot] : e->versions) model_paths.push_back(slot.stored.model_path);
  }
  FillCalibrations(s, handles);
  for (size_t i = 0; i < s.versions.size() && i < model_paths.size(); ++i) {
    const std::filesystem::path path(model_paths[i]);
    // precision auto may serve another file of the folder (an ONNX candidate).
    const auto& precision = s.versions[i].precision;
    const std::string served =
        precision && !precision->file.empty() ? precision->file : path.filename().string();
    s.versions[i].files = ListVersionFiles(path.parent_path().string(), served);
  }
  return s;
}

ModelStatus Lifecycle::StatusLocked(const Entry& e, std::vector<ModelHandle>* handles) const {
  ModelStatus s;
  s.name = e.name;
  s.config = e.config;
  s.error = e.config ? e.error : e.config_error;
  s.load = e.policy;
  s.pinned = e.pinned;
  s.resident_bytes = ledger_.ResidentOf(e.name);
  const bool retiring = ledger_.RetiringOf(e.name) > 0;
  bool ready = false, quarantined = false;
  for (const auto& [v, slot] : e.versions) {
    VersionStatus vs;
    vs.version = v;
    vs.error = slot.error;
    vs.footprint = slot.footprint;
    if (slot.handle) {
      vs.state = ModelState::kReady;
      s.in_flight += slot.handle->in_flight();
      ready = true;
    } else if (slot.phase == VersionPhase::kLoading) {
      vs.state = ModelState::kLoading;
    } else if (slot.phase == VersionPhase::kQuarantined) {
      vs.state = ModelState::kQuarantined;
      vs.reason = slot.quarantine_reason;
      s.reason = slot.quarantine_reason;  // the highest quarantined version's
      quarantined = true;
    } else if (retiring) {
      vs.state = ModelState::kUnloading;
    }
    vs.resident = slot.handle != nullptr;
    handles->push_back(slot.handle);  // one per version, null when not resident
    s.versions.push_back(std::move(vs));
  }
  if (Loading(e.phase) && !ready) {
    s.state = ModelState::kLoading;
  } else if (Unloading(e.phase)) {
    s.state = ModelState::kUnloading;
  } else if (ready) {
    s.state = ModelState::kReady;
  } else if (quarantined) {
    s.state = ModelState::kQuarantined;  // its instance may still be retiring
  } else if (retiring) {
    s.state = ModelState::kUnloading;
  }
  if (e.last_request) {
    s.last_used = std::chrono::system_clock::now() -
                  std::chrono::duration_cast<std::chrono::system_clock::duration>(
                      options_.clock->Now() - *e.last_request);
  }
  return s;
}

std::optional<int64_t> Lifecycle::QuarantinedVersionLocked(const Entry& e) const {
  for (auto it = e.versions.rbegin(); it != e.versions.rend(); ++it) {
    if (it->second.phase == VersionPhase::kQuarantined) return it->first;
  }
  return std::nullopt;
}

Status Lifecycle::QuarantinedLocked(const Entry& e, int64_t version) const {
  return Unavailable("model '" + e.name + "' version " + std::to_string(version) +
                     " is QUARANTINED: " + e.versions.at(version).quarantine_reason +
                     "; load it again through the management API (POST /models?url=" + e.name +
                     " or POST /v2/repository/models/" + e.name + "/load)");
}

}  // namespace inferd::repository::internal
