#include "http/json_body.h"

namespace inferd::http {

void ReservePadding(std::string& body) {
  if (body.capacity() < body.size() + simdjson::SIMDJSON_PADDING) {
    body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  }
}

StatusOr<JsonDocument> ParseJsonBody(const std::string& body, size_t length,
                                     std::string_view what) {
  thread_local simdjson::dom::parser shared_parser;
  if (length == std::string::npos) length = body.size();
  std::unique_ptr<simdjson::dom::parser> owned;
  if (length >= kLargeJsonBytes) owned = std::make_unique<simdjson::dom::parser>();
  simdjson::dom::parser& parser = owned ? *owned : shared_parser;
  // Bytes behind the JSON (the binary part, the string's spare capacity) are
  // readable, so simdjson may use them as padding instead of copying.
  bool padded = body.capacity() >= length + simdjson::SIMDJSON_PADDING;
  simdjson::dom::element root;
  auto error = parser.parse(body.data(), length, !padded).get(root);
  if (error) {
    std::string msg = simdjson::error_message(error);
    if (length == 0) msg = "the body is empty";
    return InvalidArgument("malformed JSON in " + std::string(what) + ": " + msg);
  }
  return JsonDocument(std::move(owned), root);
}

}  // namespace inferd::http
