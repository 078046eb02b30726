// HttpServer: one listening port serving one role's routes over HTTP/1.1
// (Boost.Beast), on a few network threads (default 1).
//
//   inference   TorchServe /ping, /predictions; KServe v2 /v2/...
//   management  TorchServe /models...; v2 /v2/repository/...; /dashboard
//   metrics     /metrics (Prometheus text)
//
// Create binds the port (0 = any free port; port() tells which), Start runs the
// network threads, Stop closes the port, closes idle keep-alive connections,
// lets the responses in flight be written (up to stop_grace), then joins the
// threads. To drain: stop the scheduler accepting, wait for it to be idle,
// then Stop the servers. When accept fails for want of file descriptors or
// memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) the port backs off (10 ms doubling
// to 1 s) instead of retrying at once, so that a full fd table does not turn
// into a busy loop. Errors answer JSON {"error": "..."} with the status
// status_map.h gives. With Options::keys each request needs the key of its
// route (access_guard.h); with Options::tls the port speaks HTTPS only, each
// new connection taking the certificate in force. The routes reach the rest
// of the server through serving::Services (serving/services.h), the same
// struct the gRPC handlers get. Stop the server before the scheduler and
// repository it points to are destroyed; completions that arrive after Stop
// are dropped.
// Thread-safety: Create/Start/Stop from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "auth/authorizer.h"
#include "common/status.h"
#include "dashboard/sampler.h"
#include "mirror/mirror_set.h"
#include "serving/services.h"
#include "tls/certificate_store.h"

namespace inferd::http {

class HttpServer {
 public:
  enum class Role { kInference, kManagement, kMetrics };

  struct Options {
    std::string bind_address = "127.0.0.1";
    uint16_t port = 0;  // 0 = any free port
    Role role = Role::kInference;
    size_t body_limit = 64ull << 20;        // larger bodies answer 413
    int threads = 1;                        // network threads
    std::chrono::seconds idle_timeout{60};  // per read (header + body) and per write
    // Open connections past this are answered 503 and closed at once (with a
    // log line at most every 10 s), so that file descriptors and memory stay
    // bounded whatever the clients do. 0 = no limit.
    int max_connections = 1000;
    // Stop waits this long for responses in flight to be written (answers
    // the scheduler has already produced must reach their clients).
    std::chrono::milliseconds stop_grace{5000};
    const auth::Authorizer* keys = nullptr;      // null = no keys asked for
    const tls::CertificateStore* tls = nullptr;  // null = plain HTTP
    dashboard::Sampler* dashboard = nullptr;     // management: GET /dashboard when set
    // Its routes (mirror_routes.h); null = no traffic mirroring. Requests
    // reach it as serving::Services::tap.
    mirror::MirrorSet* mirrors = nullptr;
    // A socket already listening (the supervisor's, inherited): adopted
    // instead of binding bind_address:port; closed with the server. -1 = bind.
    int listen_fd = -1;
  };

  // `services.repository` is required for the inference and management roles.
  static StatusOr<std::unique_ptr<HttpServer>> Create(const Options& options,
                                                      serving::Services services);
  ~HttpServer();

  uint16_t port() const;
  void Start();
  // Closes the port and idle connections, waits up to stop_grace (or
  // `grace`) for busy ones to write their answers, then joins the threads.
  void Stop();
  void Stop(std::chrono::milliseconds grace);

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

std::string_view RoleName(HttpServer::Role role);  // inference | management | metrics

}  // namespace inferd::http
