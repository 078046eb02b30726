#include "grpc/infer_codec.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "grpc/tensor_contents.h"
#include "serving/bytes_elements.h"

namespace inferd::grpc {
namespace {

using inference::InferParameter;
using inference::ModelInferRequest;
using Parameters = google::protobuf::Map<std::string, InferParameter>;

StatusOr<Shape> CheckShape(const google::protobuf::RepeatedField<int64_t>& dims,
                           const std::string& what) {
  Shape shape(dims.begin(), dims.end());
  for (int64_t d : shape) {
    if (d < 0) {
      return InvalidArgument(what + ": 'shape' must hold non-negative integers, got " +
                             ShapeToString(shape));
    }
  }
  // The one shape rule (common/tensor.h): a 0 dim does not excuse the others.
  RETURN_IF_ERROR(::inferd::CheckShape(shape, what));
  return shape;
}

StatusOr<bool> BoolParam(const Parameters& params, const std::string& key,
                         const std::string& where) {
  auto it = params.find(key);
  if (it == params.end()) return false;
  if (it->second.parameter_choice_case() != InferParameter::kBoolParam) {
    return InvalidArgument(where + "parameters." + key + " must be a bool_param");
  }
  return it->second.bool_param();
}

StatusOr<int64_t> IntParam(const Parameters& params, const std::string& key) {
  auto it = params.find(key);
  if (it == params.end()) return int64_t{0};
  if (it->second.parameter_choice_case() != InferParameter::kInt64Param) {
    return InvalidArgument("request: parameters." + key + " must be an int64_param");
  }
  return it->second.int64_param();
}

StatusOr<Tensor> RawTensor(const std::string& raw, size_t index, DataType dtype, Shape shape,
                           const std::string& what,
                           const std::shared_ptr<const ModelInferRequest>& owner) {
  const std::string where = "raw_input_contents[" + std::to_string(index) + "]";
  int64_t n = NumElements(shape);
  if (dtype == DataType::kBytes) {
    RETURN_IF_ERROR(serving::SplitBytesElements(reinterpret_cast<const std::byte*>(raw.data()),
                                                raw.size(), n, what)
                        .status());
  } else {
    size_t want = static_cast<size_t>(n) * DataTypeSize(dtype);
    if (want != raw.size()) {
      return InvalidArgument(what + ": " + where + " is " + std::to_string(raw.size()) +
                             " bytes but shape " + ShapeToString(shape) + " of " +
                             std::string(DataTypeName(dtype)) + " needs " + std::to_string(want));
    }
  }
  // Borrow when aligned for the datatype (typed loads from a misaligned
  // pointer are undefined behaviour); else copy.
  size_t align = std::max<size_t>(1, DataTypeSize(dtype));
  if (reinterpret_cast<uintptr_t>(raw.data()) % align == 0) {
    return Tensor::Borrow(dtype, std::move(shape), owner, raw.data(), raw.size());
  }
  std::vector<std::byte> copy(raw.size());
  if (!raw.empty()) std::memcpy(copy.data(), raw.data(), raw.size());
  return Tensor::FromBytes(dtype, std::move(shape), std::move(copy));
}

}  // namespace

StatusOr<serving::V2InferRequest> ParseModelInferRequest(
    const std::shared_ptr<const ModelInferRequest>& owner) {
  const ModelInferRequest& req = *owner;
  serving::V2InferRequest out;
  out.id = req.id();
  ASSIGN_OR_RETURN(out.binary_data_output,
                   BoolParam(req.parameters(), "binary_data_output", "request: "));
  // Unsigned in Triton: a negative or out-of-range value is the client's error.
  ASSIGN_OR_RETURN(int64_t priority, IntParam(req.parameters(), "priority"));
  if (priority < 0 || priority > scheduler::kMaxPriority) {
    return InvalidArgument("parameters.priority: expected an integer from 0 to " +
                           std::to_string(scheduler::kMaxPriority) + ", got " +
                           std::to_string(priority));
  }
  out.priority = static_cast<int>(priority);
  ASSIGN_OR_RETURN(int64_t timeout, IntParam(req.parameters(), "timeout"));
  if (timeout < 0) {
    return InvalidArgument("parameters.timeout: expected an integer from 0 to " +
                           std::to_string(INT64_MAX) + ", got " + std::to_string(timeout));
  }
  out.timeout_us = timeout;

  if (req.inputs_size() == 0) return InvalidArgument("request: 'inputs' is empty");
  const bool raw = req.raw_input_contents_size() > 0;
  if (raw && req.raw_input_contents_size() != req.inputs_size()) {
    return InvalidArgument("request: " + std::to_string(req.inputs_size()) + " inputs but " +
                           std::to_string(req.raw_input_contents_size()) +
                           " raw_input_contents; send one per input, in order");
  }
  std::set<std::string> names;
  for (int i = 0; i < req.inputs_size(); ++i) {
    const auto& in = req.inputs(i);
    if (in.name().empty()) {
      return InvalidArgument("inputs[" + std::to_string(i) + "]: missing 'name'");
    }
    const std::string what = "input '" + in.name() + "'";
    if (!names.insert(in.name()).second) {
      return InvalidArgument("input '" + in.name() + "' appears more than once");
    }
    auto dtype = ParseDataType(in.datatype());
    if (!dtype) {
      return InvalidArgument(what + ": unknown datatype '" + in.datatype() + "'; expected one of " +
                             DataTypeList());
    }
    ASSIGN_OR_RETURN(Shape shape, CheckShape(in.shape(), what));
    Tensor tensor;
    if (raw) {
      if (in.has_contents() && in.contents().ByteSizeLong() > 0) {
        return InvalidArgument(what +
                               ": has typed contents but the request uses raw_input_contents; "
                               "send one or the other for every input");
      }
      ASSIGN_OR_RETURN(
          tensor, RawTensor(req.raw_input_contents(i), i, *dtype, std::move(shape), what, owner));
    } else {
      ASSIGN_OR_RETURN(tensor, TensorFromContents(in.contents(), *dtype, std::move(shape), what));
    }
    out.inputs.push_back({in.name(), std::move(tensor)});
  }
  // The answer's form follows the request's: raw in, raw out.
  out.binary_data_output = out.binary_data_output || raw;

  for (int i = 0; i < req.outputs_size(); ++i) {
    const auto& o = req.outputs(i);
    if (o.name().empty()) {
      return InvalidArgument("outputs[" + std::to_string(i) + "]: expected a 'name'");
    }
    ASSIGN_OR_RETURN(bool binary,
                     BoolParam(o.parameters(), "binary_data", "output '" + o.name() + "': "));
    out.outputs.push_back({o.name(), binary});
  }
  return out;
}

Status WriteModelInferResponse(const scheduler::InferenceResponse& response,
                               const serving::V2ResponseContext& context,
                               inference::ModelInferResponse* out) {
  ASSIGN_OR_RETURN(std::vector<serving::V2Output> chosen,
                   serving::SelectV2Outputs(response, context));
  // All raw or all typed (the protocol allows no mix).
  bool raw = false;
  for (const auto& o : chosen) raw = raw || o.binary || !HasTypedContents(o.tensor.tensor.dtype());
  out->set_model_name(context.model_name);
  out->set_model_version(std::to_string(context.model_version));
  if (!context.id.empty()) out->set_id(context.id);
  for (const auto& [t, binary] : chosen) {
    auto* o = out->add_outputs();
    o->set_name(t.name);
    o->set_datatype(std::string(DataTypeName(t.tensor.dtype())));
    for (int64_t d : t.tensor.shape()) o->add_shape(d);
    if (raw) {
      out->add_raw_output_contents(reinterpret_cast<const char*>(t.tensor.data()),
                                   t.tensor.byte_size());
    } else {
      RETURN_IF_ERROR(
          WriteContents(t.tensor, o->mutable_contents()).WithContext("output '" + t.name + "'"));
    }
  }
  return Status::Ok();
}

}  // namespace inferd::grpc
