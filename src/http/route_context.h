// RouteContext: what the route handlers of every API family share. Built by
// HttpServer; the pointers outlive the server. Handlers run on network
// threads and must not block there: loads and unloads run on the
// repository's load threads, inference on the scheduler's executors.
#pragma once

#include <functional>

#include "dashboard/sampler.h"
#include "metrics/registry.h"
#include "mirror/mirror_set.h"
#include "repository/model_repository.h"
#include "serving/request_metrics.h"

namespace inferd::http {

struct RouteContext {
  repository::ModelRepository* repository = nullptr;
  metrics::Registry* metrics = nullptr;
  std::function<bool()> ready;  // server ready (not draining)
  serving::RequestMetrics* request_metrics = nullptr;
  dashboard::Sampler* dashboard = nullptr;  // management: serves /dashboard when set
  mirror::MirrorSet* mirrors = nullptr;  // may be null: no traffic mirroring
};

}  // namespace inferd::http
