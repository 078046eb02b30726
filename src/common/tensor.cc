#include "common/tensor.h"

#include <array>
#include <stdexcept>
#include <utility>

#include "common/checked_math.h"

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

std::string DataTypeList() {
  std::string out;
  for (const auto& info : kDataTypes) {
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  return out;
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

namespace {

// Product of the non-zero dims, or nullopt past kMaxTensorElements or for a
// negative dim; `zero` tells whether a dim is 0.
std::optional<int64_t> NonZeroProduct(const Shape& shape, bool* zero) {
  int64_t n = 1;
  *zero = false;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      *zero = true;
      continue;
    }
    auto p = CheckedMul(n, d);
    if (!p || *p > kMaxTensorElements) return std::nullopt;
    n = *p;
  }
  return n;
}

}  // namespace

int64_t NumElements(const Shape& shape) {
  bool zero = false;
  auto n = NonZeroProduct(shape, &zero);
  if (!n) return -1;
  return zero ? 0 : *n;
}

Status CheckShape(const Shape& shape, std::string_view what) {
  for (int64_t d : shape) {
    if (d < 0) {
      return InvalidArgument(std::string(what) + ": shape " + ShapeToString(shape) +
                             " has a negative dimension");
    }
  }
  bool zero = false;
  if (!NonZeroProduct(shape, &zero)) {
    return InvalidArgument(std::string(what) + ": shape " + ShapeToString(shape) +
                           " is too large (more than 2^40 elements" +
                           (zero ? " in its non-zero dimensions)" : ")"));
  }
  return Status::Ok();
}

int64_t ByteSize(DataType dtype, const Shape& shape) {
  const int64_t n = NumElements(shape);
  return n < 0 ? -1 : n * static_cast<int64_t>(DataTypeSize(dtype));
}

namespace {

// The bytes a new tensor of `shape` needs. A tensor whose bytes are fewer
// than its shape says would turn every later read into an overflow: an
// invalid shape here is a caller's bug, thrown as std::invalid_argument.
size_t AllocationBytes(const char* who, DataType dtype, const Shape& shape) {
  const int64_t bytes = ByteSize(dtype, shape);
  if (bytes < 0) {
    throw std::invalid_argument(std::string(who) + ": invalid shape " + ShapeToString(shape));
  }
  return static_cast<size_t>(bytes);
}

}  // namespace

Tensor Tensor::Allocate(DataType dtype, Shape shape) {
  std::vector<std::byte> bytes(AllocationBytes("Tensor::Allocate", dtype, shape));
  return FromBytes(dtype, std::move(shape), std::move(bytes));
}

Tensor Tensor::AllocateUninitialized(DataType dtype, Shape shape) {
  const size_t size = AllocationBytes("Tensor::AllocateUninitialized", dtype, shape);
  // new T[n] default-initialises: no memset. The shared_ptr owns the array.
  std::shared_ptr<std::byte[]> owner(new std::byte[size]);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = owner.get();
  t.size_ = size;
  t.owner_ = std::move(owner);
  return t;
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
