#include "repository/model_repository.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>

namespace inferd::repository {
namespace fs = std::filesystem;

namespace {

// Positive integer folder names holding a model.pt, ascending.
std::vector<int64_t> ScanVersions(const fs::path& model_dir) {
  std::vector<int64_t> versions;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(model_dir, ec)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    if (name.size() > 18) continue;
    const int64_t v = std::stoll(name);
    if (v > 0 && fs::exists(entry.path() / "model.pt")) versions.push_back(v);
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

}  // namespace

class ModelRepository::Impl {
 public:
  explicit Impl(Options options) : options_(std::move(options)) {}

  std::vector<std::string> StoreModels() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(options_.store_dir, ec)) {
      if (entry.is_directory() && fs::exists(entry.path() / "config.yaml")) {
        names.push_back(entry.path().filename().string());
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  void LoadInitial() {
    std::vector<std::string> names = options_.models.empty() ? StoreModels() : options_.models;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& n : StoreModels()) entries_[n].status.name = n;
      initial_ = names;
    }
    for (const auto& name : names) {
      Status st = Load(name);
      if (!st.ok()) spdlog::error("model '{}' failed to load: {}", name, st.message());
    }
  }

  Status Load(const std::string& name) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      return InvalidArgument("'" + name + "' is not a model name (a folder of the model store)");
    }
    const fs::path dir = fs::path(options_.store_dir) / name;
    if (!fs::exists(dir / "config.yaml")) {
      return NotFound("no model '" + name + "' in the model store " + options_.store_dir +
                      " (expected " + (dir / "config.yaml").string() + ")");
    }
    ModelStatus status;
    status.name = name;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& e = entries_[name];
      e.status.name = name;
      for (auto& v : e.status.versions) v.state = ModelState::kLoading;
    }
    std::map<int64_t, ModelHandle> loaded;
    auto config = config::LoadModelConfig((dir / "config.yaml").string(), name);
    if (!config.ok()) {
      status.error = config.status().message();
    } else {
      status.config = *config;
      const auto versions = ScanVersions(dir);
      if (versions.empty()) {
        status.error = "no version folder with a model.pt in " + dir.string() +
                       " (expected " + (dir / "1" / "model.pt").string() + ")";
      }
      for (int64_t v : versions) {
        VersionStatus vs;
        vs.version = v;
        auto handle = LoadVersion(*config, v, dir);
        if (handle.ok()) {
          vs.state = ModelState::kReady;
          loaded[v] = *handle;
          spdlog::info("model '{}' version {} is ready", name, v);
        } else {
          vs.state = ModelState::kFailed;
          vs.error = handle.status().message();
          spdlog::error("model '{}' version {} failed to load: {}", name, v, vs.error);
        }
        status.versions.push_back(vs);
      }
      if (!status.versions.empty() && status.versions.back().state == ModelState::kFailed) {
        status.error = status.versions.back().error;
      }
    }
    std::map<int64_t, ModelHandle> old;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& e = entries_[name];
      old.swap(e.versions);
      e.versions = std::move(loaded);
      e.status = status;
    }
    for (auto& [v, h] : old) h->Retire();
    if (!status.error.empty()) return FailedPrecondition(status.error);
    return Status::Ok();
  }

  StatusOr<ModelHandle> LoadVersion(const config::ModelConfig& config, int64_t version,
                                    const fs::path& dir) {
    backend::LoadOptions lo;
    lo.model_path = (dir / std::to_string(version) / "model.pt").string();
    lo.config = config;
    ASSIGN_OR_RETURN(auto model, options_.backend->Load(lo));
    scheduler::ModelSpec spec;
    spec.name = config.name + ":" + std::to_string(version);
    spec.version = std::to_string(version);
    spec.config = config;
    spec.model = model;
    if (options_.hooks_factory) {
      ASSIGN_OR_RETURN(spec.hooks, options_.hooks_factory(config, dir.string()));
    }
    if (options_.placement) options_.placement(config, &spec);
    auto queue = options_.scheduler->AddModel(std::move(spec));
    return std::make_shared<ServedModel>(config, version, dir.string(), std::move(model),
                                         std::move(queue), options_.scheduler);
  }

  Status Unload(const std::string& name) {
    std::map<int64_t, ModelHandle> old;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(name);
      if (it == entries_.end()) return NotFound(UnknownModel(name));
      old.swap(it->second.versions);
      for (auto& v : it->second.status.versions) {
        v.state = ModelState::kUnloaded;
        v.error.clear();
      }
      it->second.status.error.clear();
    }
    for (auto& [v, h] : old) h->Retire();
    return Status::Ok();
  }

  StatusOr<ModelHandle> Get(const std::string& name, std::optional<int64_t> version) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return NotFound(UnknownModel(name));
    const Entry& e = it->second;
    if (version) {
      auto v = e.versions.find(*version);
      if (v != e.versions.end()) return v->second;
      for (const auto& vs : e.status.versions) {
        if (vs.version != *version) continue;
        return Unavailable("model '" + name + "' version " + std::to_string(*version) +
                           " is not ready (" + std::string(ModelStateName(vs.state)) +
                           (vs.error.empty() ? "" : ": " + vs.error) + ")");
      }
      return NotFound("model '" + name + "' has no version " + std::to_string(*version));
    }
    if (!e.versions.empty()) return e.versions.rbegin()->second;
    return Unavailable("model '" + name + "' is not ready" +
                       (e.status.error.empty() ? std::string(" (not loaded)")
                                               : ": " + e.status.error));
  }

  std::vector<ModelStatus> List() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<ModelStatus> out;
    for (const auto& [name, e] : entries_) out.push_back(e.status);
    return out;
  }

  StatusOr<ModelStatus> GetStatus(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return NotFound(UnknownModel(name));
    return it->second.status;
  }

  bool AllReady() const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& name : initial_) {
      auto it = entries_.find(name);
      if (it == entries_.end() || it->second.versions.empty()) return false;
    }
    return true;
  }

 private:
  struct Entry {
    ModelStatus status;
    std::map<int64_t, ModelHandle> versions;  // ready versions only
  };

  // Called with mu_ held.
  std::string UnknownModel(const std::string& name) const {
    std::string known;
    for (const auto& [n, e] : entries_) known += (known.empty() ? "" : ", ") + n;
    return "unknown model '" + name + "' (known models: " + (known.empty() ? "none" : known) + ")";
  }

  Options options_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;  // guarded by mu_
  std::vector<std::string> initial_;     // guarded by mu_
};

StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::Create(const Options& options) {
  if (!options.backend || !options.scheduler) {
    return InvalidArgument("the model repository needs a backend and a scheduler");
  }
  std::error_code ec;
  if (!fs::is_directory(options.store_dir, ec)) {
    return NotFound("model store '" + options.store_dir + "' is not a directory");
  }
  return std::unique_ptr<ModelRepository>(new ModelRepository(std::make_unique<Impl>(options)));
}

ModelRepository::ModelRepository(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModelRepository::~ModelRepository() = default;

void ModelRepository::LoadInitial() { impl_->LoadInitial(); }
StatusOr<ModelHandle> ModelRepository::Get(const std::string& model,
                                           std::optional<int64_t> version) const {
  return impl_->Get(model, version);
}
Status ModelRepository::Load(const std::string& model) { return impl_->Load(model); }
Status ModelRepository::Unload(const std::string& model) { return impl_->Unload(model); }
std::vector<ModelStatus> ModelRepository::List() const { return impl_->List(); }
StatusOr<ModelStatus> ModelRepository::GetStatus(const std::string& model) const {
  return impl_->GetStatus(model);
}
bool ModelRepository::AllReady() const { return impl_->AllReady(); }

}  // namespace inferd::repository
