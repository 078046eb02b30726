// ModelConfig: one model's config.yaml, parsed and validated, with defaults.
// Every key is described in docs/CONFIG.md; the choice fields are enums
// (choices.h), parsed here once.
//
// Parse errors name the file, the key and what was expected, e.g.
// "models/resnet/config.yaml: max_batch_size: expected an integer >= 1, got 'x'".
// Plain data; safe to copy and to read from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "config/mirror_config.h"
#include "config/choices.h"

namespace inferd::config {

struct TensorSpec {
  std::string name;
  DataType dtype = DataType::kFp32;
  Shape dims;                       // per item, without the batch dim; -1 = variable
  std::optional<double> pad_value;  // lets requests whose variable dims differ share a batch
};

struct DynamicBatchingConfig {
  int64_t max_queue_delay_us = 0;          // how long a batch may wait for more requests
  std::vector<int> preferred_batch_sizes;  // sizes worth waiting for
  // Measure each batch size at load and form only those whose cost per item
  // falls (scheduler/batch_calibration.h). false: max_batch_size and
  // preferred_batch_sizes are used as written.
  bool calibrate = true;
  // The longest batch calibration may choose (its measured latency, ms); 0:
  // no bound. A request that just misses a batch waits for it, then for its
  // own: on ResNet-50 (90 ms an item on a core) batches of 2-4 saved 3-10% per
  // item and made the closed-loop p99 1.3-1.5x the mean (docs/PERFORMANCE.md).
  int64_t max_batch_latency_ms = 100;
};

struct InstancesConfig {
  bool automatic = true;  // `instances: auto`: the core plan picks count and threads
  int count = 0;          // with automatic=false: executors this model may use at once
  int threads = 0;        // with automatic=false: intra-op threads per executor (cores per group)
};

// `preprocess:`: turns raw request bytes (an image, text) into input tensors.
struct PreprocessConfig {
  PreprocessKind kind = PreprocessKind::kNone;
  // image
  int resize = 0;       // shorter side, 0 = no resize
  int center_crop = 0;  // square crop, 0 = none
  int width = 0, height = 0;  // exact resize to width x height when both set (before crop)
  std::vector<float> mean, std;  // per channel, applied after scaling to [0,1]
  ColorOrder color = ColorOrder::kRgb;
  bool invert = false;           // 255 - pixel, e.g. white-on-black digits
  float scale = 1.0f / 255.0f;   // pixel multiplier before mean/std
  int64_t max_pixels = 64LL * 1000 * 1000;
  // text
  Tokenizer tokenizer = Tokenizer::kWordpiece;
  std::string vocab;         // vocab.txt or .model, relative to the model dir
  bool lowercase = true;
  bool strip_accents = true;
  int max_length = 128;
  bool truncation = true;  // false: text past max_length tokens answers 400 instead of being cut
};

// `postprocess:`: turns output tensors into the answer.
struct PostprocessConfig {
  PostprocessKind kind = PostprocessKind::kRaw;
  int k = 5;
  std::string labels;   // labels file, one per line, relative to the model dir
  float threshold = 0.5f;  // sigmoid multi-label cut-off
  bool apply_softmax = true;  // topk: softmax the logits first
};

struct ModelConfig {
  std::string name;                   // the model's folder name
  BackendKind backend = BackendKind::kTorchscript;
  int max_batch_size = 1;             // 1 = no batching; inputs then have no batch dim added
  DynamicBatchingConfig dynamic_batching;
  int max_queue_size = 128;           // a full queue answers 429
  int64_t request_timeout_ms = 5000;  // a request past this answers 504, queued or running
  // Share of the executors when models compete (fair sharing by measured
  // cost): a model of weight 2 gets twice the compute time of one of weight 1.
  int weight = 1;
  // A batch running longer is given up (its requests answered, its executor
  // replaced, the model quarantined). 0 = derived: 20 x the slowest batch
  // calibrated or seen, at least 10 s (60 s for a model neither calibrated
  // nor timed: a max_batch_size 1 model has one forward timed at load).
  int64_t max_execution_ms = 0;
  InstancesConfig instances;
  // `isolation: process` runs a torchscript model in worker processes
  // (backend/python/): a crash in its forward fails only its batch. A
  // `backend: python` model always runs in them.
  Isolation isolation = Isolation::kThread;
  // `worker_memory_limit: SIZE` (512M, 2G): the resident memory each worker
  // process may hold; a worker over it is killed and its batch fails (500).
  // 0 = unset: the server's --memory-budget divided by the model's workers
  // when a budget is set, else no limit.
  int64_t worker_memory_limit = 0;
  Precision precision = Precision::kFp32;
  // The largest error a reduced precision may make, relative to the largest
  // fp32 output, in (0, 1]; absent: each precision's own default (bf16 1e-2,
  // int8 5e-2: backend/torch/precision_choice.h). No effect with fp32.
  std::optional<double> precision_tolerance;
  // How the backend may run the model (choices.h).
  Variants variants = Variants::kAuto;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;    // empty: named output0, output1, ... from the model
  PreprocessConfig preprocess;
  PostprocessConfig postprocess;
  // Lifecycle (repository/): `load: eager` loads at start, `load: lazy` on the
  // first request; kServerDefault = the server's --lazy-load flag decides.
  LoadChoice load = LoadChoice::kServerDefault;
  bool pinned = false;  // never evicted under --memory-budget
  // `mirror:`: send a share of this model's requests to a candidate and
  // compare the answers (src/mirror/, docs/MIRROR.md); absent = no mirroring.
  std::optional<MirrorConfig> mirror;
};

// Parses config.yaml text. `file` is used in messages only; `name` is the model's name.
StatusOr<ModelConfig> ParseModelConfig(const std::string& yaml_text, const std::string& file,
                                       const std::string& name);
// Reads and parses a file.
StatusOr<ModelConfig> LoadModelConfig(const std::string& path, const std::string& name);

}  // namespace inferd::config
