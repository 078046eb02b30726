#include "http/dashboard_routes.h"

#include "dashboard/assets.h"
#include "http/dashboard_state.h"
#include "http/status_map.h"

namespace inferd::http {
namespace {

constexpr const char* kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

HttpResponse Secured(HttpResponse r) {
  r.headers.emplace_back("Content-Security-Policy", kPolicy);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

Handler ServeAsset(const std::string& name) {
  return [name](const HttpRequest&, const PathParams&, Responder respond) {
    const dashboard::Asset asset = dashboard::FindAsset(name);
    if (asset.body.empty()) {
      return Reply(respond, JsonResponse(500, ErrorJson("dashboard asset " + name +
                                                        " is missing from this build")));
    }
    HttpResponse r;
    r.content_type = std::string(asset.content_type);
    r.body = std::string(asset.body);
    Reply(respond, Secured(std::move(r)));
  };
}

}  // namespace

void AddDashboardRoutes(Router& router, const serving::Services& services,
                        dashboard::Sampler* sampler) {
  router.Add("GET", "/", [](const HttpRequest&, const PathParams&, Responder respond) {
    HttpResponse r;
    r.status = 302;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "see /dashboard\n";
    r.headers.emplace_back("Location", "/dashboard");
    Reply(respond, std::move(r));
  });
  router.Add("GET", "/dashboard", ServeAsset("dashboard.html"));
  router.Add("GET", "/dashboard/dashboard.css", ServeAsset("dashboard.css"));
  router.Add("GET", "/dashboard/dashboard.js", ServeAsset("dashboard.js"));
  router.Add("GET", "/dashboard/state",
             [repository = services.repository, sampler](const HttpRequest& http, const PathParams&,
                                                         Responder respond) {
               auto query = ParseDashboardQuery(http.query);
               if (!query.ok()) return Reply(respond, ErrorResponse(query.status()));
               Reply(respond, Secured(JsonResponse(
                                  200, WriteDashboardState(repository->List(), *sampler, *query))));
             });
}

}  // namespace inferd::http
