#include "repository/internal/cache_metrics.h"

namespace inferd::repository::internal {
namespace {

metrics::Counter* Requests(metrics::Registry& r, const char* result) {
  return &r.GetCounter("inferd_model_cache_requests_total",
                       "requests that found their model READY (hit) or waited for its load (miss)",
                       {{"result", result}});
}

metrics::Counter* Loads(metrics::Registry& r, const char* outcome) {
  return &r.GetCounter("inferd_model_loads_total",
                       "model loads by outcome (no_room: the memory budget could not make room)",
                       {{"outcome", outcome}});
}

}  // namespace

CacheMetrics::CacheMetrics(metrics::Registry& r)
    : hits(Requests(r, "hit")),
      misses(Requests(r, "miss")),
      loads_ok(Loads(r, "ok")),
      loads_failed(Loads(r, "failed")),
      loads_no_room(Loads(r, "no_room")),
      evictions(&r.GetCounter("inferd_model_evictions_total",
                              "models unloaded to make room under the memory budget")),
      load_seconds(&r.GetHistogram("inferd_model_load_seconds",
                                   "time to load one model version (read, freeze, warm-up, hooks)",
                                   {}, metrics::LatencyBuckets())),
      loaded(&r.GetGauge("inferd_models_loaded", "model versions READY")),
      resident_bytes(&r.GetGauge("inferd_model_resident_bytes",
                                 "measured footprints of the model versions in memory")),
      budget_bytes(&r.GetGauge("inferd_model_memory_budget_bytes",
                               "--memory-budget in bytes (0 = no budget)")),
      outside_bytes(&r.GetGauge("inferd_model_outside_bytes",
                                "resident memory above the server's base that no model's "
                                "footprint accounts for (caches, free lists, activations); "
                                "the memory budget carries it")),
      cache_releases(
          &r.GetCounter("inferd_model_cache_releases_total",
                        "times the backend's caches (Backend::ReleaseCaches) were dropped "
                        "because memory outside the models' footprints grew")),
      quarantines(&r.GetCounter("inferd_model_quarantines_total",
                                "model versions quarantined because a forward was given up")) {}

}  // namespace inferd::repository::internal
