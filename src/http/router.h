// Router: maps (method, path) to a handler, with `{name}` path parameters.
//
// Patterns are split on '/'; a `{name}` segment matches any one non-empty
// segment and is captured. Routes are tried in the order added, so add the
// more specific ones first. A trailing slash is ignored. A path that matches
// some route under another method answers 405 with the allowed methods.
// Build it once, then Match from any thread (Match is const).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_message.h"

namespace inferd::http {

using PathParams = std::map<std::string, std::string>;
using Handler = std::function<void(const HttpRequest&, const PathParams&, Responder)>;

class Router {
 public:
  void Add(std::string method, std::string_view pattern, Handler handler);

  struct Match {
    const Handler* handler = nullptr;  // null: no route
    PathParams params;
    std::vector<std::string> allowed;  // when null and the path exists under other methods
  };
  Match Find(std::string_view method, std::string_view path) const;

  // Finds the route and calls it, or answers 404 / 405 itself.
  void Dispatch(const HttpRequest& request, Responder respond) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
  };
  std::vector<Route> routes_;
};

// Splits "/a/b/" into {"a", "b"}; empty segments in the middle are kept ("" never matches).
std::vector<std::string_view> SplitPath(std::string_view path);

}  // namespace inferd::http
