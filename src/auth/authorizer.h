// Authorizer: what the front ends ask of the keys in force, without their
// storage (KeyStore implements it; tests may give a fixed one). The gRPC
// front end includes this header and no annotated mutex (Abseil's thread
// annotation macros, which gRPC's headers pull in, clash with ours).
// Thread-safety: implementations answer from any thread.
#pragma once

#include <string_view>

#include "auth/key_set.h"

namespace inferd::auth {

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  // May a request with this Authorization header call a route that needs `kind`?
  virtual Decision Authorize(Kind kind, std::string_view authorization) const = 0;
  // False when no metrics keys are listed: /metrics is then open.
  virtual bool metrics_protected() const = 0;
};

}  // namespace inferd::auth
