// The dashboard's one JSON document, GET /dashboard/state on the management
// port: everything the page shows, in one fetch (docs/DASHBOARD.md lists the
// fields). Models are paged on the server (the page shows `limit` at a time),
// so that a store of thousands of models costs the page and the server one
// page of rows a second. Pure functions of the repository's models and the
// sampler's figures; any thread.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "dashboard/sampler.h"
#include "repository/model_status.h"

namespace inferd::http {

struct DashboardQuery {
  size_t offset = 0;
  size_t limit = 100;         // rows; 1..1000
  std::string filter;         // substring of the name or the state (case-insensitive); "" = all
  std::string sort = "name";  // name | state | requests | rps | p99 | resident | last_used
  bool series = true;         // the rows' sparkline series
};
// From ?offset=&limit=&filter=&sort=&series=0|1; kInvalidArgument naming the bad one.
StatusOr<DashboardQuery> ParseDashboardQuery(const std::map<std::string, std::string>& query);

// {"server", "period_s", "capacity", "node": {...}, "models_total", "models_matched",
//  "states": {STATE: count}, "offset", "limit", "models": [...]}
std::string WriteDashboardState(const std::vector<repository::ModelStatus>& models,
                                const dashboard::Sampler& sampler, const DashboardQuery& query);

}  // namespace inferd::http
