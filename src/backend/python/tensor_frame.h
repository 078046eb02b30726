// Tensor frames: how a model with `isolation: process` (a TorchScript model
// run in a worker process, share/inferd/python/inferd_torchscript.py) gets its
// batch and gives back its outputs over the handler channel
// (handler_channel.h), as raw bytes: no JSON, no copy in the server.
//
// A kTensors frame's `rows` is the tensor count; its payload is, per tensor,
//   [u32 dtype][u32 ndim][u64 byte_size][i64 dims x ndim][bytes]
// with dtype the value of inferd::DataType (kBool = 0 ... kFp64 = 9; BYTES
// tensors do not travel this way). Host byte order.
// Pure functions over the caller's buffers; any thread.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/python/handler_channel.h"
#include "common/status.h"
#include "common/tensor.h"

namespace inferd::backend::python {

struct TensorHead {
  uint32_t dtype = 0;
  uint32_t ndim = 0;
  uint64_t byte_size = 0;
};
static_assert(sizeof(TensorHead) == 16);

// The payload of a kTensors frame for `tensors`: the heads and dims in
// `*heads` (which the iovecs point into: keep it alive until sent), the
// tensors' bytes straight from their buffers. kInvalidArgument for a BYTES
// tensor.
StatusOr<std::vector<iovec>> TensorPayload(const std::vector<NamedTensor>& tensors,
                                           std::string* heads);

// Reads `count` tensors of a kTensors frame of `payload_bytes` from `fd`,
// each straight into its own Tensor. kInternal for a malformed frame.
StatusOr<std::vector<Tensor>> ReadTensors(int fd, uint32_t count, uint64_t payload_bytes,
                                          TimePoint deadline, const ReadWatch& watch);

}  // namespace inferd::backend::python
