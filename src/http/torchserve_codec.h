// TorchServe inference API codec (/predictions) for models without a
// `preprocess:` step.
//
// Request body: a nested list (single-input models) or an object mapping
// input names to nested lists ("data" or "body" also name the only input of a
// single-input model, as TorchServe's handlers read them). Datatypes come from
// the model config. Each input may come with the batch dim (rank = dims + 1)
// or without it (rank = dims): then the front end adds a leading 1 and drops it
// from the answer. All inputs of one request must agree on that.
// Response: a single output as its nested list, several as an object of name
// -> nested list; with classification labels, {label: score, ...} for one item
// or a list of such objects for several. Pure functions; any thread.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "config/model_config.h"
#include "http/http_message.h"
#include "scheduler/inference_request.h"

namespace inferd::http {

struct PredictionRequest {
  std::vector<NamedTensor> inputs;
  bool added_batch_dim = false;  // the answer then drops the leading dim
};

StatusOr<PredictionRequest> ParsePredictionJson(const std::string& body,
                                                const config::ModelConfig& config);

// `single_item`: answer one item without the batch dim (labels as one object).
StatusOr<std::string> WritePredictionResponse(const scheduler::InferenceResponse& response,
                                              bool single_item);

// A handler model's answer (`preprocess: {kind: bytes}`, a handler process):
// its one UINT8 output row (common/handler_rows.h) as the response's body and
// content type (application/json when the handler set none).
StatusOr<HttpResponse> HandlerAnswerResponse(const scheduler::InferenceResponse& response);

}  // namespace inferd::http
