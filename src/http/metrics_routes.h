// Metrics port: GET /metrics renders the registry in the Prometheus text
// format (Content-Type text/plain; version=0.0.4).
#pragma once

#include "http/router.h"
#include "serving/services.h"

namespace inferd::http {

void AddMetricsRoutes(Router& router, const serving::Services& services);

}  // namespace inferd::http
