#include "http/model_metadata.h"

#include "common/json_writer.h"

namespace inferd::http {
namespace {

using repository::ModelState;
using repository::ModelStatus;
using repository::VersionStatus;
using serving::DefaultVersion;
using serving::FindVersion;
using serving::UnknownVersion;

void WriteSpecs(JsonWriter& w, const std::vector<serving::TensorMetadata>& specs) {
  w.BeginArray();
  for (const auto& spec : specs) {
    w.BeginObject();
    w.Key("name").String(spec.name);
    w.Key("datatype").String(DataTypeName(spec.datatype));
    w.Key("shape").BeginArray();
    for (int64_t d : spec.shape) w.Int(d);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string WriteV2ServerMetadata() {
  JsonWriter w;
  w.BeginObject();
  w.Key("name").String(serving::kServerName);
  w.Key("version").String(serving::kServerVersion);
  w.Key("extensions").BeginArray();
  for (const auto& e : serving::ServerExtensions()) w.String(e);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

StatusOr<std::string> WriteV2ModelMetadata(const ModelStatus& status,
                                           std::optional<int64_t> version) {
  ASSIGN_OR_RETURN(serving::ModelMetadata m, serving::DescribeModel(status, version));
  JsonWriter w;
  w.BeginObject();
  w.Key("name").String(m.name);
  w.Key("versions").BeginArray();
  for (int64_t v : m.versions) w.String(std::to_string(v));
  w.EndArray();
  w.Key("platform").String(m.platform);
  if (m.has_config) w.Key("max_batch_size").Int(m.max_batch_size);
  w.Key("inputs");
  WriteSpecs(w, m.inputs);
  w.Key("outputs");
  WriteSpecs(w, m.outputs);
  w.Key("state").String(repository::ModelStateName(m.state));
  if (!m.error.empty()) w.Key("error").String(m.error);
  w.EndObject();
  return w.Take();
}

std::string WriteV2RepositoryIndex(const std::vector<ModelStatus>& models, bool ready_only) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& e : serving::RepositoryIndex(models, ready_only)) {
    w.BeginObject();
    w.Key("name").String(e.name);
    w.Key("version").String(e.version);
    w.Key("state").String(repository::ModelStateName(e.state));
    w.Key("reason").String(e.reason);
    w.EndObject();
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
