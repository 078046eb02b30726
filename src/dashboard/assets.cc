#include "dashboard/assets.h"

namespace inferd::dashboard {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Asset FindAsset(std::string_view name) {
  Asset a;
  a.body = internal::EmbeddedFile(name);
  if (EndsWith(name, ".html")) {
    a.content_type = "text/html; charset=utf-8";
  } else if (EndsWith(name, ".css")) {
    a.content_type = "text/css; charset=utf-8";
  } else if (EndsWith(name, ".js")) {
    a.content_type = "text/javascript; charset=utf-8";
  } else {
    a.content_type = "application/octet-stream";
  }
  return a;
}

}  // namespace inferd::dashboard
