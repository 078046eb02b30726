// Parses a request body (or its JSON head) with simdjson, avoiding a copy when
// the buffer has simdjson's padding allocated behind it (the connection
// reserves it when it reads a body).
//
// Small documents reuse one parser per thread; a large one gets a parser of
// its own, freed with the document, so that one big request does not leave
// hundreds of MB of parser buffers behind on a network thread.
// A JsonDocument is valid until the next ParseJsonBody on the same thread (for
// small documents) and must not outlive the body it was parsed from.
#pragma once

#include <simdjson.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace inferd::http {

class JsonDocument {
 public:
  JsonDocument(std::unique_ptr<simdjson::dom::parser> owned, simdjson::dom::element root)
      : owned_(std::move(owned)), root_(root) {}
  simdjson::dom::element root() const { return root_; }

 private:
  std::unique_ptr<simdjson::dom::parser> owned_;  // null: the thread's parser
  simdjson::dom::element root_;
};

// Documents at least this large get a parser of their own.
inline constexpr size_t kLargeJsonBytes = 4u << 20;

// Parses the first `length` bytes of `body` (all when length is npos). `what`
// names the document in messages ("request body", "JSON header").
StatusOr<JsonDocument> ParseJsonBody(const std::string& body, size_t length = std::string::npos,
                                     std::string_view what = "request body");

// Makes room for simdjson's padding behind the bytes (may reallocate once).
void ReservePadding(std::string& body);

}  // namespace inferd::http
