#include "backend/backend_set.h"

#include <spdlog/spdlog.h>

namespace inferd::backend {

StatusOr<std::unique_ptr<BackendSet>> BackendSet::Create(const Options& options) {
  std::unique_ptr<BackendSet> set(new BackendSet());
  for (const std::string& name : Registry::Names()) {
    auto backend = Registry::Create(name, options.create);
    if (!backend.ok()) {
      return Status(backend.status().code(),
                    "backend '" + name + "': " + backend.status().message());
    }
    set->backends_.emplace(name, std::move(*backend));
  }
  std::string names;
  for (const auto& [name, backend] : set->backends_) names += (names.empty() ? "" : ", ") + name;
  spdlog::info("backends: {}", names.empty() ? "none" : names);
  return set;
}

StatusOr<std::shared_ptr<Model>> BackendSet::Load(const LoadOptions& options) {
  // `isolation: process`: the model runs in worker processes (python/).
  const std::string name(options.config.isolation == config::Isolation::kProcess
                             ? config::Name(config::BackendKind::kPython)
                             : config::Name(options.config.backend));
  auto it = backends_.find(name);
  if (it == backends_.end()) {
    std::string built;
    for (const auto& [n, backend] : backends_) built += (built.empty() ? "" : ", ") + n;
    return InvalidArgument("model '" + options.config.name + "': backend '" + name +
                           "' is not built into this binary (it has: " + built +
                           "; docs/CONFIG.md says how to build it)");
  }
  if (options.peers) return it->second->Load(options);
  LoadOptions with_peers = options;
  with_peers.peers = this;  // a backend may load a candidate file through another
  return it->second->Load(with_peers);
}

void BackendSet::InitExecutorThread(const std::vector<int>& cores, int num_threads) {
  for (auto& [name, backend] : backends_) backend->InitExecutorThread(cores, num_threads);
}

void BackendSet::SetCallWidth(const std::vector<int>& cores, int num_threads) {
  for (auto& [name, backend] : backends_) backend->SetCallWidth(cores, num_threads);
}

void BackendSet::ReleaseCaches() {
  for (auto& [name, backend] : backends_) backend->ReleaseCaches();
}

}  // namespace inferd::backend
