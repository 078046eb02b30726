// KServe Open Inference Protocol v2 REST routes on the inference port:
//   GET  /v2                                         server metadata
//   GET  /v2/health/live | /v2/health/ready          200, or 503 when not ready
//   GET  /v2/models/{m}[/versions/{v}]               model metadata (state and load error included)
//   GET  /v2/models/{m}[/versions/{v}]/ready         200 ready, 404 unknown, 503 with the load
//   error POST /v2/models/{m}[/versions/{v}]/infer         JSON or binary tensors (v2_codec.h)
// For a model with preprocess:, infer takes one BYTES input whose elements are
// the raw payloads (one batch item each).
#pragma once

#include "http/router.h"
#include "serving/services.h"

namespace inferd::http {

void AddV2InferenceRoutes(Router& router, const serving::Services& services);

}  // namespace inferd::http
