#include "http/torchserve_codec.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "common/handler_rows.h"

#include "http/json_body.h"
#include "common/json_writer.h"
#include "http/tensor_json.h"

namespace inferd::http {
namespace {

using simdjson::dom::element;

std::string InputNames(const config::ModelConfig& config) {
  std::string names;
  for (const auto& spec : config.inputs) names += (names.empty() ? "" : ", ") + spec.name;
  return names;
}

std::string ExpectedRanks(const config::TensorSpec& spec) {
  return "rank " + std::to_string(spec.dims.size()) + " (one item of shape " +
         ShapeToString(spec.dims) + ") or rank " + std::to_string(spec.dims.size() + 1) +
         " (a batch of them)";
}

}  // namespace

StatusOr<PredictionRequest> ParsePredictionJson(const std::string& body,
                                                const config::ModelConfig& config) {
  auto parsed = ParseJsonBody(body);
  if (!parsed.ok()) {
    return InvalidArgument(parsed.status().message() + " (model '" + config.name +
                           "' takes JSON: a nested list, or an object of input name -> nested "
                           "list; raw images or text need a preprocess: section in its config)");
  }
  element root = parsed->root();

  // Pair each JSON value with the config input it feeds.
  std::vector<std::pair<const config::TensorSpec*, element>> fed;
  simdjson::dom::object obj;
  if (root.get_object().get(obj) == simdjson::SUCCESS) {
    for (auto field : obj) {
      const config::TensorSpec* spec = nullptr;
      for (const auto& s : config.inputs) {
        if (s.name == field.key) spec = &s;
      }
      if (!spec && config.inputs.size() == 1 && (field.key == "data" || field.key == "body")) {
        spec = &config.inputs[0];
      }
      if (!spec) {
        return InvalidArgument("unknown input '" + std::string(field.key) + "'; model '" +
                               config.name + "' has inputs: " + InputNames(config));
      }
      for (const auto& [s, e] : fed) {
        if (s == spec) return InvalidArgument("input '" + spec->name + "' is given twice");
      }
      fed.emplace_back(spec, field.value);
    }
    for (const auto& spec : config.inputs) {
      bool found = false;
      for (const auto& f : fed) found = found || f.first == &spec;
      if (!found) {
        return InvalidArgument("missing input '" + spec.name + "'; model '" + config.name +
                               "' has inputs: " + InputNames(config));
      }
    }
  } else if (config.inputs.size() == 1) {
    fed.emplace_back(&config.inputs[0], root);
  } else {
    return InvalidArgument(
        "model '" + config.name + "' has " + std::to_string(config.inputs.size()) +
        " inputs: send an object of input name -> nested list (" + InputNames(config) + ")");
  }

  PredictionRequest out;
  std::optional<bool> batched;  // all inputs must agree
  for (const auto& [spec, value] : fed) {
    std::string what = "input '" + spec->name + "'";
    ASSIGN_OR_RETURN(Tensor t, DecodeNestedJson(value, spec->dtype, what));
    size_t rank = t.shape().size();
    bool has_batch;
    if (rank == spec->dims.size()) {
      has_batch = false;
    } else if (rank == spec->dims.size() + 1) {
      has_batch = true;
    } else {
      return InvalidArgument(what + ": expected " + ExpectedRanks(*spec) + ", got shape " +
                             ShapeToString(t.shape()));
    }
    if (batched && *batched != has_batch) {
      return InvalidArgument(what +
                             ": some inputs come with the batch dim and some without; "
                             "send all of them one way");
    }
    batched = has_batch;
    if (!has_batch) {
      Shape shape = t.shape();
      shape.insert(shape.begin(), 1);
      t = t.Reshaped(std::move(shape));
    }
    out.inputs.push_back({spec->name, std::move(t)});
  }
  out.added_batch_dim = batched.has_value() && !*batched;
  return out;
}

namespace {

void WriteLabels(JsonWriter& w, const std::vector<scheduler::LabelScore>& item) {
  w.BeginObject();
  for (const auto& ls : item) w.Key(ls.label).Float(ls.score);
  w.EndObject();
}

Status WriteOutput(JsonWriter& w, const NamedTensor& out, bool single_item) {
  Tensor t = out.tensor;
  if (single_item && !t.shape().empty() && t.shape()[0] == 1) {
    t = t.Reshaped(Shape(t.shape().begin() + 1, t.shape().end()));
  }
  return WriteTensorJson(w, t, /*nested=*/true).WithContext("output '" + out.name + "'");
}

}  // namespace

StatusOr<std::string> WritePredictionResponse(const scheduler::InferenceResponse& response,
                                              bool single_item) {
  JsonWriter w;
  if (!response.labels.empty()) {
    if (single_item && response.labels.size() == 1) {
      WriteLabels(w, response.labels[0]);
    } else {
      w.BeginArray();
      for (const auto& item : response.labels) WriteLabels(w, item);
      w.EndArray();
    }
    return w.Take();
  }
  if (response.outputs.size() == 1) {
    RETURN_IF_ERROR(WriteOutput(w, response.outputs[0], single_item));
    return w.Take();
  }
  w.BeginObject();
  for (const auto& out : response.outputs) {
    w.Key(out.name);
    RETURN_IF_ERROR(WriteOutput(w, out, single_item));
  }
  w.EndObject();
  return w.Take();
}

namespace {

// A header a handler may set: a token name (RFC 9110) that the server does not
// write itself (a handler's own would contradict it), a value without control
// characters. Others are dropped.
bool UsableHeader(std::string_view name, std::string_view value) {
  if (name.empty()) return false;
  std::string lower;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
    lower += static_cast<char>(std::tolower(u));
  }
  for (char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return false;
  }
  return lower != "content-length" && lower != "content-type" && lower != "transfer-encoding" &&
         lower != "connection";
}

}  // namespace

StatusOr<HttpResponse> HandlerAnswerResponse(const scheduler::InferenceResponse& response) {
  if (response.outputs.size() != 1 || response.outputs[0].tensor.dtype() != DataType::kUint8) {
    return Internal("a handler model answers one UINT8 output of handler rows");
  }
  const Tensor& t = response.outputs[0].tensor;
  ASSIGN_OR_RETURN(HandlerRow row, ReadHandlerRow(t.data(), t.byte_size()));
  HttpResponse http;
  http.status = 200;
  // After the content type, one line each: what the handler set with
  // context.set_response_status (":status: 201") and set_response_header
  // ("Name: value"); inferd_worker.py writes them.
  std::string_view meta = row.content_type;
  const size_t first_line = meta.find('\n');
  const std::string_view type = meta.substr(0, first_line);
  http.content_type = type.empty() ? "application/json" : std::string(type);
  meta = first_line == std::string_view::npos ? std::string_view() : meta.substr(first_line + 1);
  while (!meta.empty()) {
    const size_t end = meta.find('\n');
    const std::string_view line = meta.substr(0, end);
    meta = end == std::string_view::npos ? std::string_view() : meta.substr(end + 1);
    const size_t colon = line.find(':', 1);
    if (colon == std::string_view::npos) continue;
    const std::string name(line.substr(0, colon));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (name == ":status") {
      const int code = std::atoi(std::string(value).c_str());
      if (code >= 200 && code <= 599) http.status = code;  // else the handler's slip: 200 stays
    } else if (UsableHeader(name, value)) {
      http.headers.emplace_back(name, std::string(value));
    }
  }
  http.body = std::string(row.body);
  return http;
}

}  // namespace inferd::http
