#include "http/tensor_json.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

// Collects converted elements of one datatype into bytes. Fixed-size
// elements go straight into their slot; the buffer grows by doubling up to
// the expected count (never allocated up front from a client's shape alone).
class ElementSink {
 public:
  ElementSink(DataType dtype, std::string_view what, int64_t expected)
      : dtype_(dtype), what_(what), size_(DataTypeSize(dtype)), expected_(expected) {}

  Status Add(element e) {
    Status st = Convert(e);
    ++count_;
    return st;
  }
  int64_t count() const { return count_; }
  std::vector<std::byte> Take() {
    if (size_ > 0) bytes_.resize(static_cast<size_t>(std::min(count_, expected_)) * size_);
    return std::move(bytes_);
  }

 private:
  // The slot of the current element; null past the expected count (then the
  // element is only checked: the count mismatch is reported at the end).
  std::byte* Slot() {
    if (count_ >= expected_) return nullptr;
    size_t at = static_cast<size_t>(count_) * size_;
    if (at + size_ > bytes_.size()) {
      size_t want = std::max<size_t>(
          at + size_,
          std::min<size_t>(bytes_.size() * 2 + 64 * size_, static_cast<size_t>(expected_) * size_));
      bytes_.resize(want);
    }
    return bytes_.data() + at;
  }

  template <typename T>
  void Put(T v) {
    if (std::byte* p = Slot()) std::memcpy(p, &v, sizeof(T));
  }

  Status Mismatch(element e, std::string_view expected) const {
    return InvalidArgument(Quote(what_) + ": element " + std::to_string(count_) + ": expected " +
                           std::string(expected) + " for " + std::string(DataTypeName(dtype_)) +
                           ", got " + Preview(e));
  }

  template <typename T>
  Status IntegerMismatch(element e) const {
    return Mismatch(
        e, "an integer in [" + std::to_string(static_cast<int64_t>(std::numeric_limits<T>::min())) +
               ", " + std::to_string(static_cast<int64_t>(std::numeric_limits<T>::max())) + "]");
  }

  template <typename T>
  Status PutInteger(element e) {
    constexpr auto lo = std::numeric_limits<T>::min();
    constexpr auto hi = std::numeric_limits<T>::max();
    int64_t v = 0;
    switch (e.type()) {
      case element_type::INT64:
        v = e.get_int64().value_unsafe();
        break;
      case element_type::UINT64: {
        uint64_t u = e.get_uint64().value_unsafe();
        if (u > static_cast<uint64_t>(hi)) return IntegerMismatch<T>(e);
        v = static_cast<int64_t>(u);
        break;
      }
      case element_type::DOUBLE: {
        // 2.0 is accepted (what numpy-produced JSON often holds); 2.5 is not.
        // hi + 1 is a power of two, exact as a double; static_cast<double>(hi)
        // is not for INT64 (it rounds up to 2^63, and converting 2^63 back
        // to int64_t is undefined), so the upper bound is exclusive.
        double d = e.get_double().value_unsafe();
        const double upper = static_cast<double>(hi / 2 + 1) * 2.0;
        if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) || d >= upper) {
          return IntegerMismatch<T>(e);
        }
        v = static_cast<int64_t>(d);
        break;
      }
      default:
        return IntegerMismatch<T>(e);
    }
    if (v < static_cast<int64_t>(lo) || v > static_cast<int64_t>(hi)) return IntegerMismatch<T>(e);
    Put(static_cast<T>(v));
    return Status::Ok();
  }

  // A number, or one of the strings JsonWriter writes for values JSON numbers
  // cannot hold ("NaN", "Infinity", "-Infinity").
  static bool GetFloating(element e, double* d) {
    if (e.get_double().get(*d) == simdjson::SUCCESS) return true;
    std::string_view s;
    if (e.get_string().get(s)) return false;
    if (s == "NaN") {
      *d = std::numeric_limits<double>::quiet_NaN();
    } else if (s == "Infinity") {
      *d = std::numeric_limits<double>::infinity();
    } else if (s == "-Infinity") {
      *d = -std::numeric_limits<double>::infinity();
    } else {
      return false;
    }
    return true;
  }

  Status Convert(element e) {
    static constexpr std::string_view kNumber =
        "a number (or \"NaN\", \"Infinity\", \"-Infinity\")";
    switch (dtype_) {
      case DataType::kFp32: {
        double d;
        if (!GetFloating(e, &d)) return Mismatch(e, kNumber);
        Put(static_cast<float>(d));
        return Status::Ok();
      }
      case DataType::kFp64:
      case DataType::kFp16:
      case DataType::kBf16: {
        double d;
        if (!GetFloating(e, &d)) return Mismatch(e, kNumber);
        if (dtype_ == DataType::kFp64)
          Put(d);
        else if (dtype_ == DataType::kFp16)
          Put(internal::FloatToFp16(static_cast<float>(d)));
        else
          Put(internal::FloatToBf16(static_cast<float>(d)));
        return Status::Ok();
      }
      case DataType::kBool: {
        bool b;
        if (e.get_bool().get(b) == simdjson::SUCCESS) {
          Put<uint8_t>(b ? 1 : 0);
          return Status::Ok();
        }
        int64_t v;
        if (e.get_int64().get(v) == simdjson::SUCCESS && (v == 0 || v == 1) &&
            e.type() != element_type::DOUBLE) {
          Put<uint8_t>(static_cast<uint8_t>(v));
          return Status::Ok();
        }
        return Mismatch(e, "true or false");
      }
      case DataType::kUint8:
        return PutInteger<uint8_t>(e);
      case DataType::kInt8:
        return PutInteger<int8_t>(e);
      case DataType::kInt16:
        return PutInteger<int16_t>(e);
      case DataType::kInt32:
        return PutInteger<int32_t>(e);
      case DataType::kInt64:
        return PutInteger<int64_t>(e);
      case DataType::kBytes: {
        std::string_view s;
        if (e.get_string().get(s)) return Mismatch(e, "a string");
        if (count_ < expected_) AppendBytesElement(bytes_, s);
        return Status::Ok();
      }
    }
    return Internal("unknown datatype");
  }

  DataType dtype_;
  std::string_view what_;
  size_t size_;  // bytes per element; 0 for BYTES
  int64_t expected_;
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

// Appends element `i` of a fixed-size tensor.
void AppendElement(std::string& out, DataType dtype, const std::byte* base, int64_t i) {
  const std::byte* p = base + i * static_cast<int64_t>(DataTypeSize(dtype));
  switch (dtype) {
    case DataType::kBool:
      out += LoadAs<uint8_t>(p) != 0 ? "true" : "false";
      break;
    case DataType::kUint8:
      AppendJsonInt(out, LoadAs<uint8_t>(p));
      break;
    case DataType::kInt8:
      AppendJsonInt(out, LoadAs<int8_t>(p));
      break;
    case DataType::kInt16:
      AppendJsonInt(out, LoadAs<int16_t>(p));
      break;
    case DataType::kInt32:
      AppendJsonInt(out, LoadAs<int32_t>(p));
      break;
    case DataType::kInt64:
      AppendJsonInt(out, LoadAs<int64_t>(p));
      break;
    case DataType::kFp16:
      AppendJsonFloat(out, internal::Fp16ToFloat(Load16(p)));
      break;
    case DataType::kBf16:
      AppendJsonFloat(out, internal::Bf16ToFloat(Load16(p)));
      break;
    case DataType::kFp32:
      AppendJsonFloat(out, LoadAs<float>(p));
      break;
    case DataType::kFp64:
      AppendJsonDouble(out, LoadAs<double>(p));
      break;
    case DataType::kBytes:
      break;
  }
}

}  // namespace

std::string_view JsonTypeName(element_type type) {
  switch (type) {
    case element_type::ARRAY:
      return "a list";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
      return "a number";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "a value";
}

StatusOr<Tensor> DecodeFlatJson(element data, DataType dtype, Shape shape, std::string_view what) {
  for (int64_t d : shape) {
    if (d < 0) {
      return InvalidArgument(Quote(what) + ": shape " + ShapeToString(shape) +
                             " has a negative dimension");
    }
  }
  int64_t expected = NumElements(shape);
  ElementSink sink(dtype, what, expected);
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
  ElementSink sink(dtype, what, NumElements(shape));
  RETURN_IF_ERROR(FillNested(data, shape, 0, sink, what));
  return Tensor::FromBytes(dtype, std::move(shape), sink.Take());
}

namespace {

// Writes `count` consecutive elements starting at `index` as a flat list.
template <typename Leaf>
void AppendRun(std::string& out, int64_t index, int64_t count, const Leaf& leaf) {
  out += '[';
  for (int64_t i = 0; i < count; ++i) {
    if (i) out += ',';
    leaf(index + i);
  }
  out += ']';
}

template <typename Leaf>
void AppendNested(std::string& out, const Shape& shape, size_t depth, int64_t& index,
                  const Leaf& leaf) {
  if (depth == shape.size()) {
    leaf(index++);
    return;
  }
  if (depth + 1 == shape.size()) {
    AppendRun(out, index, shape[depth], leaf);
    index += shape[depth];
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape[depth]; ++i) {
    if (i) out += ',';
    AppendNested(out, shape, depth + 1, index, leaf);
  }
  out += ']';
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
  std::string& out = w.BeginRawValue();
  out.reserve(out.size() + static_cast<size_t>(n) * (dtype == DataType::kBytes ? 8 : 12) + 2);
  auto leaf = [&](int64_t i) {
    if (dtype == DataType::kBytes)
      AppendJsonString(out, strings[static_cast<size_t>(i)]);
    else
      AppendElement(out, dtype, base, i);
  };
  if (nested) {
    int64_t index = 0;
    AppendNested(out, tensor.shape(), 0, index, leaf);
  } else {
    AppendRun(out, 0, n, leaf);
  }
  return Status::Ok();
}

}  // namespace inferd::http
