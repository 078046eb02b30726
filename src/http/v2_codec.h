// KServe Open Inference Protocol v2 (REST) request/response codec, with the
// binary tensor extension.
//
// Request: {"id"?, "parameters"?, "inputs": [{name, shape, datatype, data |
// parameters.binary_data_size}], "outputs"?: [{name, parameters.binary_data?}]}.
// With an Inference-Header-Content-Length header the JSON is the body's first
// N bytes and the binary inputs follow, in the order of `inputs`; their bytes
// are borrowed from the body (no copy), kept alive by the body's shared_ptr,
// when they are aligned for their datatype (else copied: see BinaryTensor).
// Shapes are taken as sent (batch dim included, Triton's convention for
// max_batch_size > 0); the scheduler checks them against the model config.
// Response: {"model_name", "model_version", "id"?, "outputs": [{name,
// datatype, shape, data | parameters.binary_data_size}]}; outputs asked for
// with parameters.binary_data (or all, with parameters.binary_data_output)
// are appended raw after the JSON, whose length is then announced in
// Inference-Header-Content-Length. Pure functions; any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "http/http_message.h"
#include "scheduler/inference_request.h"
#include "serving/v2_inference.h"

namespace inferd::http {

// The request and response structures are the protocol-neutral ones that
// gRPC shares (serving/v2_inference.h).
using serving::V2InferRequest;
using serving::V2OutputTensors;
using serving::V2RequestedOutput;
using serving::V2ResponseContext;

// `header_length` is the Inference-Header-Content-Length header's value, if sent.
StatusOr<V2InferRequest> ParseV2InferRequest(const std::shared_ptr<std::string>& body,
                                             const std::optional<std::string>& header_length);

// The outputs of `response`, chosen as serving::SelectV2Outputs does (labels
// as "labels" and "scores" tensors, filtered and ordered as requested).
// kInvalidArgument for an unknown output.
StatusOr<HttpResponse> WriteV2InferResponse(const scheduler::InferenceResponse& response,
                                            const V2ResponseContext& context);

}  // namespace inferd::http
