// The model cache's series in /metrics, looked up once:
//   inferd_model_cache_requests_total{result=hit|miss}  a request found its model
//                                  READY (hit) or waited for a load (miss)
//   inferd_model_loads_total{outcome=ok|failed|no_room}  loads of a model (all versions)
//   inferd_model_evictions_total   models unloaded to make room under the budget
//   inferd_model_load_seconds      histogram of one version's load: read, freeze,
//                                  warm-up, hooks (the cold-start cost)
//   inferd_models_loaded           versions READY now
//   inferd_model_resident_bytes    footprints of the versions in memory now
//   inferd_model_memory_budget_bytes  --memory-budget (0 = none)
// Thread-safety: the series are atomics; any thread.
#pragma once

#include "metrics/registry.h"

namespace inferd::repository::internal {

struct CacheMetrics {
  explicit CacheMetrics(metrics::Registry& registry);

  metrics::Counter* hits;
  metrics::Counter* misses;
  metrics::Counter* loads_ok;
  metrics::Counter* loads_failed;
  metrics::Counter* loads_no_room;
  metrics::Counter* evictions;
  metrics::Histogram* load_seconds;
  metrics::Gauge* loaded;
  metrics::Gauge* resident_bytes;
  metrics::Gauge* budget_bytes;
};

}  // namespace inferd::repository::internal
