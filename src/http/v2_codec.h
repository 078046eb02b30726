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

namespace inferd::http {

struct V2RequestedOutput {
  std::string name;
  bool binary = false;
};

struct V2InferRequest {
  std::string id;
  std::vector<NamedTensor> inputs;
  std::vector<V2RequestedOutput> outputs;  // empty: every output
  bool binary_data_output = false;         // parameters.binary_data_output
  int priority = 0;                        // parameters.priority
  int64_t timeout_us = 0;                  // parameters.timeout (Triton, microseconds); 0 = none
};

// `header_length` is the Inference-Header-Content-Length header's value, if sent.
StatusOr<V2InferRequest> ParseV2InferRequest(const std::shared_ptr<std::string>& body,
                                             const std::optional<std::string>& header_length);

struct V2ResponseContext {
  std::string model_name;
  int64_t model_version = 0;
  std::string id;
  std::vector<V2RequestedOutput> outputs;
  bool binary_data_output = false;
};

// The outputs of `response` (plus "labels" BYTES and "scores" FP32, each
// [batch, k], when a classification postprocess filled response.labels),
// filtered and ordered as requested. kInvalidArgument for an unknown output.
StatusOr<HttpResponse> WriteV2InferResponse(const scheduler::InferenceResponse& response,
                                            const V2ResponseContext& context);

// The tensors a response offers, labels turned into tensors as described above.
std::vector<NamedTensor> V2OutputTensors(const scheduler::InferenceResponse& response);

}  // namespace inferd::http
