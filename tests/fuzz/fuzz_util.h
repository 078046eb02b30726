// Helpers shared by the fuzz targets: invariant checks that turn a wrong
// answer (a 500 for a client's mistake, JSON that does not parse, a tensor
// whose bytes do not match its shape) into a crash the fuzzer reports, the
// way a sanitizer turns a bad read into one.
#pragma once

#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/tensor.h"

#define FUZZ_CHECK(cond, what)                                                      \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s: %s\n", __FILE__, __LINE__, \
                   #cond, std::string(what).c_str());                               \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

namespace inferd::fuzz {

// The source tree (tests/fixtures/...), set by CMake.
inline std::string SourceDir() { return INFERD_SOURCE_DIR; }

// A client's bytes may only ever be refused as the client's error (4xx).
inline void CheckClientError(const Status& status) {
  const StatusCode c = status.code();
  FUZZ_CHECK(c == StatusCode::kInvalidArgument || c == StatusCode::kPayloadTooLarge ||
                 c == StatusCode::kFailedPrecondition,
             status.ToString());
  FUZZ_CHECK(!status.message().empty(), "an error without a message");
}

// Everything the server writes as JSON must parse as JSON (UTF-8 included).
inline void CheckJson(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  auto error = parser.parse(text.data(), text.size()).get(root);
  FUZZ_CHECK(!error, std::string(simdjson::error_message(error)) + " in " +
                         std::string(text.substr(0, 200)));
}

// A tensor's bytes match its shape and datatype.
inline void CheckTensor(const Tensor& t) {
  FUZZ_CHECK(CheckShape(t.shape(), "tensor").ok(), ShapeToString(t.shape()));
  if (t.dtype() != DataType::kBytes) {
    FUZZ_CHECK(static_cast<int64_t>(t.byte_size()) == ByteSize(t.dtype(), t.shape()),
               ShapeToString(t.shape()) + " with " + std::to_string(t.byte_size()) + " bytes");
  }
}

}  // namespace inferd::fuzz
