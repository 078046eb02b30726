// What the v2 fuzz targets do with a request that parsed: check its tensors,
// validate it against a config made to fit it (so validation runs past the
// name checks), assemble it into a batch with itself and with a small padded
// request, and write it back as a response (every output as JSON, then all
// binary): the path a client's tensor takes through the server, minus compute.
#pragma once

#include "fuzz_util.h"
#include "http/v2_codec.h"
#include "scheduler/batch_assembly.h"
#include "scheduler/request_validation.h"

namespace inferd::fuzz {

inline void CheckV2Request(const StatusOr<http::V2InferRequest>& parsed) {
  if (!parsed.ok()) return CheckClientError(parsed.status());
  FUZZ_CHECK(parsed->priority >= 0 && parsed->priority <= scheduler::kMaxPriority, "priority");
  FUZZ_CHECK(parsed->timeout_us >= 0, "timeout");
  for (const auto& in : parsed->inputs) CheckTensor(in.tensor);

  // A config that declares the inputs as sent: variable dims, padded.
  config::ModelConfig config;
  config.name = "fuzz";
  config.max_batch_size = 8;
  for (const auto& in : parsed->inputs) {
    config::TensorSpec spec;
    spec.name = in.name;
    spec.dtype = in.tensor.dtype();
    const size_t rank = in.tensor.shape().size();
    spec.dims.assign(rank > 0 ? rank - 1 : 0, -1);
    spec.pad_value = 0;
    config.inputs.push_back(spec);
  }
  scheduler::InferenceRequest request;
  request.inputs = parsed->inputs;
  auto items = scheduler::ValidateRequest(config, /*has_preprocess=*/false, &request);
  if (!items.ok()) {
    CheckClientError(items.status());
  } else {
    FUZZ_CHECK(*items >= 1 && *items <= config.max_batch_size, "items");
    // Itself twice (a plain concatenation) and with a one-element request of
    // the same rank (padding in every variable dim).
    std::vector<NamedTensor> small;
    bool has_bytes = false;
    for (const auto& in : request.inputs) {
      Shape ones(in.tensor.shape().size(), 1);
      has_bytes |= in.tensor.dtype() == DataType::kBytes;
      small.push_back({in.name, Tensor::Allocate(in.tensor.dtype(), ones)});
    }
    for (const auto* other : {&request.inputs, &small}) {
      if (has_bytes) break;  // BYTES inputs are never batched
      auto batch = scheduler::AssembleBatch(config, {&request.inputs, other});
      if (!batch.ok()) {
        FUZZ_CHECK(batch.status().code() != StatusCode::kInternal, batch.status().ToString());
        continue;
      }
      for (const auto& t : batch->inputs) CheckTensor(t.tensor);
    }
  }

  scheduler::InferenceResponse response;
  response.outputs = parsed->inputs;
  for (bool binary : {false, true}) {
    http::V2ResponseContext context{"fuzz", 1, parsed->id, {}, binary};
    auto written = http::WriteV2InferResponse(response, context);
    if (!written.ok()) {
      CheckClientError(written.status());
      continue;
    }
    size_t json_size = written->body.size();
    for (const auto& [name, value] : written->headers) {
      if (name == "Inference-Header-Content-Length") json_size = std::stoul(value);
    }
    CheckJson(std::string_view(written->body).substr(0, json_size));
  }
}

}  // namespace inferd::fuzz
