#include "http/v2_codec.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <set>

#include "http/json_body.h"
#include "common/json_writer.h"
#include "http/tensor_json.h"

namespace inferd::http {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// An input as declared in the JSON, before its data is decoded.
struct InputHead {
  std::string name;
  std::string what;  // "input 'x'"
  DataType dtype = DataType::kFp32;
  Shape shape;
  std::optional<element> data;
  std::optional<uint64_t> binary_size;
};

StatusOr<Shape> ParseShape(element e, const std::string& what) {
  simdjson::dom::array arr;
  if (e.get_array().get(arr)) {
    return InvalidArgument(what + ": 'shape' must be a list of integers, got " +
                           std::string(JsonTypeName(e.type())));
  }
  Shape shape;
  for (element d : arr) {
    int64_t v;
    if (d.get_int64().get(v) || v < 0) {
      return InvalidArgument(what + ": 'shape' must hold non-negative integers, got " +
                             simdjson::minify(e));
    }
    shape.push_back(v);
  }
  RETURN_IF_ERROR(CheckShape(shape, what));
  return shape;
}

// An optional integer parameter in [0, max]; kInvalidArgument naming it otherwise.
Status ReadUintParam(object params, std::string_view key, uint64_t max, uint64_t* out) {
  element e;
  if (params[key].get(e)) return Status::Ok();  // absent
  uint64_t v = 0;
  if (e.get_uint64().get(v) || v > max) {
    return InvalidArgument("parameters." + std::string(key) + ": expected an integer from 0 to " +
                           std::to_string(max) + ", got " + simdjson::minify(e));
  }
  *out = v;
  return Status::Ok();
}

bool GetBoolParam(object obj, std::string_view key) {
  object params;
  if (obj["parameters"].get(params)) return false;
  bool v = false;
  if (params[key].get(v)) return false;
  return v;
}

StatusOr<InputHead> ParseInputHead(element e, size_t index) {
  InputHead head;
  object obj;
  std::string where = "inputs[" + std::to_string(index) + "]";
  if (e.get_object().get(obj)) return InvalidArgument(where + ": expected an object");
  std::string_view name;
  if (obj["name"].get(name)) return InvalidArgument(where + ": missing 'name' (a string)");
  head.name = std::string(name);
  head.what = "input '" + head.name + "'";
  element shape_e;
  if (obj["shape"].get(shape_e)) return InvalidArgument(head.what + ": missing 'shape'");
  ASSIGN_OR_RETURN(head.shape, ParseShape(shape_e, head.what));
  std::string_view dtype_name;
  if (obj["datatype"].get(dtype_name)) {
    return InvalidArgument(head.what + ": missing 'datatype' (one of " + DataTypeList() + ")");
  }
  auto dtype = ParseDataType(dtype_name);
  if (!dtype) {
    return InvalidArgument(head.what + ": unknown datatype '" + std::string(dtype_name) +
                           "'; expected one of " + DataTypeList());
  }
  head.dtype = *dtype;
  object params;
  if (!obj["parameters"].get(params)) {
    element size_e;
    if (!params["binary_data_size"].get(size_e)) {
      uint64_t size;
      if (size_e.get_uint64().get(size)) {
        return InvalidArgument(head.what +
                               ": parameters.binary_data_size must be a non-negative "
                               "integer, got " +
                               simdjson::minify(size_e));
      }
      head.binary_size = size;
    }
  }
  element data;
  if (!obj["data"].get(data)) head.data = data;
  if (!head.data && !head.binary_size) {
    return InvalidArgument(head.what +
                           ": missing 'data' (or parameters.binary_data_size with "
                           "the bytes after the JSON header)");
  }
  if (head.data && head.binary_size) {
    return InvalidArgument(head.what +
                           ": has both 'data' and parameters.binary_data_size; "
                           "send one");
  }
  return head;
}

StatusOr<size_t> ParseHeaderLength(const std::optional<std::string>& header, size_t body_size) {
  if (!header) return body_size;
  size_t n = 0;
  const char* begin = header->data();
  const char* end = begin + header->size();
  auto [ptr, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || ptr != end || n > body_size) {
    return InvalidArgument(
        "Inference-Header-Content-Length: expected an integer <= the body "
        "size " +
        std::to_string(body_size) + ", got '" + *header + "'");
  }
  return n;
}

StatusOr<Tensor> BinaryTensor(const InputHead& head, const std::shared_ptr<std::string>& body,
                              size_t offset) {
  const char* data = body->data() + offset;
  size_t size = *head.binary_size;
  int64_t n = NumElements(head.shape);  // >= 0: ParseShape checked the shape
  if (head.dtype == DataType::kBytes) {
    RETURN_IF_ERROR(CheckBytesElements(reinterpret_cast<const std::byte*>(data), size, n, head.what));
  } else {
    size_t want = static_cast<size_t>(ByteSize(head.dtype, head.shape));
    if (want != size) {
      return InvalidArgument(head.what + ": binary_data_size is " + std::to_string(size) +
                             " bytes but shape " + ShapeToString(head.shape) + " of " +
                             std::string(DataTypeName(head.dtype)) + " needs " +
                             std::to_string(want));
    }
  }
  // Borrow when the elements are aligned; typed loads from a misaligned
  // pointer are undefined behaviour (and vectorized kernels may fault), so a
  // misaligned slice (the JSON header's length decides) is copied instead.
  size_t align = std::max<size_t>(1, DataTypeSize(head.dtype));
  if (reinterpret_cast<uintptr_t>(data) % align == 0) {
    return Tensor::Borrow(head.dtype, head.shape, body, data, size);
  }
  std::vector<std::byte> copy(size);
  if (size) std::memcpy(copy.data(), data, size);
  return Tensor::FromBytes(head.dtype, head.shape, std::move(copy));
}

}  // namespace

StatusOr<V2InferRequest> ParseV2InferRequest(const std::shared_ptr<std::string>& body,
                                             const std::optional<std::string>& header_length) {
  ASSIGN_OR_RETURN(size_t json_size, ParseHeaderLength(header_length, body->size()));
  ASSIGN_OR_RETURN(JsonDocument doc,
                   ParseJsonBody(*body, json_size, header_length ? "JSON header" : "request body"));
  element root = doc.root();
  object obj;
  if (root.get_object().get(obj)) {
    return InvalidArgument("request: expected a JSON object, got " +
                           std::string(JsonTypeName(root.type())));
  }
  V2InferRequest req;
  std::string_view id;
  if (!obj["id"].get(id)) req.id = std::string(id);
  req.binary_data_output = GetBoolParam(obj, "binary_data_output");
  object params;
  if (!obj["parameters"].get(params)) {
    // Unsigned in Triton: a negative or out-of-range value is the client's error.
    uint64_t priority = 0, timeout = 0;
    RETURN_IF_ERROR(ReadUintParam(params, "priority",
                                  static_cast<uint64_t>(scheduler::kMaxPriority), &priority));
    RETURN_IF_ERROR(ReadUintParam(params, "timeout",
                                  static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                                  &timeout));
    req.priority = static_cast<int>(priority);
    req.timeout_us = static_cast<int64_t>(timeout);
  }

  simdjson::dom::array inputs;
  if (obj["inputs"].get(inputs)) return InvalidArgument("request: missing 'inputs' (a list)");
  if (inputs.size() == 0) return InvalidArgument("request: 'inputs' is empty");
  std::vector<InputHead> heads;
  std::set<std::string> names;
  for (element e : inputs) {
    ASSIGN_OR_RETURN(InputHead head, ParseInputHead(e, heads.size()));
    if (!names.insert(head.name).second) {
      return InvalidArgument("input '" + head.name + "' appears more than once");
    }
    heads.push_back(std::move(head));
  }

  // Binary inputs take consecutive slices of the bytes after the JSON header.
  // Each size is checked against what is left, so the sum cannot wrap round.
  const size_t available = body->size() - json_size;
  size_t binary_total = 0;
  for (const auto& head : heads) {
    if (!head.binary_size) continue;
    if (!header_length) {
      return InvalidArgument(head.what +
                             ": parameters.binary_data_size is set but the request "
                             "has no Inference-Header-Content-Length header");
    }
    if (*head.binary_size > available - binary_total) {
      return InvalidArgument(head.what + ": binary_data_size " +
                             std::to_string(*head.binary_size) + " is more than the " +
                             std::to_string(available - binary_total) +
                             " bytes left after the JSON header and the inputs before it");
    }
    binary_total += *head.binary_size;
  }
  if (header_length && binary_total != available) {
    return InvalidArgument("binary tensor data: the inputs' binary_data_size add up to " +
                           std::to_string(binary_total) + " bytes but " +
                           std::to_string(available) +
                           " bytes follow the JSON header (Inference-Header-Content-Length " +
                           std::to_string(json_size) + ")");
  }
  size_t offset = json_size;
  for (const auto& head : heads) {
    Tensor tensor;
    if (head.binary_size) {
      ASSIGN_OR_RETURN(tensor, BinaryTensor(head, body, offset));
      offset += *head.binary_size;
    } else {
      ASSIGN_OR_RETURN(tensor, DecodeFlatJson(*head.data, head.dtype, head.shape, head.what));
    }
    req.inputs.push_back({head.name, std::move(tensor)});
  }

  simdjson::dom::array outputs;
  if (!obj["outputs"].get(outputs)) {
    for (element e : outputs) {
      object out;
      std::string_view name;
      if (e.get_object().get(out) || out["name"].get(name)) {
        return InvalidArgument("outputs[" + std::to_string(req.outputs.size()) +
                               "]: expected an object with a 'name'");
      }
      req.outputs.push_back({std::string(name), GetBoolParam(out, "binary_data")});
    }
  }
  return req;
}

StatusOr<HttpResponse> WriteV2InferResponse(const scheduler::InferenceResponse& response,
                                            const V2ResponseContext& context) {
  ASSIGN_OR_RETURN(std::vector<serving::V2Output> chosen, SelectV2Outputs(response, context));

  JsonWriter w;
  w.BeginObject();
  w.Key("model_name").String(context.model_name);
  w.Key("model_version").String(std::to_string(context.model_version));
  if (!context.id.empty()) w.Key("id").String(context.id);
  w.Key("outputs").BeginArray();
  size_t binary_bytes = 0;
  for (const auto& [t, binary] : chosen) {
    w.BeginObject();
    w.Key("name").String(t.name);
    w.Key("datatype").String(DataTypeName(t.tensor.dtype()));
    w.Key("shape").BeginArray();
    for (int64_t d : t.tensor.shape()) w.Int(d);
    w.EndArray();
    if (binary) {
      w.Key("parameters").BeginObject();
      w.Key("binary_data_size").Uint(t.tensor.byte_size());
      w.EndObject();
      binary_bytes += t.tensor.byte_size();
    } else {
      w.Key("data");
      RETURN_IF_ERROR(
          WriteTensorJson(w, t.tensor, /*nested=*/false).WithContext("output '" + t.name + "'"));
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  HttpResponse r;
  r.body = w.Take();
  if (binary_bytes > 0 ||
      std::any_of(chosen.begin(), chosen.end(), [](const auto& c) { return c.binary; })) {
    size_t json_size = r.body.size();
    r.body.reserve(json_size + binary_bytes);
    for (const auto& [t, binary] : chosen) {
      if (binary)
        r.body.append(reinterpret_cast<const char*>(t.tensor.data()), t.tensor.byte_size());
    }
    r.content_type = "application/octet-stream";
    r.headers.emplace_back("Inference-Header-Content-Length", std::to_string(json_size));
  }
  return r;
}

}  // namespace inferd::http
