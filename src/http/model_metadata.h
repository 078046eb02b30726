// JSON documents describing models and the server: v2 server and model
// metadata (what serving/model_info.h gives gRPC too), the v2 repository
// index, and TorchServe's list / describe. Pure functions of
// repository::ModelStatus; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "repository/model_repository.h"
#include "serving/model_info.h"

namespace inferd::http {

using serving::kServerName;
using serving::kServerVersion;

// {"name", "version", "extensions"}
std::string WriteV2ServerMetadata();

// {"name", "versions", "platform", "inputs", "outputs"[, "state", "error"], "batch_calibration"}
// (the scheduler's table for the version shown, null when it is not resident): shapes carry
// a leading -1 (the batch dim; every inferd model takes one). kNotFound for an unknown version.
StatusOr<std::string> WriteV2ModelMetadata(const repository::ModelStatus& status,
                                           std::optional<int64_t> version);

// [{"name", "version", "state", "reason"}] for every version of every model (Triton's
// fields), plus the cache's: "bytes" (resident now), "footprint" {bytes, weight_bytes,
// rss_growth_bytes, file_bytes, load_ms, measured}, "load", "pinned", "last_used" (ISO
// 8601 UTC or null).
std::string WriteV2RepositoryIndex(const std::vector<repository::ModelStatus>& models,
                                   bool ready_only);

// TorchServe: {"models": [{"modelName", "modelUrl"}]}, plus the cache's "state", "load",
// "pinned", "residentBytes", "footprintBytes", "inFlight", "lastUsed" per model.
std::string WriteTorchServeModelList(const std::vector<repository::ModelStatus>& models);

// TorchServe describe (with "batch_calibration" as above per version): a list with one object
// per version shown: `version` set -> that one,
// `all` -> every version, else the default (highest ready, else highest).
StatusOr<std::string> WriteTorchServeDescribe(const repository::ModelStatus& status,
                                              std::optional<int64_t> version, bool all);

}  // namespace inferd::http
