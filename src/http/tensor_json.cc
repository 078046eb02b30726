#include "http/tensor_json.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "http/internal/half.h"

namespace inferd::http {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

std::string Quote(std::string_view what) { return std::string(what); }

std::string Preview(element e) {
  std::string text = simdjson::minify(e);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// Collects converted elements of one datatype into bytes.
class ElementSink {
 public:
  ElementSink(DataType dtype, std::string_view what, size_t expected)
      : dtype_(dtype), what_(what) {
    if (dtype != DataType::kBytes) bytes_.reserve(expected * DataTypeSize(dtype));
  }

  Status Add(element e) {
    Status st = Convert(e);
    ++count_;
    return st;
  }
  int64_t count() const { return count_; }
  std::vector<std::byte> Take() { return std::move(bytes_); }

 private:
  template <typename T>
  void Push(T v) {
    size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
  }

  Status Mismatch(element e, std::string_view expected) const {
    return InvalidArgument(Quote(what_) + ": element " + std::to_string(count_) + ": expected " +
                           std::string(expected) + " for " + std::string(DataTypeName(dtype_)) +
                           ", got " + Preview(e));
  }

  template <typename T>
  Status PushInteger(element e) {
    constexpr auto lo = std::numeric_limits<T>::min();
    constexpr auto hi = std::numeric_limits<T>::max();
    std::string expected = "an integer in [" + std::to_string(static_cast<int64_t>(lo)) + ", " +
                           std::to_string(static_cast<int64_t>(hi)) + "]";
    int64_t v = 0;
    switch (e.type()) {
      case element_type::INT64: v = e.get_int64().value_unsafe(); break;
      case element_type::UINT64: {
        uint64_t u = e.get_uint64().value_unsafe();
        if (u > static_cast<uint64_t>(hi)) return Mismatch(e, expected);
        v = static_cast<int64_t>(u);
        break;
      }
      case element_type::DOUBLE: {
        // 2.0 is accepted (what numpy-produced JSON often holds); 2.5 is not.
        double d = e.get_double().value_unsafe();
        if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) ||
            d > static_cast<double>(hi)) {
          return Mismatch(e, expected);
        }
        v = static_cast<int64_t>(d);
        break;
      }
      default: return Mismatch(e, expected);
    }
    if (v < static_cast<int64_t>(lo) || v > static_cast<int64_t>(hi)) return Mismatch(e, expected);
    Push(static_cast<T>(v));
    return Status::Ok();
  }

  Status ToDouble(element e, double* out) const {
    switch (e.type()) {
      case element_type::INT64: *out = static_cast<double>(e.get_int64().value_unsafe()); break;
      case element_type::UINT64: *out = static_cast<double>(e.get_uint64().value_unsafe()); break;
      case element_type::DOUBLE: *out = e.get_double().value_unsafe(); break;
      default: return Mismatch(e, "a number");
    }
    return Status::Ok();
  }

  Status Convert(element e) {
    switch (dtype_) {
      case DataType::kBool: {
        if (e.type() == element_type::BOOL) {
          Push<uint8_t>(e.get_bool().value_unsafe() ? 1 : 0);
          return Status::Ok();
        }
        if (e.type() == element_type::INT64) {
          int64_t v = e.get_int64().value_unsafe();
          if (v == 0 || v == 1) {
            Push<uint8_t>(static_cast<uint8_t>(v));
            return Status::Ok();
          }
        }
        return Mismatch(e, "true or false");
      }
      case DataType::kUint8: return PushInteger<uint8_t>(e);
      case DataType::kInt8: return PushInteger<int8_t>(e);
      case DataType::kInt16: return PushInteger<int16_t>(e);
      case DataType::kInt32: return PushInteger<int32_t>(e);
      case DataType::kInt64: return PushInteger<int64_t>(e);
      case DataType::kFp16:
      case DataType::kBf16:
      case DataType::kFp32:
      case DataType::kFp64: {
        double d = 0;
        RETURN_IF_ERROR(ToDouble(e, &d));
        if (dtype_ == DataType::kFp64) Push(d);
        else if (dtype_ == DataType::kFp32) Push(static_cast<float>(d));
        else if (dtype_ == DataType::kFp16) Push(internal::FloatToFp16(static_cast<float>(d)));
        else Push(internal::FloatToBf16(static_cast<float>(d)));
        return Status::Ok();
      }
      case DataType::kBytes: {
        std::string_view s;
        if (e.get_string().get(s)) return Mismatch(e, "a string");
        AppendBytesElement(bytes_, s);
        return Status::Ok();
      }
    }
    return Internal("unknown datatype");
  }

  DataType dtype_;
  std::string_view what_;
  std::vector<std::byte> bytes_;
  int64_t count_ = 0;
};

Status Flatten(element e, ElementSink& sink) {
  simdjson::dom::array arr;
  if (e.get_array().get(arr) == simdjson::SUCCESS) {
    for (element child : arr) RETURN_IF_ERROR(Flatten(child, sink));
    return Status::Ok();
  }
  return sink.Add(e);
}

Status FillNested(element e, const Shape& shape, size_t depth, ElementSink& sink,
                  std::string_view what) {
  simdjson::dom::array arr;
  bool is_array = e.get_array().get(arr) == simdjson::SUCCESS;
  if (depth == shape.size()) {
    if (is_array) {
      return InvalidArgument(Quote(what) + ": ragged nested list: expected a value at depth " +
                             std::to_string(depth) + ", got a list " + Preview(e));
    }
    return sink.Add(e);
  }
  if (!is_array) {
    return InvalidArgument(Quote(what) + ": ragged nested list: expected a list of " +
                           std::to_string(shape[depth]) + " at depth " + std::to_string(depth) +
                           ", got " + Preview(e));
  }
  if (static_cast<int64_t>(arr.size()) != shape[depth]) {
    return InvalidArgument(Quote(what) + ": ragged nested list: a list at depth " +
                           std::to_string(depth) + " has " + std::to_string(arr.size()) +
                           " elements, expected " + std::to_string(shape[depth]) +
                           " like the first one");
  }
  for (element child : arr) RETURN_IF_ERROR(FillNested(child, shape, depth + 1, sink, what));
  return Status::Ok();
}

uint16_t Load16(const std::byte* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

template <typename T>
T LoadAs(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Writes element `i` of a fixed-size tensor.
void WriteElement(JsonWriter& w, DataType dtype, const std::byte* base, int64_t i) {
  const std::byte* p = base + i * static_cast<int64_t>(DataTypeSize(dtype));
  switch (dtype) {
    case DataType::kBool: w.Bool(LoadAs<uint8_t>(p) != 0); break;
    case DataType::kUint8: w.Uint(LoadAs<uint8_t>(p)); break;
    case DataType::kInt8: w.Int(LoadAs<int8_t>(p)); break;
    case DataType::kInt16: w.Int(LoadAs<int16_t>(p)); break;
    case DataType::kInt32: w.Int(LoadAs<int32_t>(p)); break;
    case DataType::kInt64: w.Int(LoadAs<int64_t>(p)); break;
    case DataType::kFp16: w.Float(internal::Fp16ToFloat(Load16(p))); break;
    case DataType::kBf16: w.Float(internal::Bf16ToFloat(Load16(p))); break;
    case DataType::kFp32: w.Float(LoadAs<float>(p)); break;
    case DataType::kFp64: w.Double(LoadAs<double>(p)); break;
    case DataType::kBytes: break;
  }
}

}  // namespace

std::string_view JsonTypeName(element_type type) {
  switch (type) {
    case element_type::ARRAY: return "a list";
    case element_type::OBJECT: return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: return "a number";
    case element_type::STRING: return "a string";
    case element_type::BOOL: return "a boolean";
    case element_type::NULL_VALUE: return "null";
  }
  return "a value";
}

void AppendBytesElement(std::vector<std::byte>& out, std::string_view element) {
  uint32_t len = static_cast<uint32_t>(element.size());
  size_t at = out.size();
  out.resize(at + 4 + element.size());
  std::memcpy(out.data() + at, &len, 4);  // little-endian host (x86-64, aarch64)
  if (!element.empty()) std::memcpy(out.data() + at + 4, element.data(), element.size());
}

StatusOr<std::vector<std::string_view>> SplitBytesElements(const std::byte* data, size_t size,
                                                           int64_t count, std::string_view what) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < size) {
    if (size - at < 4) {
      return InvalidArgument(Quote(what) + ": BYTES element " + std::to_string(out.size()) +
                             ": truncated 4-byte length prefix at byte " + std::to_string(at));
    }
    uint32_t len;
    std::memcpy(&len, data + at, 4);
    at += 4;
    if (len > size - at) {
      return InvalidArgument(Quote(what) + ": BYTES element " + std::to_string(out.size()) +
                             " declares " + std::to_string(len) + " bytes but only " +
                             std::to_string(size - at) + " remain");
    }
    out.emplace_back(reinterpret_cast<const char*>(data + at), len);
    at += len;
  }
  if (count >= 0 && static_cast<int64_t>(out.size()) != count) {
    return InvalidArgument(Quote(what) + ": expected " + std::to_string(count) +
                           " BYTES elements, got " + std::to_string(out.size()));
  }
  return out;
}

StatusOr<Tensor> DecodeFlatJson(element data, DataType dtype, Shape shape, std::string_view what) {
  for (int64_t d : shape) {
    if (d < 0) {
      return InvalidArgument(Quote(what) + ": shape " + ShapeToString(shape) +
                             " has a negative dimension");
    }
  }
  int64_t expected = NumElements(shape);
  ElementSink sink(dtype, what, static_cast<size_t>(expected));
  RETURN_IF_ERROR(Flatten(data, sink));
  if (sink.count() != expected) {
    return InvalidArgument(Quote(what) + ": shape " + ShapeToString(shape) + " needs " +
                           std::to_string(expected) + " elements, data has " +
                           std::to_string(sink.count()));
  }
  return Tensor::FromBytes(dtype, std::move(shape), sink.Take());
}

StatusOr<Tensor> DecodeNestedJson(element data, DataType dtype, std::string_view what) {
  Shape shape;
  element cur = data;
  simdjson::dom::array arr;
  while (cur.get_array().get(arr) == simdjson::SUCCESS) {
    shape.push_back(static_cast<int64_t>(arr.size()));
    if (arr.size() == 0) break;
    cur = *arr.begin();
  }
  ElementSink sink(dtype, what, static_cast<size_t>(NumElements(shape)));
  RETURN_IF_ERROR(FillNested(data, shape, 0, sink, what));
  return Tensor::FromBytes(dtype, std::move(shape), sink.Take());
}

namespace {

void WriteNested(JsonWriter& w, const Shape& shape, size_t depth, int64_t& index,
                 const std::function<void(int64_t)>& leaf) {
  if (depth == shape.size()) {
    leaf(index++);
    return;
  }
  w.BeginArray();
  for (int64_t i = 0; i < shape[depth]; ++i) WriteNested(w, shape, depth + 1, index, leaf);
  w.EndArray();
}

}  // namespace

Status WriteTensorJson(JsonWriter& w, const Tensor& tensor, bool nested) {
  int64_t n = tensor.num_elements();
  if (n < 0) return Internal("tensor has a negative dimension " + ShapeToString(tensor.shape()));
  std::vector<std::string_view> strings;
  if (tensor.dtype() == DataType::kBytes) {
    ASSIGN_OR_RETURN(strings, SplitBytesElements(tensor.data(), tensor.byte_size(), n, "output"));
  } else if (tensor.byte_size() < static_cast<size_t>(n) * DataTypeSize(tensor.dtype())) {
    return Internal("tensor of shape " + ShapeToString(tensor.shape()) + " holds only " +
                    std::to_string(tensor.byte_size()) + " bytes");
  }
  DataType dtype = tensor.dtype();
  const std::byte* base = tensor.data();
  auto leaf = [&](int64_t i) {
    if (dtype == DataType::kBytes) w.String(strings[static_cast<size_t>(i)]);
    else WriteElement(w, dtype, base, i);
  };
  if (nested) {
    int64_t index = 0;
    WriteNested(w, tensor.shape(), 0, index, leaf);
  } else {
    w.BeginArray();
    for (int64_t i = 0; i < n; ++i) leaf(i);
    w.EndArray();
  }
  return Status::Ok();
}

}  // namespace inferd::http
