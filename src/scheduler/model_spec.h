// ModelSpec, ModelHooks, ExecutorSpec: what a model version and an executor
// are to the scheduler. The ground floor of scheduler/: plain structs that
// the queue, the runner and the scheduler share, and that callers outside
// (repository/, pipeline/) fill in without seeing the scheduler's machinery.
//
// Thread-safety: plain values, immutable once handed to Scheduler::AddModel.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/status.h"
#include "config/model_config.h"
#include "journal/forward_journal.h"
#include "scheduler/batch_calibration.h"
#include "scheduler/inference_request.h"

namespace inferd::scheduler {

struct ExecutorSpec {
  std::vector<int> cores;  // OS cpu ids; empty = unpinned
  int num_threads = 1;     // intra-op threads (== cores.size() when pinned)
};

// Pipeline hooks run on the executor thread; any may be empty.
struct ModelHooks {
  // Turns request.raw into request.inputs (one item per raw payload).
  std::function<Status(InferenceRequest&)> preprocess;
  // Optional, beside preprocess, for a model with one input of fixed dims
  // (an image model): the same work, but the request's items are written
  // straight into `dst`, raw.size() rows of the input's item bytes, a slice
  // of the batch tensor the runner owns; request.raw is cleared and
  // request.inputs left empty. The batch then needs no tensor per request
  // and no assembly copy (the in-process ceiling works this way too).
  std::function<Status(InferenceRequest&, std::byte* dst, size_t dst_bytes)> preprocess_into;
  // Fills response.labels (or rewrites outputs) for a whole request.
  std::function<Status(InferenceResponse&)> postprocess;
};

struct ModelSpec {
  std::string name;     // "model:version", used in messages
  std::string version;  // metrics label `version` (the model label is config.name)
  config::ModelConfig config;
  std::shared_ptr<backend::Model> model;
  ModelHooks hooks;
  int max_concurrency = 0;        // executors that may run this model at once; 0 = all
  std::vector<int> executor_ids;  // executors that may run it; empty = all
  // A calibration measured at an earlier load of the same model file (the
  // repository keeps it across evictions): adopted as is, nothing measured.
  std::optional<BatchCalibration> known_calibration;
  // Calibrate in the background once the model's requests queue (a batch is
  // taken while others wait) instead of blocking AddModel: a load on demand
  // must not make its first request, nor other models' requests (calibration
  // runs on an executor), wait for it. Until then the config's sizes apply.
  bool defer_calibration = false;
  // Called once, from the scheduler's watchdog thread, when a batch of this
  // model ran past its max_execution_ms and was given up (the reason says
  // how long it ran): the repository quarantines the version. May be empty.
  std::function<void(const std::string& reason)> quarantine;
  // Marks each forward's start and end in the crash journal (empty: none).
  journal::ForwardMark forward_mark;
};

}  // namespace inferd::scheduler
