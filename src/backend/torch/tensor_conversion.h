// Conversions between inferd::Tensor and at::Tensor, without copies where the
// layouts allow.
//
// ToTorch wraps the inferd bytes with at::from_blob (no copy); the at::Tensor
// keeps a reference to the inferd::Tensor's owner, so it stays valid however
// long torch holds it. The wrapped bytes are const in inferd: a model that
// writes into its input in place would write into the request; TorchScript
// models that do so are rare, and the cost of a defensive copy is paid by all.
// FromTorch makes the result contiguous (a copy only when it is not) and hands
// out its bytes by borrowing: the inferd::Tensor owns a reference to the
// at::Tensor's storage, so outputs are not copied either.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include "common/status.h"
#include "common/tensor.h"

namespace inferd::backend {

std::optional<at::ScalarType> ToTorchDtype(DataType dtype);
std::optional<DataType> FromTorchDtype(at::ScalarType dtype);

// `what` names the tensor in error messages ("input 'x'").
StatusOr<at::Tensor> ToTorch(const Tensor& tensor, const std::string& what);
StatusOr<Tensor> FromTorch(const at::Tensor& tensor, const std::string& what);

// Every tensor of a forward() result (a tensor, tuple, list or dict), in order.
std::vector<at::Tensor> FlattenTensors(const c10::IValue& value);

}  // namespace inferd::backend
