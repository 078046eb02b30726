// Tensor: a dtype, a shape and bytes, owned or borrowed, with no framework type.
//
// The server core and the front ends see only this type; backend/torch/ converts
// it to and from torch::Tensor. Data is contiguous, row-major. A Tensor is a
// cheap handle: copies share the same bytes (the owner is ref-counted), so a
// tensor may borrow the request body it was parsed from without copying.
// BYTES tensors hold their elements in the KServe v2 binary form: each element
// is a 4-byte little-endian length followed by that many bytes.
// Thread-safety: const methods may be called concurrently; writing the bytes
// while another thread reads them is the caller's race.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace inferd {

enum class DataType {
  kBool, kUint8, kInt8, kInt16, kInt32, kInt64, kFp16, kBf16, kFp32, kFp64, kBytes,
};

// KServe v2 names: "BOOL", "UINT8", ..., "FP32", "BYTES".
std::string_view DataTypeName(DataType dtype);
// Every name, in enum order, joined by ", " ("BOOL, UINT8, ..., BYTES"): for
// the error that says which datatypes a request may use.
std::string DataTypeList();
std::optional<DataType> ParseDataType(std::string_view name);
// Bytes per element; 0 for BYTES (variable).
size_t DataTypeSize(DataType dtype);

using Shape = std::vector<int64_t>;

std::string ShapeToString(const Shape& shape);  // "[1,3,224,224]"

// The most elements a tensor may have: 2^40, so that element counts times any
// element size, and offsets into them, stay far from int64/size_t overflow.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// Product of dims; -1 if the shape is not valid (see CheckShape). Never overflows.
int64_t NumElements(const Shape& shape);
// A valid shape has no negative dim and the product of its NON-ZERO dims is at
// most kMaxTensorElements: a 0 dim does not excuse the others, because padding
// and batching take dims from several shapes (a [0, 2^62] and a [1, 1] pad to
// [2, 2^62]). kInvalidArgument naming `what` ("input 'x'") otherwise.
Status CheckShape(const Shape& shape, std::string_view what);
// NumElements(shape) * DataTypeSize(dtype); -1 for an invalid shape.
int64_t ByteSize(DataType dtype, const Shape& shape);

class Tensor {
 public:
  Tensor() = default;

  // A zero-filled tensor that owns its bytes. `shape` must be valid
  // (NumElements >= 0; else std::invalid_argument): callers check shapes a
  // client sent with CheckShape.
  static Tensor Allocate(DataType dtype, Shape shape);
  // The same without the zero fill: the bytes are indeterminate until written.
  // Only for a tensor whose every byte the caller writes before anyone reads
  // it (a pre-processed image, an assembled batch); a zero fill there is pure
  // cost (2.4% of executor time at MobileNetV3-small's batch 8).
  static Tensor AllocateUninitialized(DataType dtype, Shape shape);
  // Owns `bytes` (moved in). For BYTES, `bytes` is the v2 serialized form.
  static Tensor FromBytes(DataType dtype, Shape shape, std::vector<std::byte> bytes);
  // Borrows `size` bytes at `data`, kept alive by `owner`.
  static Tensor Borrow(DataType dtype, Shape shape, std::shared_ptr<const void> owner,
                       const void* data, size_t size);

  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return NumElements(shape_); }
  size_t byte_size() const { return size_; }
  const std::byte* data() const { return data_; }
  // Only for tensors made by Allocate*, FromBytes or a TensorPool, before they
  // are shared.
  std::byte* mutable_data() { return const_cast<std::byte*>(data_); }

  template <typename T>
  const T* data_as() const { return reinterpret_cast<const T*>(data_); }
  template <typename T>
  T* mutable_data_as() { return reinterpret_cast<T*>(mutable_data()); }

  // The same bytes under another shape with the same element count.
  Tensor Reshaped(Shape shape) const;

 private:
  DataType dtype_ = DataType::kFp32;
  Shape shape_;
  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

}  // namespace inferd
