// Metrics port: GET /metrics renders the registry in the Prometheus text
// format (Content-Type text/plain; version=0.0.4).
#pragma once

#include "http/route_context.h"
#include "http/router.h"

namespace inferd::http {

void AddMetricsRoutes(Router& router, const RouteContext& ctx);

}  // namespace inferd::http
