#include "http/http_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"
#include "http/connection.h"
#include "http/inference_routes.h"
#include "http/management_routes.h"
#include "http/metrics_routes.h"
#include "http/route_context.h"
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
  Impl(const Options& options, Services services)
      : options_(options),
        services_(std::move(services)),
        io_(std::make_shared<net::io_context>(std::max(1, options.threads))),
        acceptor_(net::make_strand(*io_)),
        request_metrics_(services_.metrics),
        blocking_(1) {}

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
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) return Unavailable("cannot listen on the " + where + ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    BuildRoutes();
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

  void Stop() {
    if (stopped_) return;
    stopped_ = true;
    if (!threads_.empty()) FinishConnections();
    io_->stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
    blocking_.join();
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
  // ones, and wait (up to stop_grace) for busy ones to write their answers.
  void FinishConnections() {
    std::promise<void> closed;
    net::post(acceptor_.get_executor(), [this, &closed] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      closed.set_value();
    });
    closed.get_future().wait();
    for (auto& c : LiveConnections()) c->Shutdown();
    const auto deadline = std::chrono::steady_clock::now() + options_.stop_grace;
    while (!LiveConnections().empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::vector<std::shared_ptr<Connection>> LiveConnections() {
    std::vector<std::shared_ptr<Connection>> live;
    MutexLock lock(&connections_mu_);
    for (auto& weak : connections_) {
      if (auto c = weak.lock()) live.push_back(std::move(c));
    }
    return live;
  }

  void BuildRoutes() {
    RouteContext ctx;
    ctx.repository = services_.repository;
    ctx.metrics = services_.metrics;
    ctx.ready = services_.ready;
    ctx.request_metrics = &request_metrics_;
    ctx.run_blocking = [this](std::function<void()> job) { net::post(blocking_, std::move(job)); };
    switch (options_.role) {
      case Role::kInference:
        AddTorchServeInferenceRoutes(router_, ctx);
        AddV2InferenceRoutes(router_, ctx);
        break;
      case Role::kManagement:
        AddManagementRoutes(router_, ctx);
        break;
      case Role::kMetrics:
        AddMetricsRoutes(router_, ctx);
        break;
    }
  }

  void Accept() {
    acceptor_.async_accept(net::make_strand(*io_),
                           [this](boost::system::error_code ec, tcp::socket socket) {
                             if (ec == net::error::operation_aborted || !acceptor_.is_open())
                               return;
                             if (!ec) {
                               boost::system::error_code ignored;
                               socket.set_option(tcp::no_delay(true), ignored);
                               auto connection = std::make_shared<Connection>(
                                   std::move(socket), io_, &router_,
                                   ConnectionOptions{options_.body_limit, options_.idle_timeout});
                               Track(connection);
                               connection->Start();
                             }
                             Accept();
                           });
  }

  void Track(const std::shared_ptr<Connection>& connection) {
    MutexLock lock(&connections_mu_);
    if (connections_.size() >= 2 * live_after_prune_ + 64) {
      std::erase_if(connections_, [](const auto& w) { return w.expired(); });
      live_after_prune_ = connections_.size();
    }
    connections_.push_back(connection);
  }

  Options options_;
  Services services_;
  std::shared_ptr<net::io_context> io_;
  tcp::acceptor acceptor_;
  serving::RequestMetrics request_metrics_;
  Router router_;
  net::thread_pool blocking_;  // model loads and unloads
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  bool stopped_ = false;
  Mutex connections_mu_;
  std::vector<std::weak_ptr<Connection>> connections_ GUARDED_BY(connections_mu_);
  size_t live_after_prune_ GUARDED_BY(connections_mu_) = 0;
};

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const Options& options,
                                                         Services services) {
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

}  // namespace inferd::http
