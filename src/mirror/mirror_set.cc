#include "mirror/mirror_set.h"

#include "mirror/local_candidate.h"
#include "mirror/remote_candidate.h"

namespace inferd::mirror {

MirrorSet::MirrorSet(const Options& options) : options_(options) {}
MirrorSet::~MirrorSet() = default;

Status MirrorSet::Set(const std::string& model, const config::MirrorConfig& config) {
  RETURN_IF_ERROR(config::ValidateMirrorConfig(config));
  ASSIGN_OR_RETURN(repository::ModelStatus primary, options_.repository->GetStatus(model));
  std::shared_ptr<Candidate> candidate;
  if (config::IsRemoteCandidate(config.to)) {
    RemoteCandidate::Options ro;
    ro.url = config.to;
    ro.timeout = std::chrono::milliseconds(config.timeout_ms);
    if (primary.config && !primary.config->inputs.empty()) {
      ro.raw_input_name = primary.config->inputs[0].name;
    }
    ASSIGN_OR_RETURN(candidate, RemoteCandidate::Create(ro));
  } else {
    ASSIGN_OR_RETURN(candidate, LocalCandidate::Create(options_.repository, config.to));
  }
  Mirror::Options mo;
  mo.model = model;
  mo.config = config;
  mo.metrics = options_.metrics;
  ASSIGN_OR_RETURN(std::unique_ptr<Mirror> mirror, Mirror::Create(mo, std::move(candidate)));
  std::shared_ptr<Mirror> old;
  {
    MutexLock lock(&mu_);
    old = std::move(mirrors_[model]);
    mirrors_[model] = std::move(mirror);
    any_ = true;
  }
  return Status::Ok();  // `old` (and a remote candidate's thread) goes outside the lock
}

Status MirrorSet::Remove(const std::string& model) {
  std::shared_ptr<Mirror> old;
  {
    MutexLock lock(&mu_);
    auto it = mirrors_.find(model);
    if (it == mirrors_.end()) return NotFound("model '" + model + "' has no mirror");
    old = std::move(it->second);
    mirrors_.erase(it);
    any_ = !mirrors_.empty();
  }
  return Status::Ok();
}

StatusOr<MirrorReport> MirrorSet::Report(const std::string& model) const {
  std::shared_ptr<Mirror> mirror;
  {
    MutexLock lock(&mu_);
    auto it = mirrors_.find(model);
    if (it == mirrors_.end()) {
      return NotFound("model '" + model +
                      "' has no mirror; set one with `mirror:` in its config.yaml or "
                      "PUT /models/" + model + "/mirror on the management port");
    }
    mirror = it->second;
  }
  return mirror->Report();
}

std::vector<std::string> MirrorSet::Models() const {
  MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [name, m] : mirrors_) out.push_back(name);
  return out;
}

std::vector<std::string> MirrorSet::SetFromConfigs() {
  std::vector<std::string> failures;
  for (const auto& status : options_.repository->List()) {
    if (!status.config || !status.config->mirror) continue;
    Status st = Set(status.name, *status.config->mirror);
    if (!st.ok()) failures.push_back("model '" + status.name + "': " + st.message());
  }
  return failures;
}

scheduler::Completion MirrorSet::Tap(const repository::ModelHandle& model,
                                     const scheduler::InferenceRequest& request,
                                     scheduler::Completion done) {
  if (!any_.load(std::memory_order_relaxed)) return done;
  std::shared_ptr<Mirror> mirror;
  {
    MutexLock lock(&mu_);
    auto it = mirrors_.find(model->name());
    if (it == mirrors_.end()) return done;
    mirror = it->second;
  }
  return mirror->Tap(request, std::move(done));
}

}  // namespace inferd::mirror
