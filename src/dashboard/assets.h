// The dashboard page's files (assets/dashboard.html, .css, .js), compiled
// into the binary by embed_assets.cmake: the page works offline and never
// loads anything from another origin. Immutable data; any thread.
#pragma once

#include <string_view>

namespace inferd::dashboard {

struct Asset {
  std::string_view body;          // empty when there is no such file
  std::string_view content_type;  // from the extension
};

// "dashboard.html" -> its bytes; an empty body for any other name.
Asset FindAsset(std::string_view name);

namespace internal {
std::string_view EmbeddedFile(std::string_view name);  // generated
}  // namespace internal

}  // namespace inferd::dashboard
