// MakeModelHooks: builds a model's pre- and post-processing from its config;
// this is the repository::HooksFactory that main wires into the repository.
//
// preprocess.kind: none -> no hook (requests carry tensors);
//                  image -> ImagePreprocessor on the model's single input;
//                  text  -> TextPreprocessor (WordPiece) filling input_ids,
//                           attention_mask and token_type_ids.
// postprocess.kind: raw -> no hook; topk | argmax | sigmoid | softmax ->
//                  Postprocessor.
// The preprocess hook first unwraps each RawInput (multipart, base64 JSON; see
// payload.h), checks its content type, then makes one tensor per input with
// the batch dim first (N = number of raw payloads) and clears request.raw.
// Config problems (bad shape, missing labels or vocab file) are returned here,
// at load time, so the model is marked failed with the reason. Bad requests
// answer kInvalidArgument (400) or kPayloadTooLarge (413) from the hook.
// An exception inside a hook (OpenCV, std::bad_alloc, a library's surprise)
// is caught in the hook (GuardHooks) and becomes that request's 500 with the
// exception's message: the other requests of its batch and the executor
// thread go on.
// The hooks are immutable after creation: safe to call from every executor.
#pragma once

#include <string>

#include "common/status.h"
#include "config/model_config.h"
#include "scheduler/model_spec.h"

namespace inferd::pipeline {

StatusOr<scheduler::ModelHooks> MakeModelHooks(const config::ModelConfig& config,
                                               const std::string& model_dir);

// `hooks` with each one wrapped so that an exception becomes kInternal
// ("preprocessing failed: <what>"), or kUnavailable (503) for std::bad_alloc.
scheduler::ModelHooks GuardHooks(scheduler::ModelHooks hooks);

}  // namespace inferd::pipeline
