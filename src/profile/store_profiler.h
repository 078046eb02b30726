// Measures what `inferd plan` needs of each model of a model store: the CPU
// time of one request on one core (core_ms) and the memory of one loaded copy.
//
// For each model (a folder of the store holding config.yaml, as the server's
// repository reads it) the default, highest version is loaded through the
// Backend interface on the calling thread, which first gets a one-thread
// intra-op pool (Backend::InitExecutorThread({}, 1)), so that the load's
// warm-up and every forward run on this one thread. Then `warmup_runs`
// unmeasured and `runs` measured batch-1 forwards on generated inputs
// (profile_inputs.h). core_ms is the median of the measured forwards' thread
// CPU time (CLOCK_THREAD_CPUTIME_ID): CPU, not wall, so other processes on the
// machine do not inflate it; the process's CPU time per forward is recorded
// beside it, to show whether work escaped to other threads.
//
// With `batched`, the model's batch sizes are also calibrated the way the
// server does at load (scheduler/batch_calibration.h: sizes 1, 2, 4, ...
// max_batch_size, each timed in thread CPU time, keeping its fastest call;
// a size is chosen when it saves 5% per item): core_ms_batched is the cost
// per item at the largest chosen size, what a request costs when the queue
// is full enough to form those batches, as it is at peak.
//
// Memory: the resident memory (VmRSS) the load and the runs added, with free
// heap handed back to the system (memory::ReleaseFreeMemory) before the load
// so that an earlier model's freed pages are not reused unseen; and
// Model::WeightBytes when the backend states it. The plan's figure is the
// larger: a copy holds at least its weights, and in a server also what its
// frozen graph and forward's working memory keep resident.
//
// Thread-compatible: call from one thread at a time (the measurements read
// process-wide counters). The backend is borrowed, not owned.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/status.h"

namespace inferd::profile {

struct ProfileOptions {
  // Forwards before measuring: libtorch's graph executor profiles and
  // optimises the graph on the first calls.
  int warmup_runs = 3;
  // Measured forwards; core_ms is their median (robust to a stray slow run).
  int runs = 20;
  // Length of -1 dims; 0 = DefaultVariableDim (the text tokenizer's max_length, else 1).
  int64_t variable_dim = 0;
  // Also calibrate the batch sizes (core_ms_batched, batch).
  bool batched = false;
  // Timed passes over the batch sizes when batched; each size keeps its fastest call.
  int batched_rounds = 3;
};

struct ModelProfile {
  std::string name;
  int64_t version = 0;
  std::string inputs;          // "input [1,3,224,224]", what was fed
  double core_ms = 0;          // median thread CPU ms of one batch-1 forward
  double core_ms_min = 0;      // fastest measured forward
  double core_ms_max = 0;      // slowest measured forward
  double process_cpu_ms = 0;   // process CPU ms per measured forward (all threads)
  int batch = 1;               // with batched: the largest size calibration chose
  double core_ms_batched = 0;  // with batched: thread CPU ms per item at `batch`
  int64_t weight_bytes = 0;    // Model::WeightBytes; 0 when the backend cannot tell
  int64_t resident_bytes = 0;  // VmRSS added by the load and the runs (0 if it fell)
  int64_t memory_bytes = 0;    // max(weight_bytes, resident_bytes): the plan's figure
};

// The models of DIR: sub-folders holding config.yaml, sorted by name.
// kNotFound when DIR is not a directory or holds no model.
StatusOr<std::vector<std::string>> ListStoreModels(const std::string& store_dir);

// Profiles one model. Errors (bad config, no version, a load or a forward that
// fails) are kInvalidArgument and name the model.
StatusOr<ModelProfile> ProfileModel(backend::Backend& backend, const std::string& store_dir,
                                    const std::string& model, const ProfileOptions& options);

// Profiles `models` in order, calling `done` after each success. The first
// model is loaded and run once, unmeasured, before any measurement, so that
// libtorch's one-time start-up (thread team, kernel caches) is charged to no
// model. Every model is tried; the error lists every failure, one a line.
StatusOr<std::vector<ModelProfile>> ProfileModels(
    backend::Backend& backend, const std::string& store_dir, const std::vector<std::string>& models,
    const ProfileOptions& options, const std::function<void(const ModelProfile&)>& done = {});

}  // namespace inferd::profile
