// The dashboard on the management port (docs/DASHBOARD.md):
//   GET /                          302 to /dashboard
//   GET /dashboard                 the page (HTML, embedded in the binary)
//   GET /dashboard/dashboard.css   its style sheet
//   GET /dashboard/dashboard.js    its script
//   GET /dashboard/state           the JSON the page reads every second
//                                  (http/dashboard_state.h; ?offset, limit,
//                                  filter, sort, series)
// The page's own files (the first four) hold no data: with --auth-keys they
// stay open, and the page asks for a key when /dashboard/state answers 401
// or 403 (http/access_guard.h, docs/SECURITY.md). Every answer carries a
// Content-Security-Policy that allows this origin only, so the page can load
// nothing from elsewhere. Added when
// the server has a dashboard::Sampler; handlers never block (the sampler's
// figures are read under its lock, copied out).
#pragma once

#include <array>
#include <string_view>

#include "dashboard/sampler.h"
#include "http/router.h"
#include "serving/services.h"

namespace inferd::http {

// The paths of the page's own files (no data), open without a key.
inline constexpr std::array<std::string_view, 4> kDashboardPagePaths = {
    "/", "/dashboard", "/dashboard/dashboard.css", "/dashboard/dashboard.js"};

void AddDashboardRoutes(Router& router, const serving::Services& services,
                        dashboard::Sampler* sampler);

}  // namespace inferd::http
