#include "profile/store_profiler.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "config/model_config.h"
#include "memory/allocator.h"
#include "profile/profile_inputs.h"
#include "repository/model_store.h"
#include "scheduler/batch_calibration.h"

namespace inferd::profile {
namespace fs = std::filesystem;

namespace {

double CpuMs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Prefixes "model 'x': " unless the message already names the model.
Status Named(const std::string& model, const Status& s) {
  const std::string tag = "model '" + model + "'";
  if (s.message().find(tag) != std::string::npos) return InvalidArgument(s.message());
  return InvalidArgument(tag + ": " + s.message());
}

// Calibrates the batch sizes as the server does at load, in thread CPU time.
Status CalibrateBatches(backend::Model& model, const config::ModelConfig& config,
                        int64_t variable_dim, int rounds, ModelProfile* p) {
  scheduler::BatchCalibration calibration;
  std::vector<std::vector<NamedTensor>> inputs;
  for (int b : scheduler::CalibrationLadder(config.max_batch_size)) {
    ASSIGN_OR_RETURN(auto in, MakeProfileInputs(config, variable_dim, b));
    inputs.push_back(std::move(in));
    calibration.sizes.push_back({b, 0, 0, false});
  }
  const scheduler::CallTimer timer = scheduler::ThreadCpuTimer();
  for (int r = -1; r < std::max(rounds, 1); ++r) {  // round -1 warms each size up
    for (size_t i = 0; i < inputs.size(); ++i) {
      Status status;
      const double ms = timer([&] { status = model.Execute(inputs[i]).status(); });
      if (!status.ok()) {
        return InvalidArgument("a forward of batch " + std::to_string(calibration.sizes[i].batch) +
                               " on generated inputs failed: " + status.message());
      }
      double& best = calibration.sizes[i].latency_ms;
      if (r >= 0 && (best == 0 || ms < best)) best = ms;
    }
  }
  scheduler::ChooseBatchSizes(
      scheduler::CalibrationOptions().min_gain,
      static_cast<double>(config.dynamic_batching.max_batch_latency_ms), &calibration);
  for (const auto& s : calibration.sizes) {
    if (s.batch == calibration.max_batch) {
      p->batch = s.batch;
      p->core_ms_batched = s.ms_per_item;
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<std::string>> ListStoreModels(const std::string& store_dir) {
  std::error_code ec;
  if (!fs::is_directory(store_dir, ec)) {
    return NotFound("model store '" + store_dir + "' is not a directory");
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(store_dir, ec)) {
    if (entry.is_directory() && fs::exists(entry.path() / "config.yaml")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) {
    return NotFound("model store '" + store_dir + "' holds no model (no <model>/config.yaml)");
  }
  return names;
}

StatusOr<ModelProfile> ProfileModel(backend::Backend& backend, const std::string& store_dir,
                                    const std::string& model, const ProfileOptions& options) {
  if (options.runs < 1 || options.warmup_runs < 0) {
    return InvalidArgument("profile runs must be >= 1 and warm-up runs >= 0");
  }
  const fs::path dir = fs::path(store_dir) / model;
  auto config = config::LoadModelConfig((dir / "config.yaml").string(), model);
  if (!config.ok()) return Named(model, config.status());
  ModelProfile p;
  p.name = model;
  // The server's default version: the highest one holding the backend's model file.
  auto stored = repository::ModelStore(store_dir).Read(model);
  if (!stored.ok()) return Named(model, stored.status());
  if (stored->versions.empty()) {
    return InvalidArgument("model '" + model + "': no version folder with a model file in " +
                           dir.string() + " (expected e.g. " + (dir / "1" / "model.pt").string() +
                           ")");
  }
  p.version = stored->versions.back().version;
  const int64_t variable_dim =
      options.variable_dim > 0 ? options.variable_dim : DefaultVariableDim(*config);
  auto inputs = MakeProfileInputs(*config, variable_dim);
  if (!inputs.ok()) return inputs.status();
  for (const auto& in : *inputs) {
    p.inputs += (p.inputs.empty() ? "" : ", ") + in.name + " " + ShapeToString(in.tensor.shape());
  }

  backend.InitExecutorThread({}, 1);
  memory::ReleaseFreeMemory();
  const int64_t resident_before = ResidentBytes();
  backend::LoadOptions load;
  load.model_path = stored->versions.back().model_path;
  load.config = *config;
  auto loaded = backend.Load(load);
  if (!loaded.ok()) return Named(model, loaded.status());
  std::shared_ptr<backend::Model> m = std::move(loaded).value();

  std::vector<double> cpu_ms;
  const int total = options.warmup_runs + options.runs;
  double process_start = 0;
  for (int i = 0; i < total; ++i) {
    if (i == options.warmup_runs) process_start = CpuMs(CLOCK_PROCESS_CPUTIME_ID);
    const double t0 = CpuMs(CLOCK_THREAD_CPUTIME_ID);
    auto out = m->Execute(*inputs);
    const double t1 = CpuMs(CLOCK_THREAD_CPUTIME_ID);
    if (!out.ok()) {
      return Named(model, InvalidArgument("a forward on generated inputs (" + p.inputs +
                                          ") failed: " + out.status().message()));
    }
    if (i >= options.warmup_runs) cpu_ms.push_back(t1 - t0);
  }
  p.process_cpu_ms = (CpuMs(CLOCK_PROCESS_CPUTIME_ID) - process_start) / options.runs;
  // What the load freed (the unfrozen module, the variants not chosen) and the
  // forwards' activations go back to the system first: in a server the heap
  // reuses them for the next load and the next request, they are not this copy's.
  memory::ReleaseFreeMemory();
  p.resident_bytes = std::max<int64_t>(0, ResidentBytes() - resident_before);
  p.core_ms = Median(cpu_ms);
  p.core_ms_min = *std::min_element(cpu_ms.begin(), cpu_ms.end());
  p.core_ms_max = *std::max_element(cpu_ms.begin(), cpu_ms.end());
  p.memory_bytes = std::max(p.weight_bytes, p.resident_bytes);
  p.core_ms_batched = p.core_ms;
  if (options.batched && config->max_batch_size > 1) {
    Status s = CalibrateBatches(*m, *config, variable_dim, options.batched_rounds, &p);
    if (!s.ok()) return Named(model, s);
  }
  m.reset();
  memory::ReleaseFreeMemory();
  return p;
}

StatusOr<std::vector<ModelProfile>> ProfileModels(
    backend::Backend& backend, const std::string& store_dir, const std::vector<std::string>& models,
    const ProfileOptions& options, const std::function<void(const ModelProfile&)>& done) {
  if (!models.empty()) {
    ProfileOptions primer = options;
    primer.runs = 1;
    primer.warmup_runs = 0;
    // Only start-up matters here; a failure is reported by the measured run below.
    (void)ProfileModel(backend, store_dir, models.front(), primer);
  }
  std::vector<ModelProfile> profiles;
  std::string errors;
  for (const auto& name : models) {
    auto p = ProfileModel(backend, store_dir, name, options);
    if (!p.ok()) {
      errors += (errors.empty() ? "" : "\n") + p.status().message();
      continue;
    }
    if (done) done(*p);
    profiles.push_back(std::move(p).value());
  }
  if (!errors.empty()) return InvalidArgument(errors);
  return profiles;
}

}  // namespace inferd::profile
