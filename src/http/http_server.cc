#include "http/http_server.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <future>
#include <optional>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"
#include "http/connection.h"
#include "http/dashboard_routes.h"
#include "http/inference_routes.h"
#include "http/management_routes.h"
#include "http/metrics_routes.h"
#include "http/mirror_routes.h"
#include "http/status_map.h"
#include "http/v2_routes.h"

namespace inferd::http {

namespace net = boost::asio;
using tcp = net::ip::tcp;

std::string_view RoleName(HttpServer::Role role) {
  switch (role) {
    case HttpServer::Role::kInference:
      return "inference";
    case HttpServer::Role::kManagement:
      return "management";
    case HttpServer::Role::kMetrics:
      return "metrics";
  }
  return "unknown";
}

class HttpServer::Impl {
 public:
  Impl(const Options& options, serving::Services services)
      : options_(options),
        services_(std::move(services)),
        io_(std::make_shared<net::io_context>(std::max(1, options.threads))),
        acceptor_(net::make_strand(*io_)),
        backoff_timer_(acceptor_.get_executor()) {
    if (services_.metrics) {
      const metrics::Labels port{{"port", std::string(RoleName(options_.role))}};
      refused_counter_ = &services_.metrics->GetCounter(
          "inferd_http_connections_refused_total",
          "connections answered 503 at once because --max-connections were open", port);
      accept_errors_counter_ = &services_.metrics->GetCounter(
          "inferd_http_accept_errors_total",
          "failed accepts (out of file descriptors or memory); the port backs off", port);
    }
  }

  ~Impl() { Stop(); }

  Status Bind() {
    boost::system::error_code ec;
    auto address = net::ip::make_address(options_.bind_address, ec);
    if (ec) {
      return InvalidArgument("bind address '" + options_.bind_address + "' is not an IP address");
    }
    tcp::endpoint endpoint(address, options_.port);
    std::string where = std::string(RoleName(options_.role)) + " port " + options_.bind_address +
                        ":" + std::to_string(options_.port);
    if (options_.listen_fd >= 0) {
      // Inherited from the supervisor: not for the children this process may run.
      ::fcntl(options_.listen_fd, F_SETFD, FD_CLOEXEC);
      acceptor_.assign(endpoint.protocol(), options_.listen_fd, ec);
      if (!ec) where = std::string(RoleName(options_.role)) + " port (inherited fd " +
                       std::to_string(options_.listen_fd) + ")";
    } else {
      acceptor_.open(endpoint.protocol(), ec);
      if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
      if (!ec) acceptor_.bind(endpoint, ec);
      if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    }
    if (ec) return Unavailable("cannot listen on the " + where + ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    BuildRoutes();
    if (options_.keys) guard_.emplace(options_.keys, AccessKind(options_.role));
    return Status::Ok();
  }

  uint16_t port() const { return port_; }

  void Start() {
    if (!threads_.empty()) return;
    Accept();
    for (int i = 0; i < std::max(1, options_.threads); ++i) {
      threads_.emplace_back([io = io_] {
        while (true) {
          try {
            io->run();
            return;
          } catch (const std::exception& e) {
            spdlog::error("http network thread: {}", e.what());
          }
        }
      });
    }
  }

  void Stop() { Stop(options_.stop_grace); }

  void Stop(std::chrono::milliseconds grace) {
    if (stopped_) return;
    stopped_ = true;
    if (!threads_.empty()) FinishConnections(grace);
    io_->stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
    // No thread runs the io_context now: close what is still open, then let
    // the aborted operations finish so the connections are released. Answers
    // that arrive later (from executors) are queued and dropped.
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (auto& c : LiveConnections()) c->Abort();
    {
      MutexLock lock(&connections_mu_);
      connections_.clear();
    }
    io_->restart();
    io_->poll();
  }

 private:
  // While the network threads still run: refuse new connections, close idle
  // ones, and wait (up to `grace`) for busy ones to write their answers.
  void FinishConnections(std::chrono::milliseconds grace) {
    std::promise<void> closed;
    net::post(acceptor_.get_executor(), [this, &closed] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      backoff_timer_.cancel();
      closed.set_value();
    });
    closed.get_future().wait();
    for (auto& c : LiveConnections()) c->Shutdown();
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (!LiveConnections().empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  static auth::Kind AccessKind(Role role) {
    switch (role) {
      case Role::kInference:
        return auth::Kind::kInference;
      case Role::kManagement:
        return auth::Kind::kManagement;
      case Role::kMetrics:
        return auth::Kind::kMetrics;
    }
    return auth::Kind::kManagement;
  }

  std::vector<std::shared_ptr<ConnectionBase>> LiveConnections() {
    std::vector<std::shared_ptr<ConnectionBase>> live;
    MutexLock lock(&connections_mu_);
    for (auto& weak : connections_) {
      if (auto c = weak.lock()) live.push_back(std::move(c));
    }
    return live;
  }

  void BuildRoutes() {
    switch (options_.role) {
      case Role::kInference:
        AddTorchServeInferenceRoutes(router_, services_);
        AddV2InferenceRoutes(router_, services_);
        AddMirrorReportRoute(router_, options_.mirrors);
        break;
      case Role::kManagement:
        AddMirrorManagementRoutes(router_, options_.mirrors);  // before /models/{m}/{v}
        AddManagementRoutes(router_, services_);
        if (options_.dashboard) AddDashboardRoutes(router_, services_, options_.dashboard);
        break;
      case Role::kMetrics:
        AddMetricsRoutes(router_, services_);
        break;
    }
  }

  void Accept() {
    acceptor_.async_accept(net::make_strand(*io_),
                           [this](boost::system::error_code ec, tcp::socket socket) {
                             if (ec == net::error::operation_aborted || !acceptor_.is_open())
                               return;
                             if (ec && IsResourceError(ec)) return BackOff(ec);
                             backoff_ = kMinBackoff;
                             if (!ec) Serve(std::move(socket));
                             Accept();
                           });
  }

  static bool IsResourceError(const boost::system::error_code& ec) {
    return ec == net::error::no_descriptors ||  // EMFILE
           ec == boost::system::errc::too_many_files_open_in_system ||  // ENFILE
           ec == net::error::no_buffer_space || ec == net::error::no_memory;
  }

  // Out of descriptors or memory: the pending connection stays in the listen
  // queue; retrying at once would only fail again in a busy loop.
  void BackOff(const boost::system::error_code& ec) {
    if (accept_errors_counter_) accept_errors_counter_->Increment();
    if (ShouldLog(&last_accept_log_)) {
      spdlog::warn("{} port: accept failed ({}); retrying in {} ms", RoleName(options_.role),
                   ec.message(), backoff_.count());
    }
    backoff_timer_.expires_after(backoff_);
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    backoff_timer_.async_wait([this](boost::system::error_code wait_ec) {
      if (wait_ec || !acceptor_.is_open()) return;
      Accept();
    });
  }

  void Serve(tcp::socket socket) {
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    ConnectionOptions co{options_.body_limit, options_.idle_timeout, live_, std::nullopt,
                         guard_ ? &*guard_ : nullptr};
    const int live = live_->load(std::memory_order_relaxed);
    if (options_.max_connections > 0 && live >= options_.max_connections) {
      if (refused_counter_) refused_counter_->Increment();
      if (ShouldLog(&last_refusal_log_)) {
        spdlog::warn("{} port: {} connections open (--max-connections {}): answering new ones 503",
                     RoleName(options_.role), live, options_.max_connections);
      }
      // Refusals are bounded too: past kMaxRefusing at once, close without a word.
      if (refusing_->load(std::memory_order_relaxed) >= kMaxRefusing) return;
      co.live = refusing_;
      co.refusal = ErrorResponse(Unavailable(
          "the server has " + std::to_string(live) + " connections open, its limit " +
          "(--max-connections " + std::to_string(options_.max_connections) + "); retry later"));
      co.refusal->headers.emplace_back("Retry-After", "1");
    }
    std::shared_ptr<ConnectionBase> connection;
    if (options_.tls) {
      connection = std::make_shared<TlsConnection>(std::move(socket), io_, &router_, std::move(co),
                                                   options_.tls->Current());
    } else {
      connection = std::make_shared<Connection>(std::move(socket), io_, &router_, std::move(co));
    }
    Track(connection);
    connection->Start();
  }

  // At most one log line per 10 s for each kind of trouble (a flood must not
  // become a flood of log lines). Runs on the acceptor's strand.
  static bool ShouldLog(std::chrono::steady_clock::time_point* last) {
    const auto now = std::chrono::steady_clock::now();
    if (*last != std::chrono::steady_clock::time_point{} && now - *last < std::chrono::seconds(10))
      return false;
    *last = now;
    return true;
  }

  void Track(const std::shared_ptr<ConnectionBase>& connection) {
    MutexLock lock(&connections_mu_);
    if (connections_.size() >= 2 * live_after_prune_ + 64) {
      std::erase_if(connections_, [](const auto& w) { return w.expired(); });
      live_after_prune_ = connections_.size();
    }
    connections_.push_back(connection);
  }

  static constexpr std::chrono::milliseconds kMinBackoff{10}, kMaxBackoff{1000};
  static constexpr int kMaxRefusing = 64;

  Options options_;
  serving::Services services_;
  std::shared_ptr<net::io_context> io_;
  tcp::acceptor acceptor_;
  // The members from here to live_ are used on the acceptor's strand only.
  net::steady_timer backoff_timer_;
  std::chrono::milliseconds backoff_ = kMinBackoff;
  std::chrono::steady_clock::time_point last_accept_log_{}, last_refusal_log_{};
  metrics::Counter* refused_counter_ = nullptr;
  metrics::Counter* accept_errors_counter_ = nullptr;
  // Connections alive (served / being refused), counted by Connection itself.
  std::shared_ptr<std::atomic<int>> live_ = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::atomic<int>> refusing_ = std::make_shared<std::atomic<int>>(0);
  Router router_;
  std::optional<AccessGuard> guard_;  // set by Bind when keys are asked for
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  bool stopped_ = false;
  Mutex connections_mu_;
  std::vector<std::weak_ptr<ConnectionBase>> connections_ GUARDED_BY(connections_mu_);
  size_t live_after_prune_ GUARDED_BY(connections_mu_) = 0;
};

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const Options& options,
                                                         serving::Services services) {
  if (options.role != Role::kMetrics && !services.repository) {
    return InvalidArgument(std::string(RoleName(options.role)) + " server needs a repository");
  }
  if (options.threads < 1) return InvalidArgument("http threads must be >= 1");
  auto impl = std::make_unique<Impl>(options, std::move(services));
  RETURN_IF_ERROR(impl->Bind());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;
uint16_t HttpServer::port() const { return impl_->port(); }
void HttpServer::Start() { impl_->Start(); }
void HttpServer::Stop() { impl_->Stop(); }
void HttpServer::Stop(std::chrono::milliseconds grace) { impl_->Stop(grace); }

}  // namespace inferd::http
