#include "bench/grpc_request.h"

#include <simdjson.h>

#include "bench/request_set.h"
#include "grpc_predict_v2.pb.h"

namespace inferd::bench {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

Status Bad(const std::string& source, const std::string& what) {
  return InvalidArgument("--input '" + source + "': " + what);
}

StatusOr<std::string> FromV2Binary(const BenchOptions& o, const std::string& source,
                                   std::string_view body, std::size_t header_length) {
  simdjson::dom::parser parser;
  element root;
  if (parser.parse(body.data(), header_length).get(root)) {
    return Bad(source, "the JSON header does not parse");
  }
  inference::ModelInferRequest req;
  req.set_model_name(o.model);
  req.set_model_version(o.version);
  simdjson::dom::array inputs;
  if (root["inputs"].get(inputs)) return Bad(source, "the JSON header has no 'inputs' list");
  std::size_t offset = header_length;
  for (element e : inputs) {
    std::string_view name, datatype;
    simdjson::dom::array shape;
    uint64_t size = 0;
    if (e["name"].get(name) || e["datatype"].get(datatype) || e["shape"].get(shape) ||
        e["parameters"]["binary_data_size"].get(size)) {
      return Bad(source,
                 "every input needs name, datatype, shape and parameters.binary_data_size "
                 "(gRPC sends them as raw_input_contents)");
    }
    auto* in = req.add_inputs();
    in->set_name(std::string(name));
    in->set_datatype(std::string(datatype));
    for (element d : shape) {
      int64_t v = 0;
      if (d.get(v)) return Bad(source, "shape of '" + std::string(name) + "' is not integers");
      in->add_shape(v);
    }
    if (size > body.size() - offset) {
      return Bad(source, "binary_data_size of '" + std::string(name) + "' runs past the file");
    }
    req.add_raw_input_contents(std::string(body.substr(offset, size)));
    offset += size;
  }
  if (offset != body.size()) {
    return Bad(source, std::to_string(body.size() - offset) +
                           " bytes after the inputs' binary_data_size add up");
  }
  simdjson::dom::array outputs;
  if (!root["outputs"].get(outputs)) {
    for (element e : outputs) {
      std::string_view name;
      if (e["name"].get(name)) return Bad(source, "an output has no 'name'");
      req.add_outputs()->set_name(std::string(name));
    }
  }
  return req.SerializeAsString();
}

StatusOr<std::string> FromRaw(const BenchOptions& o, std::string_view body) {
  inference::ModelInferRequest req;
  req.set_model_name(o.model);
  req.set_model_version(o.version);
  auto* in = req.add_inputs();
  in->set_name("input");
  in->set_datatype("BYTES");
  in->add_shape(1);
  std::string element(4 + body.size(), '\0');
  const uint32_t n = static_cast<uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) element[i] = static_cast<char>((n >> (8 * i)) & 0xff);  // LE
  element.replace(4, body.size(), body);
  req.add_raw_input_contents(std::move(element));
  return req.SerializeAsString();
}

}  // namespace

StatusOr<std::string> PrepareGrpcRequest(const BenchOptions& o, const std::string& source,
                                         std::string_view body) {
  switch (o.form) {
    case RequestForm::kRaw:
      return FromRaw(o, body);
    case RequestForm::kV2Binary: {
      std::size_t header_length = 0;
      if (o.header_length >= 0) {
        header_length = static_cast<std::size_t>(o.header_length);
        if (header_length > body.size()) return Bad(source, "--header-length exceeds the file");
      } else {
        ASSIGN_OR_RETURN(header_length, JsonHeaderLength(body));
      }
      return FromV2Binary(o, source, body, header_length);
    }
    case RequestForm::kV2Json:
      break;
  }
  return InvalidArgument(
      "--protocol grpc takes --form v2binary (inputs as raw_input_contents) or --form raw (the "
      "file as one BYTES input)");
}

}  // namespace inferd::bench
