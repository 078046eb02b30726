// GrpcServer: the KServe v2 GRPCInferenceService (grpc_predict_v2.proto) on
// one port, over gRPC's asynchronous completion-queue API, so that a request
// waiting for an executor holds no thread: only its call state, until the
// scheduler's completion encodes and sends the answer on the executor's own
// thread (internal/unary_call.h).
//
// Threads: `threads` completion-queue threads (default 1, each draining its
// own queue), one loader thread for repository loads and unloads, and gRPC's
// own few internal threads; none per request.
//
// Create binds the port (0 = any free port; port() tells which), Start runs
// the threads, Stop stops taking calls, lets the answers in flight be sent
// (up to its grace, default stop_grace; later ones are cancelled), then joins
// the threads. To drain: stop the scheduler accepting (new calls then answer
// UNAVAILABLE), wait for it to be idle, then Stop with what is left of the
// drain's grace period. Stop before the repository is destroyed; scheduler
// completions that come after Stop are dropped.
// With Options::keys each call needs the key of its method (call_access.h).
// The handlers reach the server through serving::Services (serving/services.h),
// the struct the HTTP ports get too.
// With Options::tls_cert/tls_key the port speaks TLS only, through gRPC's
// own file watcher (FileWatcherCertificateProvider): the files are re-read
// every second and new connections take the new pair, without a restart.
// Thread-safety: Create/Start/Stop from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "auth/authorizer.h"
#include "common/status.h"
#include "serving/services.h"

namespace inferd::grpc {

class GrpcServer {
 public:
  struct Options {
    std::string bind_address = "127.0.0.1";
    uint16_t port = 0;                       // 0 = any free port
    int threads = 1;                         // completion-queue threads
    size_t max_message_bytes = 64ull << 20;  // larger requests are refused by gRPC
    std::chrono::milliseconds stop_grace{5000};
    std::string tls_cert, tls_key;  // PEM files; both empty = plaintext
    const auth::Authorizer* keys = nullptr;  // null = no keys asked for
  };

  // `services.repository` is required.
  static StatusOr<std::unique_ptr<GrpcServer>> Create(const Options& options,
                                                      serving::Services services);
  ~GrpcServer();

  uint16_t port() const;
  void Start();
  void Stop();
  // As Stop, waiting at most `grace` for the calls in flight (a load, an
  // answer being sent) before cancelling them.
  void Stop(std::chrono::milliseconds grace);

 private:
  class Impl;
  explicit GrpcServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace inferd::grpc
