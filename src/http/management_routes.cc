#include "http/management_routes.h"

#include <charconv>
#include <filesystem>
#include <optional>

#include "archive/archive_registry.h"

#include "common/json_writer.h"
#include "http/inference_call.h"
#include "http/json_body.h"
#include "http/model_metadata.h"
#include "http/status_map.h"
#include "repository/model_name.h"

namespace inferd::http {
namespace {

std::string StatusJson(const std::string& text) {
  JsonWriter w;
  w.BeginObject().Key("status").String(text).EndObject();
  return w.Take();
}

// Answers a repository job's outcome when it ends (on a load thread).
repository::ModelRepository::DoneCallback AnswerWhenDone(Responder respond, std::string success) {
  return [respond = std::move(respond), success = std::move(success)](Status st) {
    Reply(respond, st.ok() ? JsonResponse(200, StatusJson(success)) : ErrorResponse(st));
  };
}

// The boundary of the management API: whatever a handler throws becomes a
// 500 that says what failed, and the server goes on. (The repository reports
// errors as Status; this is the last line, not the way errors travel.)
Handler Guarded(Handler handler) {
  return [handler = std::move(handler)](const HttpRequest& http, const PathParams& params,
                                        Responder respond) {
    try {
      handler(http, params, respond);
    } catch (const std::filesystem::filesystem_error& e) {
      Reply(respond, ErrorResponse(Internal(std::string("file system error: ") + e.what())));
    } catch (const std::exception& e) {
      Reply(respond,
            ErrorResponse(Internal(std::string("management request failed: ") + e.what())));
    }
  };
}

void Describe(const serving::Services& services, const PathParams& params,
              const Responder& respond) {
  auto status = services.repository->GetStatus(params.at("model"));
  if (!status.ok()) return Reply(respond, ErrorResponse(status.status()));
  bool all = params.count("version") && params.at("version") == "all";
  std::optional<int64_t> version;
  if (!all) {
    auto v = ParseVersionParam(params);
    if (!v.ok()) return Reply(respond, ErrorResponse(v.status()));
    version = *v;
  }
  auto body = WriteTorchServeDescribe(*status, version, all);
  if (!body.ok()) return Reply(respond, ErrorResponse(body.status()));
  Reply(respond, JsonResponse(200, std::move(*body)));
}

bool IsArchiveUrl(const std::string& url) {
  return url.size() > 4 && url.compare(url.size() - 4, 4, ".mar") == 0;
}

StatusOr<std::optional<int64_t>> QueryInt(const HttpRequest& http, const char* key, int64_t min) {
  auto it = http.query.find(key);
  if (it == http.query.end() || it->second.empty()) return std::optional<int64_t>();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec != std::errc() || end != it->second.data() + it->second.size() || v < min ||
      v > 1000000000) {
    return InvalidArgument(std::string("POST /models: ") + key + ": expected an integer >= " +
                           std::to_string(min) + ", got '" + it->second + "'");
  }
  return std::optional<int64_t>(v);
}

// POST /models?url=NAME.mar[&model_name=..&batch_size=..&max_batch_delay=..
// &initial_workers=..&response_timeout=..]: TorchServe's registration of an
// archive of the model store (archive/archive_registry.h). The model's name.
StatusOr<std::string> RegisterArchiveFromQuery(const HttpRequest& http, const std::string& url) {
  if (url.find("://") != std::string::npos || url.find('/') != std::string::npos) {
    return InvalidArgument("POST /models: url '" + url +
                           "': inferd downloads nothing and reads archives from its model store "
                           "only: copy the .mar into --model-store and pass its file name");
  }
  std::string name = ModelNameFromUrl(url);
  if (auto it = http.query.find("model_name"); it != http.query.end() && !it->second.empty()) {
    name = it->second;
  }
  RETURN_IF_ERROR(repository::ValidateModelName(name));
  archive::RegisteredArchive archive;
  archive.mar_file = url;
  ASSIGN_OR_RETURN(auto batch, QueryInt(http, "batch_size", 1));
  ASSIGN_OR_RETURN(auto delay, QueryInt(http, "max_batch_delay", 0));
  ASSIGN_OR_RETURN(auto workers, QueryInt(http, "initial_workers", 0));
  ASSIGN_OR_RETURN(auto timeout, QueryInt(http, "response_timeout", 1));
  if (batch) archive.settings.batch_size = static_cast<int>(*batch);
  archive.settings.max_batch_delay_ms = delay;
  if (workers && *workers > 0) archive.settings.workers = static_cast<int>(*workers);
  archive.settings.response_timeout_s = timeout;
  archive::RegisterArchive(name, std::move(archive));
  return name;
}

void Register(const serving::Services& services, const HttpRequest& http, Responder respond) {
  auto it = http.query.find("url");
  if (it == http.query.end() || it->second.empty()) {
    return Reply(respond, ErrorResponse(InvalidArgument(
                              "POST /models needs ?url=<model name>: the name of a folder of the "
                              "model store")));
  }
  std::string name = ModelNameFromUrl(it->second);
  if (IsArchiveUrl(it->second)) {
    auto registered = RegisterArchiveFromQuery(http, it->second);
    if (!registered.ok()) return Reply(respond, ErrorResponse(registered.status()));
    name = *registered;
  }
  services.repository->LoadAsync(
      name, AnswerWhenDone(std::move(respond), "Model \"" + name + "\" loaded"));
}

void Unregister(const serving::Services& services, const PathParams& params, Responder respond) {
  const std::string& name = params.at("model");
  if (params.count("version")) {
    return Reply(
        respond,
        ErrorResponse(InvalidArgument("unloading one version is not supported; DELETE /models/" +
                                      name + " unloads every version")));
  }
  services.repository->UnloadAsync(
      name, AnswerWhenDone(std::move(respond), "Model \"" + name + "\" unregistered"));
}

void Scale(const serving::Services& services, const PathParams& params, const Responder& respond) {
  auto status = services.repository->GetStatus(params.at("model"));
  if (!status.ok()) return Reply(respond, ErrorResponse(status.status()));
  Reply(respond, JsonResponse(200, StatusJson("Model \"" + status->name +
                                              "\": nothing changed; instances and threads come "
                                              "from the core plan (config.yaml instances:), not "
                                              "from min_worker/max_worker")));
}

void RepositoryIndex(const serving::Services& services, const HttpRequest& http,
                     const Responder& respond) {
  bool ready_only = false;
  if (!http.body->empty()) {
    auto root = ParseJsonBody(*http.body);
    if (!root.ok()) return Reply(respond, ErrorResponse(root.status()));
    bool v = false;
    if (root->root()["ready"].get(v) == simdjson::SUCCESS) ready_only = v;
  }
  Reply(respond,
        JsonResponse(200, WriteV2RepositoryIndex(services.repository->List(), ready_only)));
}

}  // namespace

std::string ModelNameFromUrl(std::string_view url) {
  size_t q = url.find_first_of("?#");
  if (q != std::string_view::npos) url = url.substr(0, q);
  while (!url.empty() && url.back() == '/') url.remove_suffix(1);
  size_t slash = url.rfind('/');
  if (slash != std::string_view::npos) url = url.substr(slash + 1);
  for (std::string_view ext : {".mar", ".tar.gz", ".zip"}) {
    if (url.size() > ext.size() && url.substr(url.size() - ext.size()) == ext) {
      url.remove_suffix(ext.size());
      break;
    }
  }
  return std::string(url);
}

void AddManagementRoutes(Router& router, const serving::Services& services) {
  router.Add("GET", "/models",
             Guarded([services](const HttpRequest&, const PathParams&, Responder respond) {
               Reply(respond,
                     JsonResponse(200, WriteTorchServeModelList(services.repository->List())));
             }));
  router.Add("POST", "/models",
             Guarded([services](const HttpRequest& h, const PathParams&, Responder r) {
               Register(services, h, std::move(r));
             }));
  auto describe = [services](const HttpRequest&, const PathParams& p, Responder r) {
    Describe(services, p, r);
  };
  auto unregister = [services](const HttpRequest&, const PathParams& p, Responder r) {
    Unregister(services, p, std::move(r));
  };
  auto scale = [services](const HttpRequest&, const PathParams& p, Responder r) {
    Scale(services, p, r);
  };
  router.Add("GET", "/models/{model}", Guarded(describe));
  router.Add("GET", "/models/{model}/{version}", Guarded(describe));
  router.Add("DELETE", "/models/{model}", Guarded(unregister));
  router.Add("DELETE", "/models/{model}/{version}", Guarded(unregister));
  router.Add("PUT", "/models/{model}", Guarded(scale));
  router.Add("PUT", "/models/{model}/{version}", Guarded(scale));

  router.Add("POST", "/v2/repository/index",
             Guarded([services](const HttpRequest& h, const PathParams&, Responder r) {
               RepositoryIndex(services, h, r);
             }));
  router.Add("POST", "/v2/repository/models/{model}/load",
             Guarded([services](const HttpRequest&, const PathParams& p, Responder r) {
               const std::string& name = p.at("model");
               services.repository->LoadAsync(
                   name, AnswerWhenDone(std::move(r), "Model \"" + name + "\" loaded"));
             }));
  router.Add("POST", "/v2/repository/models/{model}/unload",
             Guarded([services](const HttpRequest&, const PathParams& p, Responder r) {
               const std::string& name = p.at("model");
               services.repository->UnloadAsync(
                   name, AnswerWhenDone(std::move(r), "Model \"" + name + "\" unloaded"));
             }));
}

}  // namespace inferd::http
