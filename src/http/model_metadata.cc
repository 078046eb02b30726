#include "http/model_metadata.h"

#include "common/json_writer.h"

namespace inferd::http {
namespace {

using repository::ModelState;
using repository::ModelStatus;
using repository::VersionStatus;

void WriteSpecs(JsonWriter& w, const std::vector<config::TensorSpec>& specs) {
  w.BeginArray();
  for (const auto& spec : specs) {
    w.BeginObject();
    w.Key("name").String(spec.name);
    w.Key("datatype").String(DataTypeName(spec.dtype));
    w.Key("shape").BeginArray().Int(-1);
    for (int64_t d : spec.dims) w.Int(d);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

const VersionStatus* FindVersion(const ModelStatus& status, int64_t version) {
  for (const auto& v : status.versions) {
    if (v.version == version) return &v;
  }
  return nullptr;
}

Status UnknownVersion(const ModelStatus& status, int64_t version) {
  std::string known;
  for (const auto& v : status.versions)
    known += (known.empty() ? "" : ", ") + std::to_string(v.version);
  return NotFound("model '" + status.name + "' has no version " + std::to_string(version) +
                  "; versions: " + (known.empty() ? "none" : known));
}

// Highest ready version, else the highest; null when there are none.
const VersionStatus* DefaultVersion(const ModelStatus& status) {
  const VersionStatus* best = nullptr;
  for (const auto& v : status.versions) {
    if (v.state == ModelState::kReady) best = &v;
  }
  if (!best && !status.versions.empty()) best = &status.versions.back();
  return best;
}

}  // namespace

std::string WriteV2ServerMetadata() {
  JsonWriter w;
  w.BeginObject();
  w.Key("name").String(kServerName);
  w.Key("version").String(kServerVersion);
  w.Key("extensions").BeginArray().String("binary_tensor_data").String("model_repository");
  w.EndArray();
  w.EndObject();
  return w.Take();
}

StatusOr<std::string> WriteV2ModelMetadata(const ModelStatus& status,
                                           std::optional<int64_t> version) {
  const VersionStatus* chosen = nullptr;
  if (version) {
    chosen = FindVersion(status, *version);
    if (!chosen) return UnknownVersion(status, *version);
  }
  JsonWriter w;
  w.BeginObject();
  w.Key("name").String(status.name);
  w.Key("versions").BeginArray();
  for (const auto& v : status.versions) {
    if (!chosen || chosen == &v) w.String(std::to_string(v.version));
  }
  w.EndArray();
  w.Key("platform").String("pytorch_torchscript");
  if (status.config) {
    w.Key("max_batch_size").Int(status.config->max_batch_size);
    w.Key("inputs");
    WriteSpecs(w, status.config->inputs);
    w.Key("outputs");
    WriteSpecs(w, status.config->outputs);
  } else {
    w.Key("inputs").BeginArray().EndArray();
    w.Key("outputs").BeginArray().EndArray();
  }
  const VersionStatus* shown = chosen ? chosen : DefaultVersion(status);
  w.Key("state").String(shown ? repository::ModelStateName(shown->state)
                              : repository::ModelStateName(ModelState::kUnloaded));
  std::string error = shown && !shown->error.empty() ? shown->error : status.error;
  if (!error.empty()) w.Key("error").String(error);
  w.EndObject();
  return w.Take();
}

std::string WriteV2RepositoryIndex(const std::vector<ModelStatus>& models, bool ready_only) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& m : models) {
    if (m.versions.empty() && !ready_only) {
      w.BeginObject();
      w.Key("name").String(m.name);
      w.Key("version").String("");
      w.Key("state").String(repository::ModelStateName(ModelState::kUnloaded));
      w.Key("reason").String(m.error);
      w.EndObject();
    }
    for (const auto& v : m.versions) {
      if (ready_only && v.state != ModelState::kReady) continue;
      w.BeginObject();
      w.Key("name").String(m.name);
      w.Key("version").String(std::to_string(v.version));
      w.Key("state").String(repository::ModelStateName(v.state));
      w.Key("reason").String(v.error);
      w.EndObject();
    }
  }
  w.EndArray();
  return w.Take();
}

std::string WriteTorchServeModelList(const std::vector<ModelStatus>& models) {
  JsonWriter w;
  w.BeginObject();
  w.Key("models").BeginArray();
  for (const auto& m : models) {
    w.BeginObject();
    w.Key("modelName").String(m.name);
    w.Key("modelUrl").String(m.name);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

StatusOr<std::string> WriteTorchServeDescribe(const ModelStatus& status,
                                              std::optional<int64_t> version, bool all) {
  std::vector<const VersionStatus*> shown;
  if (version) {
    const VersionStatus* v = FindVersion(status, *version);
    if (!v) return UnknownVersion(status, *version);
    shown.push_back(v);
  } else if (all) {
    for (const auto& v : status.versions) shown.push_back(&v);
  } else if (const VersionStatus* v = DefaultVersion(status)) {
    shown.push_back(v);
  }
  JsonWriter w;
  w.BeginArray();
  auto write_one = [&](const VersionStatus* v) {
    w.BeginObject();
    w.Key("modelName").String(status.name);
    w.Key("modelVersion").String(v ? std::to_string(v->version) : "");
    w.Key("modelUrl").String(status.name);
    if (status.config) {
      const config::ModelConfig& c = *status.config;
      w.Key("runtime").String(c.backend);
      w.Key("batchSize").Int(c.max_batch_size);
      w.Key("maxBatchDelay")
          .Double(static_cast<double>(c.dynamic_batching.max_queue_delay_us) / 1000.0);
      w.Key("maxQueueSize").Int(c.max_queue_size);
      w.Key("responseTimeout").Double(static_cast<double>(c.request_timeout_ms) / 1000.0);
      w.Key("instances")
          .String(c.instances.automatic ? std::string("auto")
                                        : std::to_string(c.instances.count) + " x " +
                                              std::to_string(c.instances.threads) + " threads");
      w.Key("precision").String(c.precision);
    }
    w.Key("status").String(repository::ModelStateName(v ? v->state : ModelState::kUnloaded));
    std::string error = v && !v->error.empty() ? v->error : status.error;
    if (!error.empty()) w.Key("error").String(error);
    w.EndObject();
  };
  if (shown.empty()) write_one(nullptr);
  for (const VersionStatus* v : shown) write_one(v);
  w.EndArray();
  return w.Take();
}

}  // namespace inferd::http
