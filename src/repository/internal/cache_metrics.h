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
//   inferd_model_outside_bytes     resident memory above the server's base that
//                                  no footprint accounts for; the budget carries it
//   inferd_model_cache_releases_total  times the backend's caches were dropped for it
//   inferd_model_quarantines_total  versions quarantined (a forward was given up)
//   inferd_model_quarantined{model,version}  1 while quarantined, 0 once loaded again
//                                  (kept when the model's other series go)
//
// A model's own series (label model="<name>": requests, latencies, queue depth,
// rejections, batch sizes, calibration; about 110 lines of /metrics per model)
// are removed by RemoveModelSeries once no version of the model is in memory
// and no load of it is under way. Before, every model ever loaded kept its
// series until exit: 5.5 KiB of live heap per model (heaptrack), and 26 KiB
// of RssAnon per model after unloading 100 MLPs (docs/performance/model-cache.md, "Model
// cache"). The choice this makes for Prometheus: an unloaded model's series
// go stale; at its next load they start again from 0, which Prometheus reads
// as a counter reset (rate() and increase() handle it). Sums over models that
// come and go should be taken with increase() or rate(), not raw values.
// Thread-safety: the series are atomics; any thread.
#pragma once

#include <string>
#include <vector>

#include "metrics/registry.h"

namespace inferd::repository::internal {

// Families labelled with a model that RemoveModelSeries keeps: the core plan's
// inferd_model_max_concurrency{model}, exported once at start-up for every
// model of the store, loaded or not.
inline const std::vector<std::string>& KeptModelFamilies() {
  static const std::vector<std::string> kept = {"inferd_model_max_concurrency",
                                                "inferd_model_quarantined"};
  return kept;
}

// Removes every series labelled model="<model>" except those of
// KeptModelFamilies(); returns how many.
inline size_t RemoveModelSeries(metrics::Registry& registry, const std::string& model) {
  return registry.RemoveSeries("model", model, KeptModelFamilies());
}

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
  metrics::Gauge* outside_bytes;
  metrics::Counter* cache_releases;
  metrics::Counter* quarantines;
};

}  // namespace inferd::repository::internal
