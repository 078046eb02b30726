// RemoteCandidate: a KServe v2 endpoint on another server as a mirror's
// candidate ("http://host:port/v2/models/NAME[/versions/V]").
//
// Each copy is POSTed to .../infer with the binary tensor extension (inputs
// as raw bytes behind the JSON header, `binary_data_output: true`); an answer
// may carry its outputs as binary data or as JSON `data` arrays (numeric
// datatypes). A copy of a request with raw payloads (a model that
// pre-processes) goes as one BYTES input named `raw_input_name`, as a client
// of the primary sends it. The requests run on one client thread of the
// candidate's own (boost::asio; the load generator's HttpConnection, one
// keep-alive connection per request in flight, made as needed: at most the
// mirror's max_in_flight), never on the server's network or executor threads.
// A request without an answer after `timeout` completes kDeadlineExceeded.
// Destroying the candidate ends the thread; copies still out complete with
// kUnavailable. Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "mirror/candidate.h"

namespace inferd::mirror {

class RemoteCandidate : public Candidate {
 public:
  struct Options {
    std::string url;             // http://host:port/v2/models/NAME[/versions/V]
    std::chrono::milliseconds timeout{5000};
    std::string raw_input_name = "raw";  // see above
  };
  // kInvalidArgument for a URL of another form; kUnavailable when the host
  // does not resolve. Nothing is connected yet.
  static StatusOr<std::shared_ptr<RemoteCandidate>> Create(const Options& options);
  ~RemoteCandidate() override;

  const char* kind() const override { return "remote"; }
  void Send(const scheduler::InferenceRequest& request, TimePoint deadline,
            CandidateDone done) override;

 private:
  class Client;
  explicit RemoteCandidate(std::unique_ptr<Client> client);
  std::unique_ptr<Client> client_;
};

// The v2 binary request body for `request` (exposed for tests): returns the
// JSON header's length; `body` gets header and data.
size_t WriteV2BinaryRequest(const scheduler::InferenceRequest& request,
                            const std::string& raw_input_name, std::string* body);
// The output tensors of a v2 response: `header_length` from
// Inference-Header-Content-Length (npos: all JSON).
StatusOr<std::vector<NamedTensor>> ParseV2Response(const std::string& body, size_t header_length);

}  // namespace inferd::mirror
