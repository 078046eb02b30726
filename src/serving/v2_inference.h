// KServe Open Inference Protocol v2: the request and response as native
// structures, shared by the REST codec (http/v2_codec.h) and the gRPC codec
// (grpc/), and the protocol-neutral steps between them and the scheduler.
//
// A codec parses its wire format into a V2InferRequest; MakeInferenceRequest
// checks it against the model's config and builds the scheduler's request.
// On the way back, SelectV2Outputs picks the response's tensors (labels from a
// classification postprocess become "labels" BYTES and "scores" FP32 tensors)
// in the order asked for; the codec writes them. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/tensor.h"
#include "config/model_config.h"
#include "scheduler/inference_request.h"

namespace inferd::serving {

struct V2RequestedOutput {
  std::string name;
  // Answer this output as raw bytes: REST's binary tensor extension
  // (parameters.binary_data), gRPC's raw_output_contents.
  bool binary = false;
};

struct V2InferRequest {
  std::string id;
  std::vector<NamedTensor> inputs;
  std::vector<V2RequestedOutput> outputs;  // empty: every output
  bool binary_data_output = false;         // parameters.binary_data_output: every output raw
  int priority = 0;                        // parameters.priority: 0 .. scheduler::kMaxPriority
  int64_t timeout_us = 0;                  // parameters.timeout (Triton, microseconds); 0 = none
};

// The scheduler's request for `config`'s model: for a model with preprocess:,
// the one BYTES input's elements become the raw payloads (one batch item
// each); else the tensors go as they are. Requested outputs are checked
// against the config before any compute is spent. The deadline is
// `received` + timeout_us (saturating) when a timeout was given. kInvalidArgument with
// the REST side's messages.
StatusOr<scheduler::InferenceRequest> MakeInferenceRequest(const config::ModelConfig& config,
                                                           V2InferRequest request,
                                                           TimePoint received);

struct V2ResponseContext {
  std::string model_name;
  int64_t model_version = 0;
  std::string id;
  std::vector<V2RequestedOutput> outputs;
  bool binary_data_output = false;
};

// What answering `request` needs; taken before the request moves to the scheduler.
V2ResponseContext MakeResponseContext(const std::string& model_name, int64_t model_version,
                                      const V2InferRequest& request);

// The tensors a response offers: its outputs, plus "labels" BYTES and
// "scores" FP32, each [batch, k], when a classification postprocess filled
// response.labels (items with fewer labels padded with "" / 0).
std::vector<NamedTensor> V2OutputTensors(const scheduler::InferenceResponse& response);

struct V2Output {
  NamedTensor tensor;  // shares the response's bytes
  bool binary = false;
};

// The outputs to answer, filtered and ordered as `context.outputs` asks (all
// when it is empty), each marked binary when asked for or when
// binary_data_output is set. kInvalidArgument for an unknown output.
StatusOr<std::vector<V2Output>> SelectV2Outputs(const scheduler::InferenceResponse& response,
                                                const V2ResponseContext& context);

}  // namespace inferd::serving
