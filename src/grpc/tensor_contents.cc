#include "grpc/tensor_contents.h"

#include <cstring>
#include <limits>
#include <string>

#include "serving/bytes_elements.h"

namespace inferd::grpc {
namespace {

using Contents = inference::InferTensorContents;

// The field a datatype's elements go in, for messages.
std::string_view FieldFor(DataType dtype) {
  switch (dtype) {
    case DataType::kBool:
      return "bool_contents";
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
      return "int_contents";
    case DataType::kInt64:
      return "int64_contents";
    case DataType::kUint8:
      return "uint_contents";
    case DataType::kFp32:
      return "fp32_contents";
    case DataType::kFp64:
      return "fp64_contents";
    case DataType::kBytes:
      return "bytes_contents";
    case DataType::kFp16:
    case DataType::kBf16:
      break;
  }
  return "";
}

// The typed fields that hold elements, for "got int_contents" hints.
std::string FilledFields(const Contents& c) {
  std::string out;
  auto add = [&](int n, const char* name) {
    if (n > 0) out += std::string(out.empty() ? "" : ", ") + name;
  };
  add(c.bool_contents_size(), "bool_contents");
  add(c.int_contents_size(), "int_contents");
  add(c.int64_contents_size(), "int64_contents");
  add(c.uint_contents_size(), "uint_contents");
  add(c.uint64_contents_size(), "uint64_contents");
  add(c.fp32_contents_size(), "fp32_contents");
  add(c.fp64_contents_size(), "fp64_contents");
  add(c.bytes_contents_size(), "bytes_contents");
  return out;
}

template <typename T, typename Field>
StatusOr<Tensor> Narrow(const Field& field, DataType dtype, Shape shape, std::string_view what) {
  Tensor t = Tensor::Allocate(dtype, std::move(shape));
  T* out = t.mutable_data_as<T>();
  for (int i = 0; i < field.size(); ++i) {
    auto v = field.Get(i);
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
      return InvalidArgument(
          std::string(what) + ": element " + std::to_string(i) + ": expected an integer in [" +
          std::to_string(static_cast<int64_t>(std::numeric_limits<T>::min())) + ", " +
          std::to_string(static_cast<int64_t>(std::numeric_limits<T>::max())) + "] for " +
          std::string(DataTypeName(dtype)) + ", got " + std::to_string(v));
    }
    out[i] = static_cast<T>(v);
  }
  return t;
}

template <typename T, typename Field>
Tensor Copy(const Field& field, DataType dtype, Shape shape) {
  Tensor t = Tensor::Allocate(dtype, std::move(shape));
  T* out = t.mutable_data_as<T>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
  return t;
}

template <typename T, typename Field>
void Append(const Tensor& t, Field* field) {
  const T* in = t.data_as<T>();
  int64_t n = t.num_elements();
  field->Reserve(static_cast<int>(n));
  for (int64_t i = 0; i < n; ++i) field->Add(in[i]);
}

int FieldSize(const Contents& c, DataType dtype) {
  switch (dtype) {
    case DataType::kBool:
      return c.bool_contents_size();
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
      return c.int_contents_size();
    case DataType::kInt64:
      return c.int64_contents_size();
    case DataType::kUint8:
      return c.uint_contents_size();
    case DataType::kFp32:
      return c.fp32_contents_size();
    case DataType::kFp64:
      return c.fp64_contents_size();
    case DataType::kBytes:
      return c.bytes_contents_size();
    case DataType::kFp16:
    case DataType::kBf16:
      break;
  }
  return 0;
}

}  // namespace

bool HasTypedContents(DataType dtype) { return !FieldFor(dtype).empty(); }

StatusOr<Tensor> TensorFromContents(const Contents& contents, DataType dtype, Shape shape,
                                    std::string_view what) {
  const std::string name(DataTypeName(dtype));
  if (!HasTypedContents(dtype)) {
    return InvalidArgument(std::string(what) + ": " + name +
                           " has no typed contents field; send it in raw_input_contents");
  }
  const int64_t n = NumElements(shape);
  const int got = FieldSize(contents, dtype);
  if (got != n) {
    std::string filled = FilledFields(contents);
    std::string hint = got == 0 && !filled.empty() ? " (elements found in " + filled + ")" : "";
    return InvalidArgument(std::string(what) + ": expected " + std::to_string(n) + " elements in " +
                           std::string(FieldFor(dtype)) + " for " + name + " shape " +
                           ShapeToString(shape) + ", got " + std::to_string(got) + hint);
  }
  switch (dtype) {
    case DataType::kBool:
      return Copy<bool>(contents.bool_contents(), dtype, std::move(shape));
    case DataType::kInt8:
      return Narrow<int8_t>(contents.int_contents(), dtype, std::move(shape), what);
    case DataType::kInt16:
      return Narrow<int16_t>(contents.int_contents(), dtype, std::move(shape), what);
    case DataType::kInt32:
      return Copy<int32_t>(contents.int_contents(), dtype, std::move(shape));
    case DataType::kInt64:
      return Copy<int64_t>(contents.int64_contents(), dtype, std::move(shape));
    case DataType::kUint8:
      return Narrow<uint8_t>(contents.uint_contents(), dtype, std::move(shape), what);
    case DataType::kFp32:
      return Copy<float>(contents.fp32_contents(), dtype, std::move(shape));
    case DataType::kFp64:
      return Copy<double>(contents.fp64_contents(), dtype, std::move(shape));
    case DataType::kBytes: {
      std::vector<std::byte> bytes;
      for (const std::string& e : contents.bytes_contents()) serving::AppendBytesElement(bytes, e);
      return Tensor::FromBytes(dtype, std::move(shape), std::move(bytes));
    }
    case DataType::kFp16:
    case DataType::kBf16:
      break;
  }
  return Internal("unhandled datatype " + name);
}

Status WriteContents(const Tensor& t, Contents* contents) {
  switch (t.dtype()) {
    case DataType::kBool:
      Append<bool>(t, contents->mutable_bool_contents());
      return Status::Ok();
    case DataType::kInt8:
      Append<int8_t>(t, contents->mutable_int_contents());
      return Status::Ok();
    case DataType::kInt16:
      Append<int16_t>(t, contents->mutable_int_contents());
      return Status::Ok();
    case DataType::kInt32:
      Append<int32_t>(t, contents->mutable_int_contents());
      return Status::Ok();
    case DataType::kInt64:
      Append<int64_t>(t, contents->mutable_int64_contents());
      return Status::Ok();
    case DataType::kUint8:
      Append<uint8_t>(t, contents->mutable_uint_contents());
      return Status::Ok();
    case DataType::kFp32:
      Append<float>(t, contents->mutable_fp32_contents());
      return Status::Ok();
    case DataType::kFp64:
      Append<double>(t, contents->mutable_fp64_contents());
      return Status::Ok();
    case DataType::kBytes: {
      ASSIGN_OR_RETURN(auto elements, serving::SplitBytesElements(t.data(), t.byte_size(),
                                                                  t.num_elements(), "output"));
      for (std::string_view e : elements) contents->add_bytes_contents(std::string(e));
      return Status::Ok();
    }
    case DataType::kFp16:
    case DataType::kBf16:
      break;
  }
  return InvalidArgument(std::string(DataTypeName(t.dtype())) +
                         " has no typed contents field: it is answered in raw_output_contents");
}

}  // namespace inferd::grpc
