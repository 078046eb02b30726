// Connection: one client slot of the load generator, carrying one request at a
// time: an HTTP/1.1 keep-alive connection (http_connection.h) or a gRPC call
// slot on a shared channel (grpc_connection.h).
//
// Send() hands over a pre-serialized request and calls `done` once with the
// outcome: an HTTP status (gRPC codes are reported as their HTTP equivalents,
// see grpc_connection.h), kConnectionError or kTimeout (step_result.h).
//
// Thread-safety: none; every call and callback runs on the generator's
// io_context thread. Ownership: held by shared_ptr; pending operations keep it
// alive. The request bytes passed to Send must outlive the callback.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace inferd::bench {

class Connection {
 public:
  using Done = std::function<void(int status)>;
  virtual ~Connection() = default;

  virtual void Send(const std::string* request, Done done) = 0;
  // Ends a pending request (it completes with kConnectionError) and closes.
  virtual void Close() = 0;
  virtual bool busy() const = 0;
  // Ends the pending request if it started more than the timeout before `now`.
  virtual void CloseIfExpired(std::chrono::steady_clock::time_point now) = 0;
};

}  // namespace inferd::bench
