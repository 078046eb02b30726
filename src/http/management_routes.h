// Management port: TorchServe's management API and the v2 repository extension.
//   GET    /models                              {"models": [{"modelName", "modelUrl"}]}
//   GET    /models/{m}[/{v}|/all]               describe: config summary, status, load error
//   POST   /models?url=<name>                   (re)load a model of the store by folder name
//                                               (a URL or "<name>.mar" is reduced to <name>)
//   DELETE /models/{m}                          unload every version (in-flight requests finish)
//   PUT    /models/{m}[/{v}]                    accepted, changes nothing: instances and threads
//                                               come from the core plan, not min/max_worker
//   POST   /v2/repository/index                 [{"name", "version", "state", "reason"}]
//   POST   /v2/repository/models/{m}/load|unload
// Loading and unloading block, so they run on RouteContext::run_blocking.
#pragma once

#include "http/route_context.h"
#include "http/router.h"

namespace inferd::http {

void AddManagementRoutes(Router& router, const RouteContext& ctx);

// "s3://bucket/resnet18.mar" -> "resnet18"; "digits" -> "digits".
std::string ModelNameFromUrl(std::string_view url);

}  // namespace inferd::http
