#include "http/router.h"

#include "common/json_writer.h"
#include "http/status_map.h"

namespace inferd::http {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      out.push_back(path.substr(start));
      break;
    }
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

void Router::Add(std::string method, std::string_view pattern, Handler handler) {
  Route route{std::move(method), {}, std::move(handler)};
  for (std::string_view s : SplitPath(pattern)) route.segments.emplace_back(s);
  routes_.push_back(std::move(route));
}

Router::Match Router::Find(std::string_view method, std::string_view path) const {
  Match match;
  std::vector<std::string_view> segments = SplitPath(path);
  for (const Route& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    PathParams params;
    bool ok = true;
    for (size_t i = 0; i < segments.size() && ok; ++i) {
      const std::string& want = route.segments[i];
      if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
        if (segments[i].empty())
          ok = false;
        else
          params[want.substr(1, want.size() - 2)] = std::string(segments[i]);
      } else {
        ok = want == segments[i];
      }
    }
    if (!ok) continue;
    if (route.method == method) {
      match.handler = &route.handler;
      match.params = std::move(params);
      match.allowed.clear();
      return match;
    }
    match.allowed.push_back(route.method);
  }
  return match;
}

void Router::Dispatch(const HttpRequest& request, Responder respond) const {
  Match match = Find(request.method, request.path);
  if (match.handler) {
    (*match.handler)(request, match.params, std::move(respond));
    return;
  }
  if (match.allowed.empty()) {
    Reply(respond,
          JsonResponse(404, ErrorJson("no route for " + request.method + " " + request.path)));
    return;
  }
  std::string allow;
  for (const auto& m : match.allowed) allow += (allow.empty() ? "" : ", ") + m;
  HttpResponse r = JsonResponse(405, ErrorJson("method " + request.method + " is not allowed on " +
                                               request.path + "; allowed: " + allow));
  r.headers.emplace_back("Allow", allow);
  Reply(respond, std::move(r));
}

}  // namespace inferd::http
