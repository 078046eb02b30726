// Traffic mirroring's routes (mirror/, docs/MIRROR.md):
//   inference port
//     GET    /v2/models/{m}/mirror     the report: to, fraction, mirrored, compared, dropped,
//                                      candidate_errors, top1_agreement, max/mean_abs_error,
//                                      both sides' p50/p99, per output, top disagreements
//   management port (added before the TorchServe routes: /models/{m}/{v} would take them)
//     GET    /models/{m}/mirror        the same report
//     PUT    /models/{m}/mirror        body {"to": ..., "fraction": 0.1, "max_in_flight": 8,
//                                      "timeout_ms": 5000}: sets or replaces the mirror
//     DELETE /models/{m}/mirror        removes it
// 404 when the model (or a local candidate) is unknown or has no mirror, 400
// for a bad body, 503 when the server runs without mirroring.
#pragma once

#include <string>

#include "http/router.h"
#include "mirror/mirror.h"
#include "mirror/mirror_set.h"

namespace inferd::http {

// `mirrors` may be null: the server runs without mirroring (503).
void AddMirrorReportRoute(Router& router, mirror::MirrorSet* mirrors);
void AddMirrorManagementRoutes(Router& router, mirror::MirrorSet* mirrors);

// The report as JSON (exposed for tests).
std::string WriteMirrorReport(const mirror::MirrorReport& report);

}  // namespace inferd::http
