#include "common/tensor.h"

#include <array>
#include <utility>

namespace inferd {
namespace {

struct DataTypeInfo {
  DataType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DataTypeInfo, 11> kDataTypes = {{
    {DataType::kBool, "BOOL", 1},   {DataType::kUint8, "UINT8", 1},
    {DataType::kInt8, "INT8", 1},   {DataType::kInt16, "INT16", 2},
    {DataType::kInt32, "INT32", 4}, {DataType::kInt64, "INT64", 8},
    {DataType::kFp16, "FP16", 2},   {DataType::kBf16, "BF16", 2},
    {DataType::kFp32, "FP32", 4},   {DataType::kFp64, "FP64", 8},
    {DataType::kBytes, "BYTES", 0},
}};

}  // namespace

std::string_view DataTypeName(DataType dtype) {
  for (const auto& info : kDataTypes) {
    if (info.dtype == dtype) return info.name;
  }
  return "UNKNOWN";
}

std::optional<DataType> ParseDataType(std::string_view name) {
  for (const auto& info : kDataTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

size_t DataTypeSize(DataType dtype) {
  for (const auto& info : kDataTypes) {
    if (info.dtype == dtype) return info.size;
  }
  return 0;
}

std::string ShapeToString(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

Tensor Tensor::Allocate(DataType dtype, Shape shape) {
  int64_t n = NumElements(shape);
  std::vector<std::byte> bytes(static_cast<size_t>(n < 0 ? 0 : n) * DataTypeSize(dtype));
  return FromBytes(dtype, std::move(shape), std::move(bytes));
}

Tensor Tensor::FromBytes(DataType dtype, Shape shape, std::vector<std::byte> bytes) {
  auto owner = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = owner->data();
  t.size_ = owner->size();
  t.owner_ = std::move(owner);
  return t;
}

Tensor Tensor::Borrow(DataType dtype, Shape shape, std::shared_ptr<const void> owner,
                      const void* data, size_t size) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.owner_ = std::move(owner);
  t.data_ = static_cast<const std::byte*>(data);
  t.size_ = size;
  return t;
}

Tensor Tensor::Reshaped(Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

}  // namespace inferd
