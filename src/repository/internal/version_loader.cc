#include "repository/internal/version_loader.h"

#include <algorithm>
#include <chrono>

namespace inferd::repository::internal {

int64_t EstimateFootprint(const StoredVersion& stored, const Footprint& known) {
  if (known.measured) return known.bytes;
  return kFileFactor * stored.file_bytes + kFixedOverhead;
}

int64_t EstimateLoadPeak(const StoredVersion& stored, const Footprint& known) {
  if (known.measured) return std::max(known.bytes, known.peak_growth);
  return std::max(kPeakFileFactor * stored.file_bytes + kFixedOverhead,
                  EstimateFootprint(stored, known));
}

StatusOr<ModelHandle> LoadVersion(const VersionLoadContext& context,
                                  const config::ModelConfig& config, const std::string& dir,
                                  const StoredVersion& stored, const Footprint& known,
                                  const std::shared_ptr<LoadMemory>& memory,
                                  bool defer_calibration,
                                  const std::function<int64_t()>& resident_bytes,
                                  const std::function<int64_t()>& peak_resident_bytes,
                                  InstanceCallbacks callbacks) {
  const TimePoint start = context.clock->Now();
  const int64_t rss_before = resident_bytes ? resident_bytes() : 0;
  if (resident_bytes && peak_resident_bytes) peak_resident_bytes();  // the peak starts here

  backend::LoadOptions lo;
  lo.model_path = stored.model_path;
  lo.config = config;
  lo.memory_budget = context.memory_budget;
  std::optional<scheduler::BatchCalibration> known_calibration;
  if (memory) {
    std::lock_guard<std::mutex> lock(memory->mu);
    // The variant an earlier load chose, so that this one need not time them again.
    auto earlier = config::ParseChoice<config::Variants>(memory->variant);
    if (config.variants == config::Variants::kAuto && earlier) lo.config.variants = *earlier;
    known_calibration = memory->calibration;
  }
  // The batch the queue formed last time: what precision auto judges by.
  if (known_calibration && known_calibration->calibrated && known_calibration->max_batch > 0) {
    lo.served_batch = known_calibration->max_batch;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<backend::Model> model, context.backend->Load(lo));
  if (memory) {
    const std::string chosen = model->execution_report().chosen;
    std::lock_guard<std::mutex> lock(memory->mu);
    if (config.variants == config::Variants::kAuto) memory->variant = chosen;
  }
  scheduler::ModelSpec spec;
  spec.name = config.name + ":" + std::to_string(stored.version);
  spec.version = std::to_string(stored.version);
  spec.config = config;
  spec.model = model;
  spec.known_calibration = std::move(known_calibration);
  spec.defer_calibration = defer_calibration;
  spec.quarantine = callbacks.on_hung;
  if (context.hooks_factory) {
    ASSIGN_OR_RETURN(spec.hooks, context.hooks_factory(config, dir));
  }
  if (context.placement) context.placement(config, &spec);

  Footprint f = known;
  f.file_bytes = stored.file_bytes;
  f.weight_bytes = model->WeightBytes();
  if (resident_bytes) {
    const int64_t rss_after = resident_bytes();
    f.rss_growth = std::max<int64_t>(0, rss_after - rss_before);
    const int64_t peak = peak_resident_bytes ? peak_resident_bytes() : 0;
    f.peak_growth = peak > 0 ? std::max<int64_t>(0, std::max(peak, rss_after) - rss_before) : 0;
    f.measured = true;
    f.bytes = std::max(f.weight_bytes, f.rss_growth);
  } else if (f.measured) {
    f.bytes = std::max(f.bytes, f.weight_bytes);
  } else {
    f.bytes = std::max(EstimateFootprint(stored, known), f.weight_bytes);
  }
  f.load_ms = std::chrono::duration<double, std::milli>(context.clock->Now() - start).count();

  ServedModel::Parts parts;
  parts.config = config;
  parts.version = stored.version;
  parts.dir = dir;
  parts.model = std::move(model);
  parts.queue = context.scheduler->AddModel(std::move(spec));
  parts.scheduler = context.scheduler;
  parts.memory = memory;
  parts.footprint = f;
  parts.on_release = std::move(callbacks.on_release);
  parts.on_idle = std::move(callbacks.on_idle);
  parts.successor = std::move(callbacks.successor);
  return std::make_shared<ServedModel>(std::move(parts));
}

}  // namespace inferd::repository::internal
