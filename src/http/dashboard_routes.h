// The dashboard on the management port (docs/DASHBOARD.md):
//   GET /                          302 to /dashboard
//   GET /dashboard                 the page (HTML, embedded in the binary)
//   GET /dashboard/dashboard.css   its style sheet
//   GET /dashboard/dashboard.js    its script
//   GET /dashboard/state           the JSON the page reads every second
//                                  (http/dashboard_state.h; ?offset, limit,
//                                  filter, sort, series)
// Every answer carries a Content-Security-Policy that allows this origin only,
// so the page can load nothing from elsewhere. Added when
// RouteContext::dashboard is set; handlers never block (the sampler's
// figures are read under its lock, copied out).
#pragma once

#include "http/route_context.h"
#include "http/router.h"

namespace inferd::http {

void AddDashboardRoutes(Router& router, const RouteContext& ctx);

}  // namespace inferd::http
