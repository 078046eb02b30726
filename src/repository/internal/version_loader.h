// Loads one model version into a servable ModelHandle and measures what it
// costs: the backend's load and warm-up, the pipeline hooks, the scheduler
// queue, and the footprint (model_status.h).
//
// The footprint is measured as the growth of the process's resident memory
// across the whole load when `resident_bytes` is given; the caller makes sure
// no other load runs meanwhile (otherwise their growth would be counted here).
// Without it, the known footprint is kept (its weights refreshed).
// `memory` (may be null) supplies and receives what earlier loads of the file
// found; `defer_calibration` asks the scheduler to calibrate only once the
// model's requests queue (ModelSpec::defer_calibration).
// Thread-safety: a free function; the backend and scheduler it calls are
// thread-safe. Runs on a load thread and may take seconds.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "repository/internal/load_memory.h"
#include "repository/model_repository.h"
#include "repository/model_store.h"

namespace inferd::repository::internal {

struct VersionLoadContext {
  Clock* clock = Clock::Real();  // times the load (Footprint::load_ms)
  backend::Backend* backend = nullptr;
  scheduler::Scheduler* scheduler = nullptr;
  HooksFactory hooks_factory;
  Placement placement;
  int64_t memory_budget = 0;  // --memory-budget (0 = none): LoadOptions::memory_budget
};

// The budget's estimate before a load: the measured footprint when there is
// one, else an upper bound from the file size (kFileFactor x model.pt +
// kFixedOverhead: the measured example models and generated models stay below it).
inline constexpr int64_t kFileFactor = 2;
inline constexpr int64_t kFixedOverhead = int64_t{1} << 20;
int64_t EstimateFootprint(const StoredVersion& stored, const Footprint& known);

// What a load holds at its peak, reserved while it runs: the file's, the
// unfrozen module's and the variants' copies of the weights live together
// (measured 4.7-4.8x the weights for the generated MLPs, 3.7-4.6x their
// footprint). The first load's measured peak when there is one, else
// kPeakFileFactor x model.pt + kFixedOverhead; never below the footprint.
inline constexpr int64_t kPeakFileFactor = 5;
int64_t EstimateLoadPeak(const StoredVersion& stored, const Footprint& known);

// What the instance calls back into the repository with (ServedModel::Parts).
struct InstanceCallbacks {
  std::function<void()> on_release;
  std::function<void()> on_idle;
  std::function<ModelHandle()> successor;
  // ModelSpec::quarantine: the scheduler gave up a forward of the instance.
  std::function<void(std::string reason)> on_hung;
};

StatusOr<ModelHandle> LoadVersion(const VersionLoadContext& context,
                                  const config::ModelConfig& config, const std::string& dir,
                                  const StoredVersion& stored, const Footprint& known,
                                  const std::shared_ptr<LoadMemory>& memory,
                                  bool defer_calibration,
                                  const std::function<int64_t()>& resident_bytes,
                                  const std::function<int64_t()>& peak_resident_bytes,
                                  InstanceCallbacks callbacks);

}  // namespace inferd::repository::internal
