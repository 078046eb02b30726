// Resource limits of the HTTP front end over real sockets: --max-connections
// answers 503 past the limit (and serves again when a connection closes), and a
// full file-descriptor table makes the port back off instead of spinning.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <chrono>
#include <thread>
#include <vector>

#include "http/http_server.h"
#include "http_test_client.h"

namespace inferd::http {
namespace {

using testing::TestClient;

std::unique_ptr<HttpServer> MetricsServer(metrics::Registry* registry, int max_connections) {
  HttpServer::Options o;
  o.role = HttpServer::Role::kMetrics;
  o.max_connections = max_connections;
  serving::Services services;
  services.metrics = registry;
  auto server = HttpServer::Create(o, services);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  (*server)->Start();
  return std::move(*server);
}

double CounterValue(metrics::Registry& registry, const std::string& name) {
  return registry.GetCounter(name, "", {{"port", "metrics"}}).value();
}

TEST(ConnectionLimitsTest, PastMaxConnectionsNewOnesAnswer503) {
  metrics::Registry registry;
  auto server = MetricsServer(&registry, 2);
  auto a = std::make_unique<TestClient>(server->port());
  TestClient b(server->port());
  EXPECT_EQ(a->Send("GET", "/metrics").status, 200);
  EXPECT_EQ(b.Send("GET", "/metrics").status, 200);
  TestClient c(server->port());
  auto refused = c.Send("GET", "/metrics");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.Header("Retry-After"), "1");
  EXPECT_NE(refused.body.find("(--max-connections 2); retry later"), std::string::npos)
      << refused.body;
  EXPECT_EQ(CounterValue(registry, "inferd_http_connections_refused_total"), 1);
  // The two connections keep being served; once one closes, a new one is.
  EXPECT_EQ(b.Send("GET", "/metrics").status, 200);
  a.reset();
  int status = 0;
  for (int attempt = 0; attempt < 200 && status != 200; ++attempt) {
    TestClient d(server->port());
    status = d.Send("GET", "/metrics").status;
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(status, 200);
  server->Stop();
}

// A plain socket, made before the descriptor table is filled, so that
// connecting it later needs no new descriptor.
class RawClient {
 public:
  RawClient() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {}
  ~RawClient() { ::close(fd_); }
  bool Connect(uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  // The status line of the answer to GET `target`.
  std::string Get(const std::string& target) {
    const std::string req = "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if (::write(fd_, req.data(), req.size()) != static_cast<ssize_t>(req.size())) return "";
    std::string answer;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd_, buf, sizeof buf)) > 0;) answer.append(buf, static_cast<size_t>(n));
    return answer.substr(0, answer.find("\r\n"));
  }

 private:
  int fd_;
};

int HighestOpenDescriptor() {
  int highest = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    highest = std::max(highest, std::stoi(e.path().filename().string()));
  }
  return highest;
}

// Fills the process's descriptor table so that the server's accept fails with
// EMFILE while a client waits in the listen queue. The old server re-armed
// accept at once: thousands of failures a second on one core.
TEST(ConnectionLimitsTest, AcceptBacksOffWhenOutOfDescriptors) {
  metrics::Registry registry;
  auto server = MetricsServer(&registry, 0);
  RawClient waiting;
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old_limit), 0);
  rlimit low = old_limit;
  low.rlim_cur = static_cast<rlim_t>(HighestOpenDescriptor() + 16);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fillers;
  for (int fd; (fd = ::dup(0)) >= 0;) fillers.push_back(fd);  // the table is full now
  const bool connected = waiting.Connect(server->port());
  for (int attempt = 0; attempt < 1000; ++attempt) {
    if (CounterValue(registry, "inferd_http_accept_errors_total") >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const double first = CounterValue(registry, "inferd_http_accept_errors_total");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double after = CounterValue(registry, "inferd_http_accept_errors_total");
  for (int fd : fillers) ::close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old_limit), 0);
  ASSERT_TRUE(connected);
  EXPECT_GE(first, 1) << "accept never failed: the test did not fill the table";
  // Back-off of 10 ms doubling: about 5 retries in 300 ms. A busy loop makes
  // thousands.
  EXPECT_LE(after - first, 20);
  // Descriptors are back: the client that waited in the listen queue is served.
  EXPECT_EQ(waiting.Get("/metrics"), "HTTP/1.1 200 OK");
  server->Stop();
}

}  // namespace
}  // namespace inferd::http
