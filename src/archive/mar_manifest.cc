#include "archive/mar_manifest.h"

#include <simdjson.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/byte_size.h"

namespace inferd::archive {
namespace fs = std::filesystem;
namespace {

StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string StringField(simdjson::dom::element object, const char* key) {
  std::string_view value;
  if (object[key].get(value) != simdjson::SUCCESS) return "";
  return std::string(value);
}

template <typename T>
Status ReadSetting(const YAML::Node& root, const char* key, const std::string& file,
                   std::optional<T>* out) {
  if (!root[key]) return Status::Ok();
  try {
    T v = root[key].as<T>();
    if (v < 0) return InvalidArgument(file + ": " + key + ": expected a number >= 0");
    *out = v;
  } catch (const YAML::Exception&) {
    return InvalidArgument(file + ": " + key + ": expected an integer");
  }
  return Status::Ok();
}

// TorchServe's model-config.yaml: the frontend keys inferd honours; the rest
// (handler: sections and the like) stay for the handler to read.
Status ReadModelConfigYaml(const fs::path& path, ServingSettings* s) {
  const std::string file = path.string();
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(file + ": not valid YAML: " + e.what());
  }
  if (!root.IsMap()) return Status::Ok();
  RETURN_IF_ERROR(ReadSetting(root, "batchSize", file, &s->batch_size));
  RETURN_IF_ERROR(ReadSetting(root, "maxBatchDelay", file, &s->max_batch_delay_ms));
  RETURN_IF_ERROR(ReadSetting(root, "responseTimeout", file, &s->response_timeout_s));
  if (root["workerMemoryLimit"]) {
    const YAML::Node& limit = root["workerMemoryLimit"];
    auto bytes = limit.IsScalar() ? ParseByteSize(limit.Scalar())
                                  : StatusOr<int64_t>(InvalidArgument("not a scalar"));
    if (!bytes.ok() || *bytes <= 0) {
      return InvalidArgument(file + ": workerMemoryLimit: expected a size such as 512M or 2G");
    }
    s->worker_memory_limit = *bytes;
  }
  std::optional<int> min_workers, max_workers;
  RETURN_IF_ERROR(ReadSetting(root, "minWorkers", file, &min_workers));
  RETURN_IF_ERROR(ReadSetting(root, "maxWorkers", file, &max_workers));
  if (max_workers && *max_workers > 0) {
    s->workers = max_workers;
  } else if (min_workers && *min_workers > 0) {
    s->workers = min_workers;
  }
  return Status::Ok();
}

template <typename T>
T Pick(const std::optional<T>& over, const std::optional<T>& base, T fallback) {
  if (over) return *over;
  if (base) return *base;
  return fallback;
}

}  // namespace

StatusOr<MarManifest> ReadMarManifest(const std::string& unpacked_dir) {
  const fs::path path = fs::path(unpacked_dir) / "MAR-INF" / "MANIFEST.json";
  auto text = ReadFile(path);
  if (!text.ok()) {
    return InvalidArgument("the archive has no MAR-INF/MANIFEST.json: not a model archive");
  }
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*text).get(root) != simdjson::SUCCESS || !root.is_object()) {
    return InvalidArgument("MAR-INF/MANIFEST.json is not a JSON object");
  }
  simdjson::dom::element model;
  if (root["model"].get(model) != simdjson::SUCCESS || !model.is_object()) {
    return InvalidArgument("MAR-INF/MANIFEST.json has no \"model\" object");
  }
  MarManifest m;
  m.model_name = StringField(model, "modelName");
  m.model_version = StringField(model, "modelVersion");
  m.handler = StringField(model, "handler");
  m.serialized_file = StringField(model, "serializedFile");
  m.model_file = StringField(model, "modelFile");
  m.requirements_file = StringField(model, "requirementsFile");
  if (m.handler.empty()) {
    return InvalidArgument(
        "MAR-INF/MANIFEST.json: model.handler is missing: an archive needs a handler (a "
        "handler.py or a default handler name such as image_classifier)");
  }
  for (const std::string* named : {&m.serialized_file, &m.model_file, &m.requirements_file}) {
    if (!named->empty() && !fs::exists(fs::path(unpacked_dir) / *named)) {
      return InvalidArgument("MAR-INF/MANIFEST.json names '" + *named +
                             "', which the archive does not hold");
    }
  }
  const std::string config_file = StringField(model, "configFile");
  if (!config_file.empty()) {
    const fs::path config_path = fs::path(unpacked_dir) / config_file;
    if (!fs::exists(config_path)) {
      return InvalidArgument("MAR-INF/MANIFEST.json names config file '" + config_file +
                             "', which the archive does not hold");
    }
    RETURN_IF_ERROR(ReadModelConfigYaml(config_path, &m.settings));
  }
  return m;
}

bool RunsNatively(const MarManifest& m) {
  const std::string& f = m.serialized_file;
  const bool torchscript =
      f.size() > 3 && (f.compare(f.size() - 3, 3, ".pt") == 0 ||
                       (f.size() > 4 && f.compare(f.size() - 4, 4, ".pth") == 0));
  return m.handler == "image_classifier" && m.model_file.empty() && torchscript;
}

std::string WriteServingConfig(const MarManifest& m, const ServingSettings& over,
                               const std::string& labels_file) {
  // TorchServe's defaults: batch 1, 100 ms delay, 120 s response timeout.
  const int batch = std::max(1, Pick(over.batch_size, m.settings.batch_size, 1));
  const int64_t delay_ms =
      Pick<int64_t>(over.max_batch_delay_ms, m.settings.max_batch_delay_ms, 100);
  const int64_t timeout_s = std::max<int64_t>(
      1, Pick<int64_t>(over.response_timeout_s, m.settings.response_timeout_s, 120));
  const int workers = Pick(over.workers, m.settings.workers, 0);
  std::ostringstream y;
  y << "# Written by inferd from the TorchServe archive's MANIFEST.json and model-config.yaml\n";
  y << "max_batch_size: " << batch << "\n";
  y << "dynamic_batching: {max_queue_delay_us: " << (batch > 1 ? delay_ms * 1000 : 0)
    << ", calibrate: false}\n";
  y << "request_timeout_ms: " << timeout_s * 1000 << "\n";
  y << "max_execution_ms: " << timeout_s * 1000 << "\n";
  if (RunsNatively(m)) {
    y << "backend: torchscript\n";
    if (workers > 0) y << "instances: {count: " << workers << ", threads: 1}\n";
    y << "inputs: [{name: input, datatype: FP32, shape: [3, 224, 224]}]\n";
    y << "preprocess: {kind: image, resize: 256, center_crop: 224, "
         "mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225]}\n";
    y << "postprocess: {kind: topk, k: 5";
    if (!labels_file.empty()) y << ", labels: " << labels_file;
    y << "}\n";
    return y.str();
  }
  y << "backend: python\n";
  if (m.settings.worker_memory_limit) {
    y << "worker_memory_limit: " << *m.settings.worker_memory_limit << "\n";
  }
  // One single-threaded handler process per executor, as TorchServe runs a
  // worker per process with one torch thread.
  y << "instances: {count: " << std::max(1, workers) << ", threads: 1}\n";
  y << "inputs: [{name: body, datatype: UINT8, shape: [-1], pad_value: 0}]\n";
  y << "outputs: [{name: answer, datatype: UINT8, shape: [-1]}]\n";
  y << "preprocess: {kind: bytes}\n";
  return y.str();
}

StatusOr<std::string> LabelsFromIndexToName(const std::string& json_path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(json_path));
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(text).get(object) != simdjson::SUCCESS) {
    return InvalidArgument(json_path + ": expected an object {\"0\": \"label\", ...}");
  }
  std::map<int64_t, std::string> by_index;
  for (auto field : object) {
    int64_t index = 0;
    try {
      index = std::stoll(std::string(field.key));
    } catch (const std::exception&) {
      return InvalidArgument(json_path + ": key '" + std::string(field.key) +
                             "' is not a class index");
    }
    std::string_view label;
    simdjson::dom::array list;
    if (field.value.get(list) == simdjson::SUCCESS && list.size() > 0) {
      if (list.at(list.size() - 1).get(label) != simdjson::SUCCESS) {
        return InvalidArgument(json_path + ": labels must be strings or lists of strings");
      }
    } else if (field.value.get(label) != simdjson::SUCCESS) {
      return InvalidArgument(json_path + ": labels must be strings or lists of strings");
    }
    if (index < 0 || index > 10000000) return InvalidArgument(json_path + ": index out of range");
    by_index[index] = std::string(label);
  }
  if (by_index.empty()) return InvalidArgument(json_path + ": no labels");
  std::string out;
  const int64_t last = by_index.rbegin()->first;
  for (int64_t i = 0; i <= last; ++i) {
    auto it = by_index.find(i);
    out += (it == by_index.end() ? std::to_string(i) : it->second) + "\n";
  }
  return out;
}

}  // namespace inferd::archive
