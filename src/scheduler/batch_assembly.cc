#include "scheduler/batch_assembly.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace inferd::scheduler {
namespace {

// Writes `value` converted to `dtype` into `out`.
void StoreScalar(DataType dtype, double value, std::byte* out) {
  switch (dtype) {
    case DataType::kBool: { bool v = value != 0; std::memcpy(out, &v, 1); break; }
    case DataType::kUint8: { uint8_t v = static_cast<uint8_t>(value); std::memcpy(out, &v, 1); break; }
    case DataType::kInt8: { int8_t v = static_cast<int8_t>(value); std::memcpy(out, &v, 1); break; }
    case DataType::kInt16: { int16_t v = static_cast<int16_t>(value); std::memcpy(out, &v, 2); break; }
    case DataType::kInt32: { int32_t v = static_cast<int32_t>(value); std::memcpy(out, &v, 4); break; }
    case DataType::kInt64: { int64_t v = static_cast<int64_t>(value); std::memcpy(out, &v, 8); break; }
    case DataType::kFp32: { float v = static_cast<float>(value); std::memcpy(out, &v, 4); break; }
    case DataType::kFp64: { std::memcpy(out, &value, 8); break; }
    case DataType::kBf16: {
      float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t v = static_cast<uint16_t>(bits >> 16);
      std::memcpy(out, &v, 2);
      break;
    }
    case DataType::kFp16:  // pad values of half inputs: only 0 is exact without a converter
    case DataType::kBytes:
      std::memset(out, 0, DataTypeSize(dtype));
      break;
  }
}

// Copies the leading block `block` (block[i] <= both shapes' dim i) of the
// row-major tensor `src` (shape src_shape) into `dst` (shape dst_shape), shifted
// by `dst_row0` along dim 0. Used both ways: into a padded batch, and back out
// of it into a request's own, shorter shape.
void CopyBlock(const std::byte* src, const Shape& src_shape, std::byte* dst,
               const Shape& dst_shape, const Shape& block, int64_t dst_row0, size_t elem) {
  const size_t rank = block.size();
  if (rank == 0 || NumElements(block) == 0) return;
  std::vector<int64_t> src_stride(rank, 1), dst_stride(rank, 1);
  for (size_t i = rank - 1; i > 0; --i) {
    src_stride[i - 1] = src_stride[i] * src_shape[i];
    dst_stride[i - 1] = dst_stride[i] * dst_shape[i];
  }
  const int64_t inner = block[rank - 1];
  const int64_t rows = NumElements(block) / inner;
  const auto e = static_cast<int64_t>(elem);
  std::vector<int64_t> idx(rank, 0);  // multi-index of the current row's start
  for (int64_t r = 0; r < rows; ++r) {
    int64_t from = 0, to = dst_row0 * dst_stride[0];
    for (size_t i = 0; i + 1 < rank; ++i) {
      from += idx[i] * src_stride[i];
      to += idx[i] * dst_stride[i];
    }
    std::memcpy(dst + to * e, src + from * e, static_cast<size_t>(inner) * elem);
    for (size_t i = rank - 1; i-- > 0;) {
      if (++idx[i] < block[i]) break;
      idx[i] = 0;
    }
  }
}

}  // namespace

StatusOr<AssembledBatch> AssembleBatch(const config::ModelConfig& config,
                                       const std::vector<const std::vector<NamedTensor>*>& requests,
                                       TensorPool* pool) {
  AssembledBatch out;
  for (const auto* r : requests) {
    out.items.push_back(static_cast<int>((*r)[0].tensor.shape()[0]));
    std::vector<Shape> shapes;
    for (const auto& t : *r) shapes.push_back(t.tensor.shape());
    out.own_shapes.push_back(std::move(shapes));
  }
  if (requests.size() == 1) {
    out.inputs = *requests[0];
    return out;
  }
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    const auto& spec = config.inputs[i];
    if (spec.dtype == DataType::kBytes) {
      return InvalidArgument("input '" + spec.name + "': BYTES inputs cannot be batched");
    }
    Shape merged = (*requests[0])[i].tensor.shape();
    merged[0] = 0;
    bool differs = false;
    for (const auto* r : requests) {
      const Shape& s = (*r)[i].tensor.shape();
      merged[0] += s[0];
      for (size_t d = 1; d < s.size(); ++d) {
        if (s[d] != merged[d]) differs = true;
        merged[d] = std::max(merged[d], s[d]);
      }
    }
    // Every byte is written below: by the copies when no dim differs (the
    // rows of all requests tile the batch), else by the pad fill first.
    Tensor batched = pool ? pool->AllocateUninitialized(spec.dtype, merged)
                          : Tensor::AllocateUninitialized(spec.dtype, merged);
    const size_t elem = DataTypeSize(spec.dtype);
    if (differs) {
      out.padded = true;
      const double pad = spec.pad_value.value_or(0);
      for (int64_t e = 0; e < batched.num_elements(); ++e) {
        StoreScalar(spec.dtype, pad, batched.mutable_data() + e * static_cast<int64_t>(elem));
      }
    }
    int64_t b0 = 0;
    for (const auto* r : requests) {
      const Tensor& t = (*r)[i].tensor;
      if (t.byte_size() == 0) {
        // A 0 dimension: nothing to copy, and an empty tensor's data() may be
        // null, which memcpy must not be given even for 0 bytes.
      } else if (!differs) {
        std::memcpy(batched.mutable_data() + b0 * (batched.byte_size() / merged[0]), t.data(),
                    t.byte_size());
      } else {
        CopyBlock(t.data(), t.shape(), batched.mutable_data(), merged, t.shape(), b0, elem);
      }
      b0 += t.shape()[0];
    }
    out.inputs.push_back({spec.name, std::move(batched)});
  }
  return out;
}

AssembledBatch BatchOfRows(const config::ModelConfig& config, const Tensor& rows,
                           std::vector<int> items, int64_t first_row) {
  AssembledBatch batch;
  int64_t total = 0;
  for (int n : items) total += n;
  const int64_t capacity = rows.shape().empty() ? 0 : rows.shape()[0];
  const size_t row = capacity == 0 ? 0 : rows.byte_size() / static_cast<size_t>(capacity);
  Shape shape = rows.shape();
  shape[0] = total;
  batch.inputs.push_back({config.inputs.front().name,
                          Tensor::Borrow(rows.dtype(), shape, std::make_shared<Tensor>(rows),
                                         rows.data() + row * static_cast<size_t>(first_row),
                                         row * static_cast<size_t>(total))});
  for (int n : items) {
    Shape own = shape;
    own[0] = n;
    batch.own_shapes.push_back({std::move(own)});
  }
  batch.items = std::move(items);
  return batch;
}

StatusOr<std::vector<std::vector<NamedTensor>>> SplitOutputs(
    const AssembledBatch& batch, const std::vector<NamedTensor>& outputs) {
  int64_t total = 0;
  for (int n : batch.items) total += n;
  std::vector<std::vector<NamedTensor>> per_request(batch.items.size());
  for (const auto& out : outputs) {
    const Shape& s = out.tensor.shape();
    if (s.empty() || s[0] != total) {
      return Internal("model output '" + out.name + "' has shape " + ShapeToString(s) +
                      ": expected the batch dim first with " + std::to_string(total) + " items");
    }
    if (batch.items.size() == 1) {
      per_request[0].push_back(out);
      continue;
    }
    const size_t row = total == 0 ? 0 : out.tensor.byte_size() / static_cast<size_t>(total);
    int64_t b0 = 0;
    for (size_t r = 0; r < batch.items.size(); ++r) {
      Shape own = s;
      own[0] = batch.items[r];
      // Borrow the batched bytes: the slice keeps the whole output alive.
      auto holder = std::make_shared<Tensor>(out.tensor);
      Tensor part = Tensor::Borrow(out.tensor.dtype(), own, holder,
                            out.tensor.data() + b0 * static_cast<int64_t>(row),
                            row * static_cast<size_t>(batch.items[r]));
      if (batch.padded) {
        // Cut dims that follow a padded input dim back to the request's length:
        // an output dim d (d >= 1) is cut when its size equals the padded size
        // of the same dim of an input that was padded there.
        Shape cut = own;
        for (size_t d = 1; d < cut.size(); ++d) {
          for (size_t i = 0; i < batch.inputs.size(); ++i) {
            const Shape& padded_in = batch.inputs[i].tensor.shape();
            const Shape& own_in = batch.own_shapes[r][i];
            if (d < padded_in.size() && padded_in[d] == cut[d] && own_in[d] < padded_in[d]) {
              cut[d] = own_in[d];
              break;
            }
          }
        }
        if (cut != own) {
          Tensor c = Tensor::AllocateUninitialized(part.dtype(), cut);  // CopyBlock fills it
          CopyBlock(part.data(), own, c.mutable_data(), cut, cut, 0, DataTypeSize(part.dtype()));
          part = c;
        }
      }
      per_request[r].push_back({out.name, part});
      b0 += batch.items[r];
    }
  }
  return per_request;
}

}  // namespace inferd::scheduler
