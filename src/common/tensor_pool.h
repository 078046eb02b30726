// TensorPool: reuses the bytes of tensors that are made on every batch (an
// assembled batch input, a pre-processed image) instead of asking the heap for
// megabytes each time.
//
// A pooled tensor is an ordinary Tensor whose owner, when its LAST handle goes
// (every copy, every slice a response borrows, every torch tensor that wraps
// it: ToTorch's from_blob keeps a handle, and an output that aliases the input
// keeps that torch tensor), gives the bytes back to the pool instead of
// freeing them. The pool hands out only bytes that came back that way, so a
// reused buffer is never one that anybody can still read: reuse needs no
// knowledge of who reads a tensor, only the reference count every reader
// already holds. A response that holds its batch's bytes (an identity model)
// simply keeps them out of the pool until it is sent; the next batch gets
// other bytes.
//
// Allocate takes the smallest free buffer that fits the tensor, else makes a
// new one; a free buffer too small for the request is dropped at the same
// time, so the pool never holds more buffers than were ever in use at once
// and, under a steady load, converges to buffers of the largest batch. Free
// bytes beyond options.max_free_bytes are handed back to the heap.
//
// Thread-safety: every method may be called from any thread; a buffer may
// come back on any thread (the one that drops the last handle, e.g. a network
// thread after writing a response). The pool may be destroyed while its
// tensors live: they then free their bytes themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/tensor.h"

namespace inferd {

class TensorPool {
 public:
  struct Options {
    // Free bytes the pool keeps at most; past it, returned buffers are freed.
    // 64 MiB holds 13 batches of 8 224x224 FP32 images.
    size_t max_free_bytes = size_t{64} << 20;
  };
  struct Stats {
    uint64_t reused = 0;     // Allocate calls served from a free buffer
    uint64_t allocated = 0;  // Allocate calls that made a new buffer
    uint64_t dropped = 0;    // buffers freed: too small, or past max_free_bytes
    size_t free_buffers = 0;
    size_t free_bytes = 0;
  };

  TensorPool();
  explicit TensorPool(Options options);
  ~TensorPool();
  TensorPool(const TensorPool&) = delete;
  TensorPool& operator=(const TensorPool&) = delete;

  // A tensor of `shape` whose bytes are indeterminate (as
  // Tensor::AllocateUninitialized): the caller writes every byte before the
  // tensor is shared. `shape` must be valid (else std::invalid_argument).
  Tensor AllocateUninitialized(DataType dtype, Shape shape);

  Stats stats() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace inferd
