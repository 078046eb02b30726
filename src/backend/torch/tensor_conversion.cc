#include "backend/torch/tensor_conversion.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace inferd::backend {

std::optional<at::ScalarType> ToTorchDtype(DataType dtype) {
  switch (dtype) {
    case DataType::kBool: return at::kBool;
    case DataType::kUint8: return at::kByte;
    case DataType::kInt8: return at::kChar;
    case DataType::kInt16: return at::kShort;
    case DataType::kInt32: return at::kInt;
    case DataType::kInt64: return at::kLong;
    case DataType::kFp16: return at::kHalf;
    case DataType::kBf16: return at::kBFloat16;
    case DataType::kFp32: return at::kFloat;
    case DataType::kFp64: return at::kDouble;
    case DataType::kBytes: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<DataType> FromTorchDtype(at::ScalarType dtype) {
  switch (dtype) {
    case at::kBool: return DataType::kBool;
    case at::kByte: return DataType::kUint8;
    case at::kChar: return DataType::kInt8;
    case at::kShort: return DataType::kInt16;
    case at::kInt: return DataType::kInt32;
    case at::kLong: return DataType::kInt64;
    case at::kHalf: return DataType::kFp16;
    case at::kBFloat16: return DataType::kBf16;
    case at::kFloat: return DataType::kFp32;
    case at::kDouble: return DataType::kFp64;
    default: return std::nullopt;
  }
}

StatusOr<at::Tensor> ToTorch(const Tensor& tensor, const std::string& what) {
  std::optional<at::ScalarType> dtype = ToTorchDtype(tensor.dtype());
  if (!dtype) {
    return InvalidArgument(what + ": datatype " + std::string(DataTypeName(tensor.dtype())) +
                           " is not supported by the torchscript backend");
  }
  const int64_t n = tensor.num_elements();
  if (n < 0) {
    return InvalidArgument(what + ": shape " + ShapeToString(tensor.shape()) +
                           " has a negative dim");
  }
  const size_t expected = static_cast<size_t>(n) * DataTypeSize(tensor.dtype());
  if (tensor.byte_size() != expected) {
    return InvalidArgument(what + ": shape " + ShapeToString(tensor.shape()) + " of " +
                           std::string(DataTypeName(tensor.dtype())) + " needs " +
                           std::to_string(expected) + " bytes, got " +
                           std::to_string(tensor.byte_size()));
  }
  const auto options = at::TensorOptions().dtype(*dtype).device(at::kCPU);
  std::vector<int64_t> sizes(tensor.shape().begin(), tensor.shape().end());
  if (n == 0 || tensor.data() == nullptr) return at::empty(sizes, options);
  try {
    // Bytes sliced out of a request body may be misaligned for their type;
    // those are copied once rather than handed to kernels that assume alignment.
    if (reinterpret_cast<uintptr_t>(tensor.data()) % DataTypeSize(tensor.dtype()) != 0) {
      at::Tensor copy = at::empty(sizes, options);
      std::memcpy(copy.data_ptr(), tensor.data(), expected);
      return copy;
    }
    // The deleter holds a copy of the handle, keeping the bytes' owner alive.
    return at::from_blob(const_cast<std::byte*>(tensor.data()), sizes,
                         [keep = tensor](void*) {}, options);
  } catch (const std::exception& e) {
    return Internal(what + ": cannot wrap as a torch tensor: " + e.what());
  }
}

std::vector<at::Tensor> FlattenTensors(const c10::IValue& v) {
  std::vector<at::Tensor> out;
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) if (e.isTensor()) out.push_back(e.toTensor());
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) if (e.isTensor()) out.push_back(e.toTensor());
  } else if (v.isGenericDict()) {
    for (const auto& e : v.toGenericDict()) {
      if (e.value().isTensor()) out.push_back(e.value().toTensor());
    }
  }
  return out;
}

StatusOr<Tensor> FromTorch(const at::Tensor& tensor, const std::string& what) {
  try {
    std::optional<DataType> dtype = FromTorchDtype(tensor.scalar_type());
    if (!dtype) {
      return Internal(what + ": the model returned a tensor of torch type " +
                      std::string(c10::toString(tensor.scalar_type())) +
                      ", which inferd cannot represent");
    }
    if (!tensor.device().is_cpu()) {
      return Internal(what + ": the model returned a tensor on " + tensor.device().str() +
                      "; the torchscript backend serves CPU tensors");
    }
    auto held = std::make_shared<at::Tensor>(tensor.contiguous());
    Shape shape(held->sizes().begin(), held->sizes().end());
    const size_t bytes = static_cast<size_t>(held->numel()) * held->element_size();
    const void* data = held->data_ptr();
    return Tensor::Borrow(*dtype, std::move(shape), std::shared_ptr<const void>(held, data),
                          data, bytes);
  } catch (const std::exception& e) {
    return Internal(what + ": cannot convert the output: " + e.what());
  }
}

}  // namespace inferd::backend
