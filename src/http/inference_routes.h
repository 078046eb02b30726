// TorchServe inference API on the inference port:
//   GET  /ping                               {"status": "Healthy"} (503 "Unhealthy" when not ready)
//   POST /predictions/{model}[/{version}]    JSON tensors, or raw bytes for models with preprocess:
//                                            (PUT too, as `curl -T file` sends)
// See torchserve_codec.h (tensors) and pipeline/payload.h (raw bodies) for the body forms.
#pragma once

#include "http/router.h"
#include "serving/services.h"

namespace inferd::http {

void AddTorchServeInferenceRoutes(Router& router, const serving::Services& services);

}  // namespace inferd::http
