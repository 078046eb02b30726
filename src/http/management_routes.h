// Management port: TorchServe's management API and the v2 repository extension.
//   GET    /models                              {"models": [{"modelName", "modelUrl", "state",
//                                                "load", "pinned", "residentBytes", ...}]}
//   GET    /models/{m}[/{v}|/all]               describe: config summary, status, load error
//   POST   /models?url=<name>                   (re)load a model of the store by folder name
//                                               (a URL or "<name>.mar" is reduced to <name>);
//                                               answers when the load has ended, like
//                                               TorchServe's synchronous register; an already
//                                               loaded model is reloaded (not 409)
//   DELETE /models/{m}                          unload every version (in-flight requests finish);
//                                               it then loads only through this API again
//   PUT    /models/{m}[/{v}]                    accepted, changes nothing: instances and threads
//                                               come from the core plan, not min/max_worker
//   POST   /v2/repository/index                 [{"name", "version", "state", "reason", "bytes",
//                                                "footprint", "load", "pinned", "last_used"}]
//   POST   /v2/repository/models/{m}/load|unload
// Loads and unloads run on the repository's load threads; the answer is sent
// from there when the job ends. Names are checked by the repository (400 for
// a name that cannot be a model folder, 404 for one the store does not hold);
// an exception from any handler is answered 500 with its message.
#pragma once

#include "http/router.h"
#include "serving/services.h"

namespace inferd::http {

void AddManagementRoutes(Router& router, const serving::Services& services);

// "s3://bucket/resnet18.mar" -> "resnet18"; "digits" -> "digits".
std::string ModelNameFromUrl(std::string_view url);

}  // namespace inferd::http
