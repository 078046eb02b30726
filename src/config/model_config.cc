#include "config/model_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/byte_size.h"

namespace inferd::config {
namespace {

// Reads one YAML mapping, remembering the key path for messages and refusing
// keys nobody reads (a typo in a config should not be silently ignored).
class Reader {
 public:
  Reader(const YAML::Node& node, std::string file, std::string path)
      : node_(node), file_(std::move(file)), path_(std::move(path)) {}

  Status Expect(bool ok, const std::string& key, const std::string& expected) const {
    if (ok) return Status::Ok();
    std::string got;
    const YAML::Node v = node_[key];
    if (v.IsScalar()) {
      got = "'" + v.Scalar() + "'";
    } else if (v.IsSequence()) {
      got = "a list";
    } else if (v.IsMap()) {
      got = "a mapping";
    } else {
      got = "nothing";
    }
    return InvalidArgument(file_ + ": " + Key(key) + ": expected " + expected + ", got " + got);
  }

  std::string Key(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool Has(const std::string& key) {
    seen_.insert(key);
    return node_[key].IsDefined() && !node_[key].IsNull();
  }
  YAML::Node Get(const std::string& key) {
    seen_.insert(key);
    return node_[key];
  }

  template <typename T>
  Status Read(const std::string& key, T* out, const std::string& expected) {
    if (!Has(key)) return Status::Ok();
    try {
      *out = node_[key].as<T>();
      return Status::Ok();
    } catch (const YAML::Exception&) {
      return Expect(false, key, expected);
    }
  }

  // An integer in [min, max]; out of range (or past int64) is an error that
  // gives the range, never a value truncated into the field.
  Status ReadInt(const std::string& key, int64_t* out, int64_t min,
                 int64_t max = std::numeric_limits<int64_t>::max()) {
    if (!Has(key)) return Status::Ok();
    const std::string expected =
        max == std::numeric_limits<int64_t>::max()
            ? "an integer >= " + std::to_string(min)
            : "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    int64_t v = 0;
    RETURN_IF_ERROR(Read(key, &v, expected));
    RETURN_IF_ERROR(Expect(v >= min && v <= max, key, expected));
    *out = v;
    return Status::Ok();
  }
  Status ReadInt(const std::string& key, int* out, int min,
                 int max = std::numeric_limits<int>::max()) {
    int64_t v = *out;
    RETURN_IF_ERROR(ReadInt(key, &v, min, max));
    *out = static_cast<int>(v);
    return Status::Ok();
  }

  // A choice field (choices.h): one of its spellings, else an error that
  // lists them.
  template <typename T>
  Status ReadChoice(const std::string& key, T* out) {
    if (!Has(key)) return Status::Ok();
    const std::string expected = ChoiceList<T>();
    std::string text;
    RETURN_IF_ERROR(Read(key, &text, expected));
    std::optional<T> parsed = ParseChoice<T>(text);
    RETURN_IF_ERROR(Expect(parsed.has_value(), key, expected));
    *out = *parsed;
    return Status::Ok();
  }

  Status ReadFloatList(const std::string& key, std::vector<float>* out) {
    if (!Has(key)) return Status::Ok();
    RETURN_IF_ERROR(Expect(node_[key].IsSequence(), key, "a list of numbers"));
    return Read(key, out, "a list of numbers");
  }

  // Keys present but never read.
  Status CheckUnknown(const std::vector<std::string>& known_elsewhere = {}) const {
    if (!node_.IsMap()) return Status::Ok();
    for (const auto& kv : node_) {
      std::string k = kv.first.as<std::string>();
      if (seen_.count(k)) continue;
      bool elsewhere = false;
      for (const auto& e : known_elsewhere) elsewhere |= (e == k);
      if (!elsewhere) return InvalidArgument(file_ + ": " + Key(k) + ": unknown key");
    }
    return Status::Ok();
  }

 private:
  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::set<std::string> seen_;
};

Status ParseTensorSpecs(const YAML::Node& list, const std::string& file, const std::string& key,
                        std::vector<TensorSpec>* out) {
  if (!list.IsSequence()) {
    return InvalidArgument(file + ": " + key +
                           ": expected a list of {name, datatype, shape}");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = key + "[" + std::to_string(i) + "]";
    if (!list[i].IsMap()) {
      return InvalidArgument(file + ": " + path + ": expected a mapping {name, datatype, shape}");
    }
    Reader r(list[i], file, path);
    TensorSpec spec;
    RETURN_IF_ERROR(r.Read("name", &spec.name, "a name"));
    RETURN_IF_ERROR(r.Expect(!spec.name.empty(), "name", "a non-empty name"));
    RETURN_IF_ERROR(r.Expect(names.insert(spec.name).second, "name", "a name not used twice"));
    std::string dtype = "FP32";
    RETURN_IF_ERROR(r.Read("datatype", &dtype, "a datatype"));
    auto parsed = ParseDataType(dtype);
    RETURN_IF_ERROR(r.Expect(parsed.has_value(), "datatype",
                             "one of BOOL, UINT8, INT8, INT16, INT32, INT64, FP16, BF16, FP32, "
                             "FP64, BYTES"));
    spec.dtype = *parsed;
    RETURN_IF_ERROR(r.Expect(r.Has("shape") && r.Get("shape").IsSequence(), "shape",
                             "a list of dimensions (without the batch dim; -1 = variable)"));
    RETURN_IF_ERROR(r.Read("shape", &spec.dims, "a list of integers"));
    for (int64_t d : spec.dims) {
      RETURN_IF_ERROR(r.Expect(d == -1 || d > 0, "shape", "dimensions > 0 or -1 (variable)"));
    }
    Shape fixed = spec.dims;  // the fixed part must leave room for data
    for (int64_t& d : fixed) d = d < 0 ? 1 : d;
    RETURN_IF_ERROR(r.Expect(NumElements(fixed) >= 0, "shape",
                             "dimensions whose product is at most 2^40"));
    if (r.Has("pad_value")) {
      double pad = 0;
      RETURN_IF_ERROR(r.Read("pad_value", &pad, "a number"));
      spec.pad_value = pad;
    }
    RETURN_IF_ERROR(r.CheckUnknown({"dims"}));
    out->push_back(std::move(spec));
  }
  return Status::Ok();
}

Status ParsePreprocess(Reader& parent, const std::string& file, PreprocessConfig* p) {
  if (!parent.Has("preprocess")) return Status::Ok();
  YAML::Node node = parent.Get("preprocess");
  if (!node.IsMap()) return parent.Expect(false, "preprocess", "a mapping with `kind`");
  Reader r(node, file, "preprocess");
  RETURN_IF_ERROR(r.Expect(r.Has("kind"), "kind", ChoiceList<PreprocessKind>()));
  RETURN_IF_ERROR(r.ReadChoice("kind", &p->kind));
  // Sides of at most 65535 pixels (JPEG's own limit): products of two stay
  // far inside int arithmetic in the resampler.
  constexpr int kMaxSide = 65535;
  RETURN_IF_ERROR(r.ReadInt("resize", &p->resize, 0, kMaxSide));
  RETURN_IF_ERROR(r.ReadInt("center_crop", &p->center_crop, 0, kMaxSide));
  RETURN_IF_ERROR(r.ReadInt("width", &p->width, 0, kMaxSide));
  RETURN_IF_ERROR(r.ReadInt("height", &p->height, 0, kMaxSide));
  RETURN_IF_ERROR(r.ReadFloatList("mean", &p->mean));
  RETURN_IF_ERROR(r.ReadFloatList("std", &p->std));
  for (float s : p->std) RETURN_IF_ERROR(r.Expect(s != 0, "std", "non-zero values"));
  RETURN_IF_ERROR(r.ReadChoice("color", &p->color));
  RETURN_IF_ERROR(r.Read("invert", &p->invert, "true or false"));
  RETURN_IF_ERROR(r.Read("scale", &p->scale, "a number"));
  RETURN_IF_ERROR(r.ReadInt("max_pixels", &p->max_pixels, 1));
  RETURN_IF_ERROR(r.ReadChoice("tokenizer", &p->tokenizer));
  RETURN_IF_ERROR(r.Read("vocab", &p->vocab, "a file name"));
  RETURN_IF_ERROR(r.Read("lowercase", &p->lowercase, "true or false"));
  RETURN_IF_ERROR(r.Read("strip_accents", &p->strip_accents, "true or false"));
  RETURN_IF_ERROR(r.ReadInt("max_length", &p->max_length, 1));
  RETURN_IF_ERROR(r.Read("truncation", &p->truncation, "true or false"));
  return r.CheckUnknown();
}

Status ParsePostprocess(Reader& parent, const std::string& file, PostprocessConfig* p) {
  if (!parent.Has("postprocess")) return Status::Ok();
  YAML::Node node = parent.Get("postprocess");
  if (!node.IsMap()) return parent.Expect(false, "postprocess", "a mapping with `kind`");
  Reader r(node, file, "postprocess");
  RETURN_IF_ERROR(r.Expect(r.Has("kind"), "kind", ChoiceList<PostprocessKind>()));
  RETURN_IF_ERROR(r.ReadChoice("kind", &p->kind));
  RETURN_IF_ERROR(r.ReadInt("k", &p->k, 1));
  RETURN_IF_ERROR(r.Read("labels", &p->labels, "a file name"));
  RETURN_IF_ERROR(r.Read("threshold", &p->threshold, "a number"));
  RETURN_IF_ERROR(r.Read("apply_softmax", &p->apply_softmax, "true or false"));
  return r.CheckUnknown();
}

Status ParseInstances(Reader& parent, InstancesConfig* inst) {
  if (!parent.Has("instances")) return Status::Ok();
  YAML::Node node = parent.Get("instances");
  if (node.IsScalar() && node.Scalar() == "auto") {
    inst->automatic = true;
    return Status::Ok();
  }
  RETURN_IF_ERROR(parent.Expect(node.IsMap(), "instances", "auto or {count: N, threads: T}"));
  Reader r(node, "", "");
  inst->automatic = false;
  inst->count = 1;
  inst->threads = 1;
  Status st = r.ReadInt("count", &inst->count, 1);
  if (st.ok()) st = r.ReadInt("threads", &inst->threads, 1);
  if (st.ok()) st = r.CheckUnknown();
  if (!st.ok()) {
    return parent.Expect(false, "instances",
                         "auto or {count: N >= 1, threads: T >= 1} (" + st.message().substr(2) + ")");
  }
  return Status::Ok();
}

Status ParseIsolation(Reader& r, ModelConfig* c) {
  RETURN_IF_ERROR(r.ReadChoice("isolation", &c->isolation));
  RETURN_IF_ERROR(r.Expect(c->isolation == Isolation::kThread ||
                               c->backend == BackendKind::kTorchscript ||
                               c->backend == BackendKind::kPython,
                           "isolation",
                           "thread for this backend (process isolation is for "
                           "torchscript and python models)"));
  if (!r.Has("worker_memory_limit")) return Status::Ok();
  std::string text;
  RETURN_IF_ERROR(r.Read("worker_memory_limit", &text, "a size such as 512M or 2G"));
  auto bytes = ParseByteSize(text);
  RETURN_IF_ERROR(r.Expect(bytes.ok() && *bytes > 0, "worker_memory_limit",
                           "a size such as 512M or 2G (bytes, or K, M, G, T; 1K = 1024)"));
  c->worker_memory_limit = *bytes;
  return Status::Ok();
}

}  // namespace

StatusOr<ModelConfig> ParseModelConfig(const std::string& yaml_text, const std::string& file,
                                       const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(file + ": not valid YAML: " + e.what());
  }
  if (!root.IsMap()) return InvalidArgument(file + ": expected a mapping of config keys");

  ModelConfig c;
  c.name = name;
  Reader r(root, file, "");
  try {
    RETURN_IF_ERROR(r.ReadChoice("backend", &c.backend));
    RETURN_IF_ERROR(r.ReadInt("max_batch_size", &c.max_batch_size, 1));
    if (r.Has("dynamic_batching")) {
      YAML::Node db = r.Get("dynamic_batching");
      RETURN_IF_ERROR(r.Expect(db.IsMap(), "dynamic_batching",
                               "a mapping {max_queue_delay_us, preferred_batch_sizes, calibrate, "
                               "max_batch_latency_ms}"));
      Reader d(db, file, "dynamic_batching");
      // Bounded so that time arithmetic on them cannot overflow: a minute of
      // batching delay and a day of timeout are past any use.
      RETURN_IF_ERROR(d.ReadInt("max_queue_delay_us", &c.dynamic_batching.max_queue_delay_us, 0,
                                60'000'000));
      RETURN_IF_ERROR(d.Read("preferred_batch_sizes", &c.dynamic_batching.preferred_batch_sizes,
                             "a list of integers"));
      for (int s : c.dynamic_batching.preferred_batch_sizes) {
        RETURN_IF_ERROR(d.Expect(s >= 1 && s <= c.max_batch_size, "preferred_batch_sizes",
                                 "sizes between 1 and max_batch_size (" +
                                     std::to_string(c.max_batch_size) + ")"));
      }
      RETURN_IF_ERROR(d.Read("calibrate", &c.dynamic_batching.calibrate, "true or false"));
      RETURN_IF_ERROR(d.ReadInt("max_batch_latency_ms", &c.dynamic_batching.max_batch_latency_ms,
                                0, 3'600'000));
      RETURN_IF_ERROR(d.CheckUnknown());
    }
    RETURN_IF_ERROR(r.ReadInt("max_queue_size", &c.max_queue_size, 1));
    RETURN_IF_ERROR(r.ReadInt("request_timeout_ms", &c.request_timeout_ms, 1, 86'400'000));
    RETURN_IF_ERROR(r.ReadInt("weight", &c.weight, 1, 1000));
    RETURN_IF_ERROR(r.ReadInt("max_execution_ms", &c.max_execution_ms, 0, 86'400'000));
    RETURN_IF_ERROR(ParseInstances(r, &c.instances));
    RETURN_IF_ERROR(ParseIsolation(r, &c));
    RETURN_IF_ERROR(r.ReadChoice("precision", &c.precision));
    if (r.Has("precision_tolerance")) {
      double tolerance = 0;
      RETURN_IF_ERROR(r.Read("precision_tolerance", &tolerance, "a number in (0, 1]"));
      RETURN_IF_ERROR(r.Expect(tolerance > 0 && tolerance <= 1, "precision_tolerance",
                               "a number in (0, 1]"));
      c.precision_tolerance = tolerance;
    }
    RETURN_IF_ERROR(r.ReadChoice("variants", &c.variants));
    RETURN_IF_ERROR(r.Expect(r.Has("inputs"), "inputs", "a list of {name, datatype, shape}"));
    RETURN_IF_ERROR(ParseTensorSpecs(r.Get("inputs"), file, "inputs", &c.inputs));
    RETURN_IF_ERROR(r.Expect(!c.inputs.empty(), "inputs", "at least one input"));
    if (r.Has("outputs")) {
      RETURN_IF_ERROR(ParseTensorSpecs(r.Get("outputs"), file, "outputs", &c.outputs));
    }
    RETURN_IF_ERROR(ParsePreprocess(r, file, &c.preprocess));
    RETURN_IF_ERROR(ParsePostprocess(r, file, &c.postprocess));
    RETURN_IF_ERROR(r.ReadChoice("load", &c.load));
    RETURN_IF_ERROR(r.Read("pinned", &c.pinned, "true or false"));
    if (r.Has("mirror")) {
      ASSIGN_OR_RETURN(c.mirror, ParseMirrorConfig(r.Get("mirror"), file));
    }
    RETURN_IF_ERROR(r.CheckUnknown());
  } catch (const YAML::Exception& e) {
    return InvalidArgument(file + ": " + e.what());
  }
  return c;
}

StatusOr<ModelConfig> LoadModelConfig(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open the model config");
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseModelConfig(buf.str(), path, name);
}

}  // namespace inferd::config
