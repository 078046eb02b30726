// ModelRepository: the model store on disk and the versions loaded from it.
//
// Store layout: DIR/<model>/config.yaml and DIR/<model>/<version>/model.pt,
// versions positive integers, the highest the default. A model that fails to
// load stays listed with its error (not ready) and the others still serve.
//
// A ModelHandle pins one loaded version: holding it keeps the weights and the
// queue alive across an unload, until the last in-flight request answers.
// Thread-safety: all methods are thread-safe; Load/Unload block while loading.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/status.h"
#include "config/model_config.h"
#include "scheduler/scheduler.h"

namespace inferd::repository {

// One loaded, servable model version.
class ServedModel {
 public:
  ServedModel(config::ModelConfig config, int64_t version, std::string dir,
              std::shared_ptr<backend::Model> model, std::shared_ptr<scheduler::ModelQueue> queue,
              scheduler::Scheduler* scheduler);
  ~ServedModel();

  const config::ModelConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  int64_t version() const { return version_; }
  const std::string& dir() const { return dir_; }  // DIR/<model>
  // Stops accepting requests; those already queued still run.
  void Retire();

  // See Scheduler::Enqueue for ownership and errors.
  Status Enqueue(scheduler::InferenceRequest request, scheduler::Completion done);
  size_t QueueDepth() const;

 private:
  config::ModelConfig config_;
  int64_t version_;
  std::string dir_;
  std::shared_ptr<backend::Model> model_;
  std::shared_ptr<scheduler::ModelQueue> queue_;
  scheduler::Scheduler* scheduler_;
};

using ModelHandle = std::shared_ptr<ServedModel>;

enum class ModelState { kUnloaded, kLoading, kReady, kFailed };
std::string_view ModelStateName(ModelState state);  // UNAVAILABLE, LOADING, READY, FAILED

struct VersionStatus {
  int64_t version = 0;
  ModelState state = ModelState::kUnloaded;
  std::string error;  // why it failed, when kFailed
};

struct ModelStatus {
  std::string name;
  std::optional<config::ModelConfig> config;  // absent when config.yaml is invalid
  std::vector<VersionStatus> versions;        // ascending
  std::string error;                          // config error, or the default version's error
};

// Builds the pipeline hooks for a model (pre/post-processing); injected so that
// repository/ does not depend on pipeline/. May be empty.
using HooksFactory =
    std::function<StatusOr<scheduler::ModelHooks>(const config::ModelConfig&, const std::string& dir)>;

// Decides where a model may run (ModelSpec::max_concurrency, executor_ids):
// the core plan's answer for this config. May be empty (anywhere, no cap).
using Placement = std::function<void(const config::ModelConfig&, scheduler::ModelSpec*)>;

class ModelRepository {
 public:
  struct Options {
    std::string store_dir;
    std::vector<std::string> models;  // to load at start; empty = all
    backend::Backend* backend = nullptr;
    scheduler::Scheduler* scheduler = nullptr;
    HooksFactory hooks_factory;
    Placement placement;
  };
  static StatusOr<std::unique_ptr<ModelRepository>> Create(const Options& options);

  // Loads the models named in Options::models (or all): failures are recorded, not returned.
  void LoadInitial();

  // A ready version: `version` empty = the highest ready one. kNotFound for an
  // unknown model or version, kUnavailable (with the load error) when not ready.
  StatusOr<ModelHandle> Get(const std::string& model, std::optional<int64_t> version = {}) const;

  // Scans the store again and (re)loads every version of `model`.
  Status Load(const std::string& model);
  // Unloads every version of `model`; in-flight requests still complete.
  Status Unload(const std::string& model);

  std::vector<ModelStatus> List() const;
  StatusOr<ModelStatus> GetStatus(const std::string& model) const;
  // True when every model named at start-up is ready.
  bool AllReady() const;

  ~ModelRepository();

 private:
  class Impl;
  explicit ModelRepository(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferd::repository
