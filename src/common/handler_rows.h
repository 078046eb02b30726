// Handler rows: how one request's raw body (or one handler answer) travels as
// a row of a UINT8 tensor, so that models served by a handler process
// (`backend: python`, docs/TORCHSERVE.md) go through the scheduler's batches
// like any tensor model.
//
// A row is  [u32 content_type_len][u64 body_len][content_type][body]  then
// zero padding (the batch assembly pads rows to the longest; the lengths say
// where the data ends). Integers are in the host's byte order: rows never
// leave the machine.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace inferd {

inline constexpr size_t kHandlerRowHeader = sizeof(uint32_t) + sizeof(uint64_t);

// Bytes the row of this content type and body takes (header included).
size_t HandlerRowSize(std::string_view content_type, size_t body_size);

// Writes the row at `dst`, which has room for HandlerRowSize(...) bytes.
void WriteHandlerRow(std::string_view content_type, std::string_view body, std::byte* dst);

struct HandlerRow {
  std::string_view content_type;
  std::string_view body;  // both view the row's bytes
};

// Reads the row at `data` (`size` bytes, padding included); kInvalidArgument
// when the lengths run past `size`.
StatusOr<HandlerRow> ReadHandlerRow(const std::byte* data, size_t size);

}  // namespace inferd
