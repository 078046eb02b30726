// Batch assembly: joins the inputs of a batch's requests along the batch dim
// (padding variable dims with the input's pad_value where they differ) and
// splits the outputs back per request (cutting padded dims back to each
// request's own length where an output follows that dim).
// Pure functions (but for the pool they may draw bytes from); thread-safe;
// inputs are never modified. Every byte of a tensor they make is written
// (copied, or padded), so those tensors skip the zero fill.
#pragma once

#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "common/tensor_pool.h"
#include "config/model_config.h"

namespace inferd::scheduler {

struct AssembledBatch {
  std::vector<NamedTensor> inputs;          // batch dim = sum of items
  std::vector<int> items;                   // per request
  // Per request, per input, the request's own (unpadded) shape.
  std::vector<std::vector<Shape>> own_shapes;
  bool padded = false;
};

// `requests[r]` are validated inputs in config order. A single request's
// tensors are passed through without a copy. With `pool`, the batched inputs'
// bytes come from it (and go back to it when the batch's last reader lets go;
// see tensor_pool.h), else from the heap.
StatusOr<AssembledBatch> AssembleBatch(const config::ModelConfig& config,
                                       const std::vector<const std::vector<NamedTensor>*>& requests,
                                       TensorPool* pool = nullptr);

// A batch whose pre-processing wrote each request's items into consecutive
// rows of `rows` (the single input of `config`, shape [capacity, dims...],
// capacity >= first_row + the sum of `items`): its input is a view of the
// rows in use from `first_row` on (a batch that memory admission cut runs in
// parts), which keeps `rows` alive; nothing is copied.
AssembledBatch BatchOfRows(const config::ModelConfig& config, const Tensor& rows,
                           std::vector<int> items, int64_t first_row = 0);

// Splits batched outputs into one output list per request.
StatusOr<std::vector<std::vector<NamedTensor>>> SplitOutputs(
    const AssembledBatch& batch, const std::vector<NamedTensor>& outputs);

}  // namespace inferd::scheduler
