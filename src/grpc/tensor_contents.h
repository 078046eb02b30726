// A tensor's elements in the typed fields of inference.InferTensorContents,
// to and from inferd::Tensor.
//
// Decoding copies the elements of the datatype's field into a tensor that
// owns its bytes, checking the count against the shape and each element
// against the datatype's range (INT8, INT16, UINT8, UINT16 travel widened to
// 32 bits), and naming the tensor and the element in errors, e.g.
// "input 'x': element 3: expected an integer in [-128, 127] for INT8, got 300".
// FP16 and BF16 have no typed field: they must travel raw. Pure functions;
// any thread.
#pragma once

#include <string_view>

#include "common/status.h"
#include "common/tensor.h"
#include "grpc_predict_v2.pb.h"

namespace inferd::grpc {

StatusOr<Tensor> TensorFromContents(const inference::InferTensorContents& contents, DataType dtype,
                                    Shape shape, std::string_view what);

// kInvalidArgument for FP16 / BF16 (no typed field).
Status WriteContents(const Tensor& tensor, inference::InferTensorContents* contents);

// Whether a datatype has a typed field.
bool HasTypedContents(DataType dtype);

}  // namespace inferd::grpc
