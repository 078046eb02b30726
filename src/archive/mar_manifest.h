// MarManifest: what an unpacked TorchServe archive says about its model
// (MAR-INF/MANIFEST.json and the model-config.yaml it names), and the inferd
// config.yaml that serves it.
//
// Handlers: `image_classifier` with a TorchScript serialized file and no model
// file runs natively (the image pipeline and top-5 labels, no Python); any
// other handler (a handler.py, `module:function`, the other default names)
// runs in handler processes (`backend: python`, share/inferd/python/).
// Pure functions apart from reading the files named; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace inferd::archive {

// What the archive asks for and what POST /models may change (TorchServe's
// batch_size, max_batch_delay, initial_workers, response_timeout); unset:
// the archive's model-config.yaml, then TorchServe's defaults.
struct ServingSettings {
  std::optional<int> batch_size;
  std::optional<int64_t> max_batch_delay_ms;
  std::optional<int> workers;
  std::optional<int64_t> response_timeout_s;
  // inferd's own key in model-config.yaml, `workerMemoryLimit: 1G`: each
  // handler process's resident memory (config `worker_memory_limit`).
  std::optional<int64_t> worker_memory_limit;
};

struct MarManifest {
  std::string model_name;
  std::string model_version;
  std::string handler;          // "handler.py", "image_classifier", "mod:fn"
  std::string serialized_file;  // may be empty
  std::string model_file;       // an eager model's class, may be empty
  std::string requirements_file;
  ServingSettings settings;  // from model-config.yaml
};

// Reads `unpacked_dir`/MAR-INF/MANIFEST.json and the config file it names.
// kInvalidArgument naming the file and key: no manifest, not JSON, no
// handler, a file it names missing from the archive.
StatusOr<MarManifest> ReadMarManifest(const std::string& unpacked_dir);

// True when inferd runs this handler itself (no Python).
bool RunsNatively(const MarManifest& manifest);

// The config.yaml text for the model; `overrides` win over the manifest's
// settings. `labels_file`: the labels file written beside it (native image
// classifier), empty when there is none.
std::string WriteServingConfig(const MarManifest& manifest, const ServingSettings& overrides,
                               const std::string& labels_file);

// index_to_name.json ({"0": "tench"} or {"0": ["n01440764", "tench"]}: the
// last element, as TorchServe reads it) as a labels file, one per line in
// index order; kInvalidArgument when it is not such an object.
StatusOr<std::string> LabelsFromIndexToName(const std::string& json_path);

}  // namespace inferd::archive
