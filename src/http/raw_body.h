// Raw payloads for models with a `preprocess:` step (an image, a text).
//
// /predictions accepts the body as is (image/jpeg, application/octet-stream,
// text/plain, anything), multipart/form-data (the field named "data", else the
// first file, else the first field: what TorchServe clients send), or JSON
// {"b64": "<base64>"} (decoded), {"data": "<text>"} or {"text": "<text>"}.
// Pure functions; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "http/http_message.h"
#include "scheduler/inference_request.h"

namespace inferd::http {

// Moves the body out of `request` when it is used as is.
StatusOr<scheduler::RawInput> ExtractRawInput(const HttpRequest& request);

// The part of a multipart/form-data body chosen as above.
StatusOr<scheduler::RawInput> ExtractMultipartPart(std::string_view body,
                                                   std::string_view content_type);

// Standard base64 (RFC 4648, padding optional, whitespace ignored).
std::optional<std::string> DecodeBase64(std::string_view text);

// The value of `param` in a header like `multipart/form-data; boundary=xyz`.
std::string HeaderParam(std::string_view header, std::string_view param);

}  // namespace inferd::http
