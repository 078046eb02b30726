// RouteContext: what the route handlers of every API family share. Built by
// HttpServer; the pointers outlive the server. Handlers run on network
// threads and must not block there: slow work (loading a model) goes through
// run_blocking, inference through the scheduler.
#pragma once

#include <functional>

#include "metrics/registry.h"
#include "repository/model_repository.h"
#include "serving/request_metrics.h"

namespace inferd::http {

struct RouteContext {
  repository::ModelRepository* repository = nullptr;
  metrics::Registry* metrics = nullptr;
  std::function<bool()> ready;  // server ready (not draining)
  serving::RequestMetrics* request_metrics = nullptr;
  std::function<void(std::function<void()>)> run_blocking;  // off the network threads
};

}  // namespace inferd::http
