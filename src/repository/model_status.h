// What the repository tells about its models: states, footprints, last use.
// Plain data, copied out of the repository under its lock (List, GetStatus);
// safe to read from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/precision_report.h"
#include "config/model_config.h"
#include "repository/version_files.h"
#include "scheduler/batch_calibration.h"

namespace inferd::repository {

// The states of Triton's repository index, per version and per model:
//   UNAVAILABLE  not loaded: never loaded, evicted, unloaded, or its load
//                failed (then `error` says why)
//   LOADING      a load is running; requests to the model wait for it
//   READY        serving
//   UNLOADING    retired: no new requests; requests already queued or running
//                finish, then its memory is freed and it becomes UNAVAILABLE
//   QUARANTINED  taken out of service because a forward was given up (the
//                scheduler's watchdog; `reason` says why): requests for it are
//                refused (503) and it is not loaded on demand; a load through
//                the management API clears it
enum class ModelState { kUnavailable, kLoading, kReady, kUnloading, kQuarantined };
std::string_view ModelStateName(ModelState state);

// How a model comes to be loaded.
//   eager    at start-up, and again on demand after an eviction
//   lazy     on its first request (and again after an eviction)
//   manual   only through the management API (`--models` did not name it, or
//            it was unloaded by hand)
enum class LoadPolicy { kEager, kLazy, kManual };
std::string_view LoadPolicyName(LoadPolicy policy);

// One version's memory, measured at load. TF Serving's Loader::EstimateResources
// contract: before the first load `bytes` is an upper-bound estimate from the
// file size (measured = false); after it, the measured figure.
struct Footprint {
  int64_t bytes = 0;         // what the memory budget counts: max(weight_bytes, rss_growth)
  int64_t weight_bytes = 0;  // parameters and buffers of the loaded module
  int64_t rss_growth = 0;    // resident memory the first load and warm-up added
  int64_t peak_growth = 0;   // the first load's peak resident memory above its start (0 = unknown)
  int64_t file_bytes = 0;    // model.pt
  double load_ms = 0;        // the last load: read, freeze, warm-up, hooks
  // Before the last load ran: it waited this long for a load thread, for
  // room (models in use held the budget) and for a first load measured alone.
  double load_wait_ms = 0;
  bool measured = false;
};

struct VersionStatus {
  int64_t version = 0;
  ModelState state = ModelState::kUnavailable;
  std::string error;      // why it is UNAVAILABLE, when its load failed
  std::string reason;     // why it is QUARANTINED
  Footprint footprint;    // kept after an unload: the next load's estimate
  bool resident = false;  // its memory is held now (READY, or UNLOADING with requests left)
  // What the scheduler measured and chose for this instance at load (or why
  // not: calibrate false, max_batch_size 1, failed); absent when not resident.
  std::optional<scheduler::BatchCalibration> calibration;
  // The precision the backend chose at load and every candidate it measured;
  // absent when not resident or when the backend had no choice (precision
  // fp32, or a backend without one).
  std::optional<backend::PrecisionReport> precision;
  // What load-time measurement was skipped for its budget; empty when nothing
  // or not resident.
  std::string load_skipped;
  // The model files in the version's folder: the one served and the
  // candidates `inferd optimize` wrote beside it (version_files.h). Read by
  // GetStatus only; List leaves it empty (a directory read per version).
  std::vector<VersionFile> files;
};

struct ModelStatus {
  std::string name;
  std::optional<config::ModelConfig> config;    // absent when config.yaml is invalid
  std::vector<VersionStatus> versions;          // ascending
  std::string error;                            // config error, or the default version's error
  std::string reason;                           // the highest QUARANTINED version's reason
  ModelState state = ModelState::kUnavailable;  // LOADING/UNLOADING while a job runs, READY
                                                // when some version is ready
  LoadPolicy load = LoadPolicy::kEager;
  bool pinned = false;
  int64_t resident_bytes = 0;  // footprints of the resident versions
  int in_flight = 0;           // requests queued or running on its versions
  // Wall-clock time of the last request resolved to it; empty when never used.
  std::optional<std::chrono::system_clock::time_point> last_used;
};

}  // namespace inferd::repository
