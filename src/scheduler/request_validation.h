// ValidateRequest: checks a request against its model's config before it is
// queued, so that a bad request is answered at once (400) with a message that
// names the input and what was expected, and never reaches a batch.
// Pure function; thread-safe.
#pragma once

#include "common/status.h"
#include "config/model_config.h"
#include "scheduler/inference_request.h"

namespace inferd::scheduler {

// On success, request->inputs are in the config's input order and the return
// value is the number of batch items the request carries (>= 1).
StatusOr<int> ValidateRequest(const config::ModelConfig& config, bool has_preprocess,
                              InferenceRequest* request);

// The memory a request holds while the scheduler has it, counted against
// --max-queue-bytes: its tensors (which may borrow the request body) and raw
// payloads. Each part is at most a body, so the sum cannot wrap.
size_t RequestBytes(const InferenceRequest& request);

// Checks that a BYTES tensor's serialized elements (4-byte length + bytes) fill
// exactly its bytes and number num_elements().
Status ValidateBytesTensor(const std::string& name, const Tensor& tensor);

}  // namespace inferd::scheduler
