#include "http/metrics_routes.h"

namespace inferd::http {

void AddMetricsRoutes(Router& router, const serving::Services& services) {
  router.Add("GET", "/metrics",
             [services](const HttpRequest&, const PathParams&, Responder respond) {
               HttpResponse r;
               r.content_type = "text/plain; version=0.0.4; charset=utf-8";
               r.body = services.metrics ? services.metrics->RenderPrometheus() : "";
               Reply(respond, std::move(r));
             });
}

}  // namespace inferd::http
