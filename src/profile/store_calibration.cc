#include "profile/store_calibration.h"

#include <chrono>
#include <filesystem>
#include <thread>

#include "memory/allocator.h"
#include "repository/model_store.h"
#include "scheduler/batch_calibrator.h"

namespace inferd::profile {
namespace {

// Runs `work` on a fresh thread and waits: each role (load thread, executor)
// gets its own thread, as in the server, because InitExecutorThread sets up
// the calling thread's intra-op pool once.
template <typename Work>
void OnFreshThread(Work work) {
  std::thread t(std::move(work));
  t.join();
}

Status Named(const std::string& model, const std::string& message) {
  const std::string tag = "model '" + model + "'";
  if (message.find(tag) != std::string::npos) return InvalidArgument(message);
  return InvalidArgument(tag + ": " + message);
}

}  // namespace

StatusOr<StoreCalibration> CalibrateStoreModel(backend::Backend& backend,
                                               const std::string& store_dir,
                                               const config::ModelConfig& config,
                                               const CalibrationExecutor& executor,
                                               const scheduler::CalibrationOptions& options) {
  auto stored = repository::ModelStore(store_dir).Read(config.name);
  if (!stored.ok()) return Named(config.name, stored.status().message());
  if (stored->versions.empty()) {
    const auto dir = std::filesystem::path(stored->dir);
    return Named(config.name, "no version folder with a model file in " + dir.string() +
                                  " (expected " + (dir / "1" / "model.pt").string() + ")");
  }
  StoreCalibration result;
  result.version = stored->versions.back().version;
  result.executor = executor;

  backend::LoadOptions load;
  load.model_path = stored->versions.back().model_path;
  load.config = config;
  StatusOr<std::shared_ptr<backend::Model>> loaded = Internal("not loaded");
  memory::ReleaseFreeMemory();
  OnFreshThread([&] {
    backend.InitExecutorThread({}, 1);
    const auto t0 = std::chrono::steady_clock::now();
    loaded = backend.Load(load);
    result.load_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  if (!loaded.ok()) return Named(config.name, loaded.status().message());

  scheduler::BatchCalibrator::Options calibrator;
  calibrator.name = config.name + ":" + std::to_string(result.version);
  calibrator.config = config;
  calibrator.model = std::move(loaded).value();
  result.precision = calibrator.model->execution_report().precision;
  scheduler::CalibrationOptions o = options;
  if (!o.timer) o.timer = scheduler::ExecutorTimer(executor.threads);
  OnFreshThread([&] {
    backend.InitExecutorThread(executor.cores, executor.threads);
    // As the scheduler's calibration task: the calibrator's table, its clock named.
    try {
      result.calibration = scheduler::BatchCalibrator(calibrator).Calibrate(o);
      if (result.calibration.calibrated) {
        result.calibration.note += ", " + scheduler::ExecutorClockName(executor.threads);
      }
    } catch (...) {
      result.calibration = scheduler::BatchCalibration();
      result.calibration.note = "not calibrated: it threw";
    }
  });
  calibrator.model.reset();
  memory::ReleaseFreeMemory();
  return result;
}

}  // namespace inferd::profile
