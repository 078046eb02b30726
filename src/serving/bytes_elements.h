// The KServe v2 serialized form of a BYTES tensor (common/tensor.h): each
// element a 4-byte little-endian length followed by that many bytes. REST's
// binary extension and gRPC's raw contents carry it as is; JSON and gRPC's
// typed bytes_contents carry the elements one by one. Pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace inferd::serving {

// The elements of a BYTES tensor, checked to be exactly `count` well-formed
// elements (-1: any count). `what` names the tensor in messages ("input 'x'").
StatusOr<std::vector<std::string_view>> SplitBytesElements(const std::byte* data, size_t size,
                                                           int64_t count, std::string_view what);
// The same checks without making the list (no allocation): a body of 4-byte
// empty elements must not become a list four times its size to be refused.
Status CheckBytesElements(const std::byte* data, size_t size, int64_t count, std::string_view what);
// Appends one element in that form.
void AppendBytesElement(std::vector<std::byte>& out, std::string_view element);

}  // namespace inferd::serving
