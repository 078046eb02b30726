#include "http/model_metadata.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "backend/precision_report.h"
#include "common/json_writer.h"

namespace inferd::http {
namespace {

using repository::ModelState;
using repository::ModelStatus;
using repository::VersionStatus;
using serving::DefaultVersion;
using serving::FindVersion;
using serving::UnknownVersion;

// "2026-12-01T10:00:00.123Z"
std::string IsoTime(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch());
  const std::time_t secs = static_cast<std::time_t>(ms.count() / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms.count() % 1000));
  return buf;
}

void WriteLastUsed(JsonWriter& w, const std::optional<std::chrono::system_clock::time_point>& t,
                   std::string_view key) {
  w.Key(key);
  if (t) {
    w.String(IsoTime(*t));
  } else {
    w.Null();
  }
}

// {"bytes", "weight_bytes", "rss_growth_bytes", "peak_growth_bytes", "file_bytes", "load_ms",
//  "load_wait_ms", "measured"}
void WriteFootprint(JsonWriter& w, const repository::Footprint& f) {
  w.BeginObject();
  w.Key("bytes").Int(f.bytes);
  w.Key("weight_bytes").Int(f.weight_bytes);
  w.Key("rss_growth_bytes").Int(f.rss_growth);
  w.Key("peak_growth_bytes").Int(f.peak_growth);
  w.Key("file_bytes").Int(f.file_bytes);
  w.Key("load_ms").Double(f.load_ms);
  w.Key("load_wait_ms").Double(f.load_wait_ms);
  w.Key("measured").Bool(f.measured);
  w.EndObject();
}

int64_t FootprintBytes(const ModelStatus& m) {
  int64_t total = 0;
  for (const auto& v : m.versions) total += v.footprint.bytes;
  return total;
}

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

// "memory": the activation memory one forward needs (memory admission), or
// null until measured: {"activation_bytes_per_item", "activation_bytes_per_token"
// (0 for a model of fixed dims), "measured_on": {"batch_size", "length", "peak_bytes"}}.
void WriteActivation(JsonWriter& w, const scheduler::ActivationMemory& a) {
  w.Key("memory");
  if (!a.measured()) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Key("activation_bytes_per_item").Int(a.bytes_per_item);
  w.Key("activation_bytes_per_token").Int(a.bytes_per_token);
  w.Key("measured_on").BeginObject();
  w.Key("batch_size").Int(a.batch);
  w.Key("length").Int(a.length);
  w.Key("peak_bytes").Int(a.peak_bytes);
  w.EndObject();
  w.EndObject();
}

// "batch_calibration": the scheduler's table for the version shown (one
// accessor: repository::VersionStatus::calibration). {"calibrated", "max_batch_size"
// (the largest batch the queue forms), "seconds", "note" or "reason", "sizes":
// [{"batch_size", "latency_ms", "ms_per_item", "chosen"}]}; null when not resident.
void WriteCalibration(JsonWriter& w, const std::optional<scheduler::BatchCalibration>& c,
                      const std::optional<config::ModelConfig>& config) {
  w.Key("batch_calibration");
  if (!c) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Key("calibrated").Bool(c->calibrated);
  w.Key("max_batch_size")
      .Int(c->calibrated ? c->max_batch : (config ? config->max_batch_size : 0));
  w.Key("seconds").Double(c->seconds);
  w.Key(c->calibrated ? "note" : "reason").String(c->note);
  w.Key("sizes").BeginArray();
  for (const auto& s : c->sizes) {
    w.BeginObject();
    w.Key("batch_size").Int(s.batch);
    w.Key("latency_ms").Double(s.latency_ms);
    w.Key("ms_per_item").Double(s.ms_per_item);
    w.Key("chosen").Bool(s.chosen);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  WriteActivation(w, c->activation);
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
  if (!m.reason.empty()) w.Key("reason").String(m.reason);
  WriteCalibration(w, m.calibration, status.config);
  // backend/precision_report.h; null when not resident or the backend had no
  // choice (precision fp32).
  w.Key("precision");
  if (m.precision) {
    backend::WritePrecisionJson(w, *m.precision);
  } else {
    w.Null();
  }
  // What load-time measurement was skipped to keep a slow model's load in
  // its budget (backend::ExecutionReport::skipped); absent when nothing.
  if (!m.load_skipped.empty()) w.Key("load_measurement_skipped").String(m.load_skipped);
  // repository/version_files.h: the files of the shown version's folder.
  w.Key("candidates").BeginArray();
  for (const auto& f : m.candidates) {
    w.BeginObject();
    w.Key("file").String(f.file);
    w.Key("kind").String(f.kind);
    w.Key("bytes").Int(f.bytes);
    w.Key("served").Bool(f.served);
    w.EndObject();
  }
  w.EndArray();
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
    w.Key("bytes").Int(e.bytes);
    if (e.footprint) {
      w.Key("footprint");
      WriteFootprint(w, *e.footprint);
    }
    w.Key("load").String(repository::LoadPolicyName(e.load));
    w.Key("pinned").Bool(e.pinned);
    WriteLastUsed(w, e.last_used, "last_used");
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
    w.Key("state").String(repository::ModelStateName(m.state));
    if (m.state == ModelState::kQuarantined) w.Key("reason").String(m.reason);
    w.Key("load").String(repository::LoadPolicyName(m.load));
    w.Key("pinned").Bool(m.pinned);
    w.Key("residentBytes").Int(m.resident_bytes);
    w.Key("footprintBytes").Int(FootprintBytes(m));
    w.Key("inFlight").Int(m.in_flight);
    WriteLastUsed(w, m.last_used, "lastUsed");
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
      w.Key("runtime").String(std::string(config::Name(c.backend)));
      w.Key("batchSize").Int(c.max_batch_size);
      w.Key("maxBatchDelay")
          .Double(static_cast<double>(c.dynamic_batching.max_queue_delay_us) / 1000.0);
      w.Key("maxQueueSize").Int(c.max_queue_size);
      w.Key("responseTimeout").Double(static_cast<double>(c.request_timeout_ms) / 1000.0);
      w.Key("instances")
          .String(c.instances.automatic ? std::string("auto")
                                        : std::to_string(c.instances.count) + " x " +
                                              std::to_string(c.instances.threads) + " threads");
      w.Key("precision").String(std::string(config::Name(c.precision)));
    }
    w.Key("status").String(repository::ModelStateName(v ? v->state : ModelState::kUnavailable));
    std::string error = v && !v->error.empty() ? v->error : status.error;
    if (!error.empty()) w.Key("error").String(error);
    if (v && !v->reason.empty()) w.Key("reason").String(v->reason);
    w.Key("load").String(repository::LoadPolicyName(status.load));
    w.Key("pinned").Bool(status.pinned);
    WriteLastUsed(w, status.last_used, "lastUsed");
    if (v) {
      w.Key("footprint");
      WriteFootprint(w, v->footprint);
    }
    WriteCalibration(w, v ? v->calibration : std::nullopt, status.config);
    w.EndObject();
  };
  if (shown.empty()) write_one(nullptr);
  for (const VersionStatus* v : shown) write_one(v);
  w.EndArray();
  return w.Take();
}

}  // namespace inferd::http
