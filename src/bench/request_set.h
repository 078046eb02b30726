// RequestSet: the requests a bench run sends, serialized once up front (for
// --protocol grpc, ModelInferRequest messages: see grpc_request.h).
//
// Each input file becomes one complete HTTP/1.1 request (request line,
// headers, body) so that sending it costs one write and no formatting: the
// load generator must stay light, since it shares the machine's cores with the
// server it measures. Files of a folder are taken in name order, hidden files
// skipped, and sent round robin.
//
// Thread-safety: immutable after Build.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_options.h"
#include "common/status.h"

namespace inferd::bench {

struct PreparedRequest {
  std::string source;  // the file it was built from
  std::string bytes;   // the whole request as sent on the wire (gRPC: the serialized message)
};

class RequestSet {
 public:
  // Reads options.input and builds one request per file for options.form.
  static StatusOr<RequestSet> Build(const BenchOptions& options);

  // Builds one request from an in-memory body (what Build does per file).
  static StatusOr<PreparedRequest> Prepare(const BenchOptions& options, const ParsedUrl& url,
                                           const std::string& source, std::string body);

  // A set of already prepared requests (tests, or callers that build bodies).
  static RequestSet FromRequests(std::vector<PreparedRequest> requests, std::string target) {
    RequestSet set;
    set.requests_ = std::move(requests);
    set.target_ = std::move(target);
    return set;
  }

  // The request after `i` others, round robin.
  const PreparedRequest& At(std::size_t i) const { return requests_[i % requests_.size()]; }
  std::size_t size() const { return requests_.size(); }
  const std::string& target() const { return target_; }

 private:
  std::vector<PreparedRequest> requests_;
  std::string target_;
};

// The request path for the form: /predictions/m[/v] or /v2/models/m[/versions/v]/infer
// (gRPC: the method, /inference.GRPCInferenceService/ModelInfer).
std::string TargetPath(const BenchOptions& options, const std::string& path_prefix);

// Content-Type from a file name's extension (.jpg, .png, .json, ...);
// application/octet-stream when unknown.
std::string_view ContentTypeFor(std::string_view file_name);

// The length of the JSON object that starts `body` (after optional
// whitespace), for the v2 binary extension; InvalidArgument if none.
StatusOr<std::size_t> JsonHeaderLength(std::string_view body);

}  // namespace inferd::bench
