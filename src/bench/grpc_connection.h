// The gRPC side of the load generator: GrpcClient holds the channel and the
// completion queue that a step's calls share (HTTP/2 multiplexes them on one
// connection, as gRPC clients do), and the one thread that waits on the queue
// and hands each finished call to the generator's io_context thread.
// GrpcConnection is one call slot: it sends pre-serialized ModelInferRequest
// bytes through the generic stub (no per-call serialization, as for HTTP) and
// reports the outcome as its HTTP equivalent: OK 200, INVALID_ARGUMENT and
// FAILED_PRECONDITION 400, NOT_FOUND 404, RESOURCE_EXHAUSTED 429, UNAVAILABLE
// 503, DEADLINE_EXCEEDED kTimeout, CANCELLED kConnectionError, others 500.
//
// Thread-safety: GrpcConnection as Connection (io_context thread only); the
// queue thread only posts. Ownership: GrpcClient outlives its connections'
// calls (destroy it after they finished or were closed).
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/generic_stub.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <thread>

#include "bench/connection.h"

namespace inferd::bench {

class GrpcClient {
 public:
  GrpcClient(boost::asio::io_context& ioc, const std::string& target);
  ~GrpcClient();  // shuts the queue down and joins its thread

  ::grpc::GenericStub& stub() { return stub_; }
  ::grpc::CompletionQueue* cq() { return &cq_; }
  boost::asio::io_context& ioc() { return ioc_; }

 private:
  boost::asio::io_context& ioc_;
  std::shared_ptr<::grpc::Channel> channel_;
  ::grpc::GenericStub stub_;
  ::grpc::CompletionQueue cq_;
  std::thread thread_;
};

class GrpcConnection : public Connection, public std::enable_shared_from_this<GrpcConnection> {
 public:
  GrpcConnection(GrpcClient* client, std::chrono::nanoseconds timeout)
      : client_(client), timeout_(timeout) {}

  void Send(const std::string* request, Done done) override;
  void Close() override;
  bool busy() const override { return static_cast<bool>(done_); }
  void CloseIfExpired(std::chrono::steady_clock::time_point) override {}  // the call's deadline

  // On the queue's thread: the call finished.
  void OnFinished();

 private:
  GrpcClient* client_;
  std::chrono::nanoseconds timeout_;
  std::unique_ptr<::grpc::ClientContext> ctx_;
  std::unique_ptr<::grpc::GenericClientAsyncResponseReader> call_;
  ::grpc::ByteBuffer response_;
  ::grpc::Status status_;
  Done done_;
  std::shared_ptr<GrpcConnection> self_;  // held while the call is in flight
};

// The HTTP status a gRPC status is reported as (see above).
int SampleStatusFor(const ::grpc::Status& status);

}  // namespace inferd::bench
