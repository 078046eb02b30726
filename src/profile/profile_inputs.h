// The inputs the profiler feeds a model: one request (batch 1, or `batch`
// items for the batched figure) of the shape its config.yaml declares, so
// that the CPU time measured is what a request of that model costs.
//
// Values: floating inputs (FP32, FP64) are seeded uniform in [-1, 1) (a
// model's arithmetic does not depend on the values, but zeros could hit
// shortcuts such as sparse kernels); FP16/BF16 are zeros; integer and BOOL
// inputs are all 1, which is a valid token id in any vocabulary of two or more
// entries, a valid segment id and an "attend" attention mask. A variable dim
// (-1) becomes `variable_dim`. BYTES inputs cannot be generated and are refused.
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "config/model_config.h"

namespace inferd::profile {

// The variable-dim length used when the caller gives none: the text
// tokenizer's max_length for `preprocess: {kind: text}` models (what a long
// request is padded to), else 1.
int64_t DefaultVariableDim(const config::ModelConfig& config);

// kInvalidArgument naming the model and input for BYTES inputs or a
// variable_dim below 1.
StatusOr<std::vector<NamedTensor>> MakeProfileInputs(const config::ModelConfig& config,
                                                     int64_t variable_dim, int batch = 1);

}  // namespace inferd::profile
