// Parses a request body (or its JSON head) with simdjson, reusing one parser
// per network thread and avoiding a copy when the buffer has simdjson's padding
// allocated behind it (the connection reserves it when it reads a body).
// The returned document is valid until the next ParseJsonBody on this thread.
#pragma once

#include <simdjson.h>

#include <string>

#include "common/status.h"

namespace inferd::http {

// Parses the first `length` bytes of `body` (all when length is npos). `what`
// names the document in messages ("request body", "JSON header").
StatusOr<simdjson::dom::element> ParseJsonBody(const std::string& body,
                                               size_t length = std::string::npos,
                                               std::string_view what = "request body");

// Makes room for simdjson's padding behind the bytes (may reallocate once).
void ReservePadding(std::string& body);

}  // namespace inferd::http
