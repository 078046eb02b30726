// RouteContext: what the route handlers of every API family share. Built by
// HttpServer; the pointers outlive the server. Handlers run on network
// threads and must not block there: slow work (loading a model) goes through
// run_blocking, inference through the scheduler.
#pragma once

#include <functional>

#include "http/request_metrics.h"
#include "metrics/registry.h"
#include "repository/model_repository.h"

namespace inferd::http {

struct RouteContext {
  repository::ModelRepository* repository = nullptr;
  metrics::Registry* metrics = nullptr;
  std::function<bool()> ready;  // server ready (not draining)
  RequestMetrics* request_metrics = nullptr;
  std::function<void(std::function<void()>)> run_blocking;  // off the network threads
};

}  // namespace inferd::http
