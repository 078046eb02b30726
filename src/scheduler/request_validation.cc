#include "scheduler/request_validation.h"

#include <cstring>

namespace inferd::scheduler {
namespace {

std::string Names(const std::vector<config::TensorSpec>& specs) {
  std::string out;
  for (const auto& s : specs) out += (out.empty() ? "'" : ", '") + s.name + "'";
  return out;
}

std::string ExpectedShape(const config::TensorSpec& spec, int max_batch_size) {
  Shape full = {-1};
  full.insert(full.end(), spec.dims.begin(), spec.dims.end());
  return ShapeToString(full) + " (batch of 1.." + std::to_string(max_batch_size) + " first, -1 = any)";
}

}  // namespace

Status ValidateBytesTensor(const std::string& name, const Tensor& tensor) {
  size_t offset = 0;
  int64_t count = 0;
  const std::byte* p = tensor.data();
  while (offset < tensor.byte_size()) {
    if (tensor.byte_size() - offset < 4) {
      return InvalidArgument("input '" + name + "': BYTES data ends inside an element length");
    }
    uint32_t len;
    std::memcpy(&len, p + offset, 4);
    offset += 4;
    if (tensor.byte_size() - offset < len) {
      return InvalidArgument("input '" + name + "': BYTES element " + std::to_string(count) +
                             " claims " + std::to_string(len) + " bytes but only " +
                             std::to_string(tensor.byte_size() - offset) + " remain");
    }
    offset += len;
    ++count;
  }
  if (count != tensor.num_elements()) {
    return InvalidArgument("input '" + name + "': shape " + ShapeToString(tensor.shape()) +
                           " needs " + std::to_string(tensor.num_elements()) +
                           " BYTES elements, got " + std::to_string(count));
  }
  return Status::Ok();
}

StatusOr<int> ValidateRequest(const config::ModelConfig& config, bool has_preprocess,
                              InferenceRequest* request) {
  const int max_batch = config.max_batch_size;
  if (!request->raw.empty()) {
    if (config.preprocess.kind == config::PreprocessKind::kNone || !has_preprocess) {
      return InvalidArgument("model '" + config.name +
                             "' takes tensors (inputs " + Names(config.inputs) +
                             "), not a raw payload: it has no `preprocess` in its config");
    }
    if (!request->inputs.empty()) {
      return InvalidArgument("a request carries either raw payloads or tensors, not both");
    }
    if (static_cast<int>(request->raw.size()) > max_batch) {
      return InvalidArgument("request carries " + std::to_string(request->raw.size()) +
                             " items, more than max_batch_size " + std::to_string(max_batch));
    }
    for (size_t i = 0; i < request->raw.size(); ++i) {
      if (request->raw[i].bytes.empty()) {
        return InvalidArgument("item " + std::to_string(i) + " of the request is empty");
      }
    }
    return static_cast<int>(request->raw.size());
  }

  std::vector<NamedTensor> ordered;
  ordered.reserve(config.inputs.size());
  for (const auto& in : request->inputs) {
    bool known = false;
    for (const auto& spec : config.inputs) known |= (spec.name == in.name);
    if (!known) {
      return InvalidArgument("unexpected input '" + in.name + "' for model '" + config.name +
                             "' (its inputs: " + Names(config.inputs) + ")");
    }
  }
  int64_t batch = -1;
  for (const auto& spec : config.inputs) {
    const NamedTensor* found = nullptr;
    for (const auto& in : request->inputs) {
      if (in.name != spec.name) continue;
      if (found) return InvalidArgument("input '" + spec.name + "' is given twice");
      found = &in;
    }
    if (!found) {
      return InvalidArgument("missing input '" + spec.name + "' for model '" + config.name +
                             "' (its inputs: " + Names(config.inputs) + ")");
    }
    const Tensor& t = found->tensor;
    if (t.dtype() != spec.dtype) {
      return InvalidArgument("input '" + spec.name + "': expected datatype " +
                             std::string(DataTypeName(spec.dtype)) + ", got " +
                             std::string(DataTypeName(t.dtype())));
    }
    const Shape& shape = t.shape();
    bool shape_ok = shape.size() == spec.dims.size() + 1 && shape[0] >= 1 && shape[0] <= max_batch;
    for (size_t d = 0; shape_ok && d < spec.dims.size(); ++d) {
      shape_ok = spec.dims[d] == -1 ? shape[d + 1] >= 0 : shape[d + 1] == spec.dims[d];
    }
    if (!shape_ok) {
      return InvalidArgument("input '" + spec.name + "': expected shape " +
                             ExpectedShape(spec, max_batch) + ", got " + ShapeToString(shape));
    }
    if (batch >= 0 && shape[0] != batch) {
      return InvalidArgument("input '" + spec.name + "': batch size " + std::to_string(shape[0]) +
                             " differs from the other inputs' " + std::to_string(batch));
    }
    batch = shape[0];
    if (spec.dtype == DataType::kBytes) {
      RETURN_IF_ERROR(ValidateBytesTensor(spec.name, t));
    } else {
      const size_t want = static_cast<size_t>(t.num_elements()) * DataTypeSize(spec.dtype);
      if (t.byte_size() != want) {
        return InvalidArgument("input '" + spec.name + "': shape " + ShapeToString(shape) +
                               " needs " + std::to_string(want) + " bytes of " +
                               std::string(DataTypeName(spec.dtype)) + ", got " +
                               std::to_string(t.byte_size()));
      }
    }
    ordered.push_back(*found);
  }
  request->inputs = std::move(ordered);
  return static_cast<int>(batch);
}

size_t RequestBytes(const InferenceRequest& request) {
  size_t bytes = request.id.size();
  for (const auto& in : request.inputs) bytes += in.tensor.byte_size();
  for (const auto& raw : request.raw) bytes += raw.bytes.size() + raw.content_type.size();
  return bytes;
}

}  // namespace inferd::scheduler
