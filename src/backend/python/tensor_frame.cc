#include "backend/python/tensor_frame.h"

#include <cstring>

namespace inferd::backend::python {
namespace {

constexpr uint32_t kMaxDims = 16;

}  // namespace

StatusOr<std::vector<iovec>> TensorPayload(const std::vector<NamedTensor>& tensors,
                                           std::string* heads) {
  size_t head_bytes = 0;
  for (const NamedTensor& t : tensors) {
    if (t.tensor.dtype() == DataType::kBytes) {
      return InvalidArgument("input '" + t.name +
                             "' is BYTES: a model with isolation: process takes numeric tensors");
    }
    head_bytes += sizeof(TensorHead) + t.tensor.shape().size() * sizeof(int64_t);
  }
  heads->assign(head_bytes, '\0');  // sized once: the iovecs point into it
  std::vector<iovec> out;
  out.reserve(tensors.size() * 2);
  char* at = heads->data();
  for (const NamedTensor& t : tensors) {
    const Shape& shape = t.tensor.shape();
    TensorHead head{static_cast<uint32_t>(t.tensor.dtype()), static_cast<uint32_t>(shape.size()),
                    t.tensor.byte_size()};
    const size_t size = sizeof head + shape.size() * sizeof(int64_t);
    std::memcpy(at, &head, sizeof head);
    if (!shape.empty()) std::memcpy(at + sizeof head, shape.data(), shape.size() * sizeof(int64_t));
    out.push_back({at, size});
    if (t.tensor.byte_size() > 0) {
      out.push_back({const_cast<std::byte*>(t.tensor.data()), t.tensor.byte_size()});
    }
    at += size;
  }
  return out;
}

StatusOr<std::vector<Tensor>> ReadTensors(int fd, uint32_t count, uint64_t payload_bytes,
                                          TimePoint deadline, const ReadWatch& watch) {
  std::vector<Tensor> out;
  out.reserve(count);
  uint64_t left = payload_bytes;
  for (uint32_t i = 0; i < count; ++i) {
    TensorHead head;
    if (left < sizeof head) return Internal("malformed tensor frame from the worker");
    RETURN_IF_ERROR(ReadExactly(fd, &head, sizeof head, deadline, watch));
    left -= sizeof head;
    if (head.dtype >= static_cast<uint32_t>(DataType::kBytes) || head.ndim > kMaxDims ||
        left < head.ndim * sizeof(int64_t)) {
      return Internal("malformed tensor frame from the worker");
    }
    Shape shape(head.ndim);
    if (head.ndim > 0) {
      RETURN_IF_ERROR(ReadExactly(fd, shape.data(), head.ndim * sizeof(int64_t), deadline, watch));
    }
    left -= head.ndim * sizeof(int64_t);
    const auto dtype = static_cast<DataType>(head.dtype);
    int64_t elements = 1;
    for (int64_t d : shape) {
      // Bounded by the payload: no product of dims can wrap around.
      if (d < 0 || (d > 0 && elements > static_cast<int64_t>(left) / d)) {
        return Internal("malformed tensor frame from the worker");
      }
      elements *= d;
    }
    if (head.byte_size > left ||
        head.byte_size != static_cast<uint64_t>(elements) * DataTypeSize(dtype)) {
      return Internal("malformed tensor frame from the worker");
    }
    Tensor t = Tensor::AllocateUninitialized(dtype, std::move(shape));
    if (head.byte_size > 0) {
      RETURN_IF_ERROR(ReadExactly(fd, t.mutable_data(), head.byte_size, deadline, watch));
    }
    left -= head.byte_size;
    out.push_back(std::move(t));
  }
  if (left != 0) return Internal("malformed tensor frame from the worker");
  return out;
}

}  // namespace inferd::backend::python
