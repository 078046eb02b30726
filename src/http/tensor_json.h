// JSON <-> Tensor element codec shared by the v2 and TorchServe front ends.
//
// Decoding copies the elements into a tensor that owns its bytes, checking
// each one against the datatype (integers in range, booleans, strings for
// BYTES) and naming the input and the element in errors, e.g.
// "input 'x': element 3: expected an integer for INT8, got 300".
// Encoding writes numbers exactly (see JsonWriter). Pure functions; any thread.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "common/json_writer.h"
#include "serving/bytes_elements.h"

namespace inferd::http {

// `data` is a flat or nested array (any nesting is flattened, as Triton does),
// or a single value when `shape` has no elements to nest. Its element count
// must equal the shape's. `what` names the tensor in messages ("input 'x'").
StatusOr<Tensor> DecodeFlatJson(simdjson::dom::element data, DataType dtype, Shape shape,
                                std::string_view what);

// `data` is a rectangular nested list (or a single value: rank 0); the shape is
// taken from the nesting. Ragged lists are refused with the depth and sizes.
StatusOr<Tensor> DecodeNestedJson(simdjson::dom::element data, DataType dtype,
                                  std::string_view what);

// Writes the elements as one flat array, or nested along the tensor's shape.
Status WriteTensorJson(JsonWriter& writer, const Tensor& tensor, bool nested);

// The BYTES serialized form (4-byte little-endian length + bytes each).
using serving::AppendBytesElement;
using serving::CheckBytesElements;
using serving::SplitBytesElements;

// "a string", "a number", ... for messages.
std::string_view JsonTypeName(simdjson::dom::element_type type);

}  // namespace inferd::http
