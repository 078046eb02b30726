#include "http/management_routes.h"

#include "http/inference_call.h"
#include "http/json_body.h"
#include "common/json_writer.h"
#include "http/model_metadata.h"
#include "http/status_map.h"

namespace inferd::http {
namespace {

std::string StatusJson(const std::string& text) {
  JsonWriter w;
  w.BeginObject().Key("status").String(text).EndObject();
  return w.Take();
}

// Runs a blocking repository call off the network thread and answers its outcome.
void RunRepositoryJob(const RouteContext& ctx, Responder respond, std::function<Status()> job,
                      std::string success) {
  auto work = [respond = std::move(respond), job = std::move(job), success = std::move(success)]() {
    Status st = job();
    Reply(respond, st.ok() ? JsonResponse(200, StatusJson(success)) : ErrorResponse(st));
  };
  if (ctx.run_blocking)
    ctx.run_blocking(std::move(work));
  else
    work();
}

void Describe(const RouteContext& ctx, const PathParams& params, const Responder& respond) {
  auto status = ctx.repository->GetStatus(params.at("model"));
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

void Register(const RouteContext& ctx, const HttpRequest& http, Responder respond) {
  auto it = http.query.find("url");
  if (it == http.query.end() || it->second.empty()) {
    return Reply(respond, ErrorResponse(InvalidArgument(
                              "POST /models needs ?url=<model name>: the name of a folder of the "
                              "model store")));
  }
  std::string name = ModelNameFromUrl(it->second);
  auto* repo = ctx.repository;
  RunRepositoryJob(
      ctx, std::move(respond), [repo, name] { return repo->Load(name); },
      "Model \"" + name + "\" loaded");
}

void Unregister(const RouteContext& ctx, const PathParams& params, Responder respond) {
  const std::string& name = params.at("model");
  if (params.count("version")) {
    return Reply(
        respond,
        ErrorResponse(InvalidArgument("unloading one version is not supported; DELETE /models/" +
                                      name + " unloads every version")));
  }
  auto* repo = ctx.repository;
  RunRepositoryJob(
      ctx, std::move(respond), [repo, name] { return repo->Unload(name); },
      "Model \"" + name + "\" unregistered");
}

void Scale(const RouteContext& ctx, const PathParams& params, const Responder& respond) {
  auto status = ctx.repository->GetStatus(params.at("model"));
  if (!status.ok()) return Reply(respond, ErrorResponse(status.status()));
  Reply(respond, JsonResponse(200, StatusJson("Model \"" + status->name +
                                              "\": nothing changed; instances and threads come "
                                              "from the core plan (config.yaml instances:), not "
                                              "from min_worker/max_worker")));
}

void RepositoryIndex(const RouteContext& ctx, const HttpRequest& http, const Responder& respond) {
  bool ready_only = false;
  if (!http.body->empty()) {
    auto root = ParseJsonBody(*http.body);
    if (!root.ok()) return Reply(respond, ErrorResponse(root.status()));
    bool v = false;
    if (root->root()["ready"].get(v) == simdjson::SUCCESS) ready_only = v;
  }
  Reply(respond, JsonResponse(200, WriteV2RepositoryIndex(ctx.repository->List(), ready_only)));
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

void AddManagementRoutes(Router& router, const RouteContext& ctx) {
  router.Add("GET", "/models", [ctx](const HttpRequest&, const PathParams&, Responder respond) {
    Reply(respond, JsonResponse(200, WriteTorchServeModelList(ctx.repository->List())));
  });
  router.Add("POST", "/models", [ctx](const HttpRequest& h, const PathParams&, Responder r) {
    Register(ctx, h, std::move(r));
  });
  auto describe = [ctx](const HttpRequest&, const PathParams& p, Responder r) {
    Describe(ctx, p, r);
  };
  auto unregister = [ctx](const HttpRequest&, const PathParams& p, Responder r) {
    Unregister(ctx, p, std::move(r));
  };
  auto scale = [ctx](const HttpRequest&, const PathParams& p, Responder r) { Scale(ctx, p, r); };
  router.Add("GET", "/models/{model}", describe);
  router.Add("GET", "/models/{model}/{version}", describe);
  router.Add("DELETE", "/models/{model}", unregister);
  router.Add("DELETE", "/models/{model}/{version}", unregister);
  router.Add("PUT", "/models/{model}", scale);
  router.Add("PUT", "/models/{model}/{version}", scale);

  router.Add(
      "POST", "/v2/repository/index",
      [ctx](const HttpRequest& h, const PathParams&, Responder r) { RepositoryIndex(ctx, h, r); });
  router.Add("POST", "/v2/repository/models/{model}/load",
             [ctx](const HttpRequest&, const PathParams& p, Responder r) {
               auto* repo = ctx.repository;
               std::string name = p.at("model");
               RunRepositoryJob(
                   ctx, std::move(r), [repo, name] { return repo->Load(name); },
                   "Model \"" + name + "\" loaded");
             });
  router.Add("POST", "/v2/repository/models/{model}/unload",
             [ctx](const HttpRequest&, const PathParams& p, Responder r) {
               auto* repo = ctx.repository;
               std::string name = p.at("model");
               RunRepositoryJob(
                   ctx, std::move(r), [repo, name] { return repo->Unload(name); },
                   "Model \"" + name + "\" unloaded");
             });
}

}  // namespace inferd::http
