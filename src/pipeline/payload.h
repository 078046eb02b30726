// UnwrapPayload: finds the image or text inside a raw request body, so that
// the front ends can hand over the body and its Content-Type untouched and the
// parsing runs on the executor, inside the core budget.
//
// Accepted bodies:
//   - the bytes themselves (image/jpeg, text/plain, application/octet-stream, ...);
//   - multipart/form-data: the part named "data", else the first part with a
//     filename, else the first part (its own Content-Type is reported);
//   - application/json: an object with "b64" (base64, standard or URL-safe
//     alphabet, padding optional), "data" (same) or "text" (a string).
// A KServe v2 BYTES input reaches here as one RawInput per element, unchanged.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "scheduler/inference_request.h"

namespace inferd::pipeline {

struct Payload {
  std::string media_type;  // lower case, without parameters: "image/jpeg", "" when unknown
  std::string_view bytes;  // into the RawInput or into `storage`
};

// `storage` holds decoded bytes (base64, JSON text) and must outlive the result.
StatusOr<Payload> UnwrapPayload(const scheduler::RawInput& raw, std::string* storage);

// "Image/JPEG; charset=x" -> "image/jpeg".
std::string MediaType(std::string_view content_type);

// Decodes base64 (standard or URL-safe; whitespace ignored; padding optional).
StatusOr<std::string> DecodeBase64(std::string_view text);

}  // namespace inferd::pipeline
