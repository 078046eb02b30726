// `inferd serve`: composes the process: CPU budget and core plan (topology/),
// the torch backend, the scheduler's executors, the model repository with its
// pipeline hooks, the three HTTP ports and the gRPC port; then serves until
// SIGTERM/SIGINT and drains.
//
// Start-up order: the repository registers every model of the store (configs
// validated) and queues the eager loads before any port accepts, so no request
// sees a half-built repository; a request for a model still loading waits for
// it. Then it prints one line with the bound ports
//   inferd: listening http=8080 management=8081 metrics=8082 grpc=8001
// that tests read when they ask for port 0. /ping and /v2/health/ready answer
// ready once the eager loads have succeeded. SIGHUP re-reads --auth-keys and
// the TLS files (which are also re-read when they change).
// Unless --no-supervisor, `inferd serve` is a supervisor (supervisor.h) that
// keeps the ports and runs this same function in a child process (given
// --serving-sockets), started again when it dies unasked.
// Run from the main thread; blocks until the process should exit.
#pragma once

#include <string>
#include <vector>

namespace inferd::app {

struct ServeOptions {
  std::string model_store;
  std::string models = "all";  // all | a,b,c: the models served (the others load by hand)
  bool lazy_load = false;      // load models on their first request (config `load:` overrides)
  int load_threads = 2;        // the repository's load threads
  std::string memory_budget;   // SIZE (512M, 2G) | auto | "" (none): model memory, LRU-paged
  std::string memory_limit;    // SIZE | "" (the cgroup's): resident memory, memory admission
  std::string bind = "127.0.0.1";
  int http_port = 8080;          // 0 = any free port
  int management_port = 8081;
  int metrics_port = 8082;
  int grpc_port = 8001;          // KServe v2 gRPC (Triton's default port); 0 = any free port
  std::string cpus;              // --cpus LIST: narrows the CPU budget by hand
  int auto_threads = 1;          // cores per executor for `instances: auto` models
  // A lone request (nothing else queued) runs on the cores of every idle
  // executor (scheduler/lone_request_width.h); false: always on its own.
  bool widen_lone_requests = true;
  double drain_timeout_s = 30;   // grace period for queued and running requests on SIGTERM
  size_t body_limit = 64u << 20; // larger request bodies answer 413
  int network_threads = 1;       // HTTP threads per port, and gRPC completion-queue threads
  int max_connections = 1000;    // per HTTP port; past it new connections answer 503 (0 = no limit)
  size_t max_queue_bytes = 1ull << 30;  // requests held by the scheduler; past it 503 (0 = no limit)
  // Security (docs/SECURITY.md). A --bind other than loopback needs auth_keys
  // or allow_unauthenticated. The files are re-read on change and on SIGHUP.
  std::string auth_keys;               // YAML: inference/management/metrics key lists
  bool allow_unauthenticated = false;  // serve a non-loopback address without keys
  std::string tls_cert, tls_key;       // PEM: HTTPS on the HTTP ports, TLS on gRPC
  // Crashes (supervisor/supervisor.h, app/crash_recovery.h).
  bool no_supervisor = false;  // serve in this process: no restart after a crash
  std::string state_dir;       // crash journal and history; "" = a private temp folder
  std::vector<std::string> argv;  // the command line, for the supervisor's children
  // Internal flags the supervisor gives the serving process.
  std::string serving_sockets;  // inherited ports (supervisor/listening_sockets.h)
  int restarts = 0;
  std::string previous_exit;
  int ready_fd = -1;  // one byte written once the ports serve
};

// Returns the process exit code.
int RunServe(const ServeOptions& options);

}  // namespace inferd::app
