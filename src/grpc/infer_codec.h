// ModelInfer's codec: inference.ModelInferRequest to the protocol-neutral
// serving::V2InferRequest, and a computed response to
// inference.ModelInferResponse.
//
// Inputs come either all in raw_input_contents (one entry per input, in order;
// borrowed from the request message without a copy when aligned for their
// datatype, the message kept alive by `owner`) or all in typed contents
// (copied; see tensor_contents.h); mixing the two is refused, as the
// protocol says. Request parameters: priority, timeout (microseconds),
// binary_data_output; output parameters: binary_data.
// The response is all raw (raw_output_contents) when the request sent raw
// inputs, asked for binary data, or an output has no typed field (FP16, BF16);
// else all typed. Errors are kInvalidArgument with messages in the REST
// side's words. Pure functions; any thread.
#pragma once

#include <memory>

#include "common/status.h"
#include "grpc_predict_v2.pb.h"
#include "scheduler/inference_request.h"
#include "serving/v2_inference.h"

namespace inferd::grpc {

StatusOr<serving::V2InferRequest> ParseModelInferRequest(
    const std::shared_ptr<const inference::ModelInferRequest>& owner);

// Fills `out` with the chosen outputs of `response`; kInvalidArgument for an
// unknown requested output.
Status WriteModelInferResponse(const scheduler::InferenceResponse& response,
                               const serving::V2ResponseContext& context,
                               inference::ModelInferResponse* out);

}  // namespace inferd::grpc
