// What both protocols tell about the server and its models: the v2 server
// metadata and a model's v2 metadata, as native structures that http/ writes
// as JSON and grpc/ as protobuf, plus the version choices that TorchServe's
// describe shares. Pure functions of repository::ModelStatus; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "repository/model_repository.h"

namespace inferd::serving {

inline constexpr const char* kServerName = "inferd";
inline constexpr const char* kServerVersion = "0.1.0";
inline constexpr const char* kPlatform = "pytorch_torchscript";

// The v2 protocol extensions inferd implements.
std::vector<std::string> ServerExtensions();

struct TensorMetadata {
  std::string name;
  DataType datatype = DataType::kFp32;
  std::vector<int64_t> shape;  // with a leading -1: the batch dim (every inferd model takes one)
};

struct ModelMetadata {
  std::string name;
  std::vector<int64_t> versions;  // all, or the one asked for
  std::string platform = kPlatform;
  bool has_config = false;  // false: config.yaml is invalid (see error); no tensors listed
  int max_batch_size = 0;
  std::vector<TensorMetadata> inputs;
  std::vector<TensorMetadata> outputs;
  repository::ModelState state = repository::ModelState::kUnavailable;  // of the version shown
  std::string error;  // why that version (or the config) failed; may be empty
  std::string reason;  // why that version is QUARANTINED; empty otherwise
  // The shown version's batch calibration; absent when it is not resident.
  std::optional<scheduler::BatchCalibration> calibration;
  // The shown version's precision choice; absent when it is not resident or
  // the backend had no choice.
  std::optional<backend::PrecisionReport> precision;
  // The shown version's load-time measurement skipped for its budget.
  std::string load_skipped;
  // The model files in the shown version's folder (the served one and the
  // candidates of `inferd optimize`); empty when the status has none listed.
  std::vector<repository::VersionFile> candidates;
};

// The metadata of `version` (empty: of the default version, with every
// version listed). kNotFound for an unknown version.
StatusOr<ModelMetadata> DescribeModel(const repository::ModelStatus& status,
                                      std::optional<int64_t> version);

// One row of the v2 repository index: Triton's fields, then the model cache's.
struct IndexEntry {
  std::string name;
  std::string version;  // "" for a model with no version (its config is invalid)
  repository::ModelState state = repository::ModelState::kUnavailable;
  std::string reason;  // why it is QUARANTINED, or why it failed; may be empty
  int64_t bytes = 0;   // resident now (0 when not in memory)
  std::optional<repository::Footprint> footprint;  // absent for a model with no version
  repository::LoadPolicy load = repository::LoadPolicy::kEager;
  bool pinned = false;
  std::optional<std::chrono::system_clock::time_point> last_used;  // of the model
};
// A row per version of every model (`ready_only`: only ready versions).
std::vector<IndexEntry> RepositoryIndex(const std::vector<repository::ModelStatus>& models,
                                        bool ready_only);

// Null when `status` has no such version.
const repository::VersionStatus* FindVersion(const repository::ModelStatus& status,
                                             int64_t version);
// kNotFound "model 'm' has no version 5; versions: 1, 2".
Status UnknownVersion(const repository::ModelStatus& status, int64_t version);
// The highest ready version, else the highest; null when there are none.
const repository::VersionStatus* DefaultVersion(const repository::ModelStatus& status);

}  // namespace inferd::serving
