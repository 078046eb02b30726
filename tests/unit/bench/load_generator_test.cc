// The load generator against an in-process HTTP server on a loopback port.
// No timed assertions: each test lets the generator run for a short while and
// then checks that what it recorded matches, request for request, what the
// server did.
#include "bench/load_generator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace inferd::bench {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

// Answers POSTs on 127.0.0.1:<port>, one thread per connection. Request n
// (1-based, over all connections) gets 503 when n % error_every == 0, has its
// connection dropped without an answer when n % drop_every == 0, is never
// answered when n % hang_every == 0 (the connection stays open until the
// client closes it), else 200.
class LoopbackServer {
 public:
  LoopbackServer(int error_every, int drop_every, int hang_every = 0)
      : error_every_(error_every),
        drop_every_(drop_every),
        hang_every_(hang_every),
        acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~LoopbackServer() {
    // A blocked accept() is not woken by close(): wake it with a connection.
    stopping_ = true;
    {
      asio::io_context ioc;
      tcp::socket wake(ioc);
      boost::system::error_code ec;
      wake.connect(acceptor_.local_endpoint(), ec);
    }
    accept_thread_.join();
    boost::system::error_code ec;
    acceptor_.close(ec);
    for (auto& t : threads_) t.join();
  }
  std::string port() const { return std::to_string(acceptor_.local_endpoint().port()); }
  std::map<int, int> answered() {
    std::lock_guard lock(mu_);
    return answered_;
  }
  int received() const { return received_; }

 private:
  void AcceptLoop() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket(ioc_);
      acceptor_.accept(socket, ec);
      if (ec || stopping_) return;
      threads_.emplace_back([this, s = std::move(socket)]() mutable { Serve(std::move(s)); });
    }
  }
  void Serve(tcp::socket socket) {
    boost::beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      boost::system::error_code ec;
      http::read(socket, buffer, req, ec);
      if (ec) return;
      const int n = ++received_;
      if (drop_every_ > 0 && n % drop_every_ == 0) {
        std::lock_guard lock(mu_);
        ++answered_[0];
        return;  // closes the socket unanswered
      }
      if (hang_every_ > 0 && n % hang_every_ == 0) {
        std::lock_guard lock(mu_);
        ++answered_[-1];
        continue;  // the next read ends when the client gives up and closes
      }
      const int status = error_every_ > 0 && n % error_every_ == 0 ? 503 : 200;
      http::response<http::string_body> res{static_cast<http::status>(status), 11};
      res.body() = req.body().size() == 5 ? "{\"ok\":1}" : "bad body";
      res.prepare_payload();
      {
        std::lock_guard lock(mu_);
        ++answered_[status];
      }
      http::write(socket, res, ec);
      if (ec) return;
    }
  }

  int error_every_, drop_every_, hang_every_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::thread accept_thread_;
  std::vector<std::thread> threads_;  // only touched by the accept thread until join
  std::atomic<int> received_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::map<int, int> answered_;  // guarded by mu_; key 0 = dropped
};

struct Tally {
  std::map<int, int> by_status;
  int total = 0;
};

Tally Count(const std::vector<Sample>& samples) {
  Tally t;
  for (const Sample& s : samples) {
    ++t.by_status[s.status];
    ++t.total;
  }
  return t;
}

// Runs a step until it has recorded `min_samples` (or 10 s passed, for a
// machine under heavy load), then drains; returns the generator.
std::unique_ptr<LoadGenerator> RunStep(const std::string& port, const RequestSet& requests,
                                       LoadPlan plan, std::size_t min_samples) {
  auto url = ParseUrl("http://127.0.0.1:" + port);
  EXPECT_TRUE(url.ok());
  auto gen = LoadGenerator::Create(*url, &requests, plan);
  EXPECT_TRUE(gen.ok()) << gen.status().ToString();
  (*gen)->Start();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((*gen)->samples().size() < min_samples && std::chrono::steady_clock::now() < give_up) {
    (*gen)->RunUntil(std::chrono::steady_clock::now() + std::chrono::milliseconds(5));
  }
  (*gen)->Stop(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  return std::move(*gen);
}

RequestSet FiveByteRequests(const std::string& port) {
  BenchOptions o;
  o.url = "http://127.0.0.1:" + port;
  o.model = "m";
  auto url = ParseUrl(o.url);
  auto req = RequestSet::Prepare(o, *url, "x.txt", "hello");
  EXPECT_TRUE(req.ok());
  return RequestSet::FromRequests({*req}, TargetPath(o, ""));
}

TEST(LoadGenerator, ClosedLoopCountsMatchTheServer) {
  LoopbackServer server(/*error_every=*/3, /*drop_every=*/0);
  const RequestSet requests = FiveByteRequests(server.port());
  LoadPlan plan;
  plan.concurrency = 3;
  auto gen = RunStep(server.port(), requests, plan, 60);
  Tally t = Count(gen->samples());
  const auto answered = server.answered();
  ASSERT_GE(t.total, 60);
  EXPECT_EQ(gen->counters().sent, static_cast<std::uint64_t>(server.received()));
  EXPECT_EQ(gen->counters().in_flight, 0u);
  EXPECT_EQ(t.total, server.received());
  EXPECT_EQ(t.by_status[200], answered.at(200));
  EXPECT_EQ(t.by_status[503], answered.at(503));  // errors show up as failures
  EXPECT_EQ(t.by_status[kConnectionError], 0);
}

TEST(LoadGenerator, DroppedConnectionsAreFailuresAndReconnect) {
  LoopbackServer server(/*error_every=*/0, /*drop_every=*/4);
  const RequestSet requests = FiveByteRequests(server.port());
  LoadPlan plan;
  plan.concurrency = 2;
  auto gen = RunStep(server.port(), requests, plan, 60);
  Tally t = Count(gen->samples());
  const auto answered = server.answered();
  ASSERT_GE(answered.at(0), 10);  // several drops, each followed by a reconnect
  EXPECT_EQ(t.by_status[kConnectionError], answered.at(0));
  EXPECT_EQ(t.by_status[200], answered.at(200));
  EXPECT_EQ(t.total, server.received());
}

TEST(LoadGenerator, UnansweredRequestsTimeOut) {
  LoopbackServer server(/*error_every=*/0, /*drop_every=*/0, /*hang_every=*/3);
  const RequestSet requests = FiveByteRequests(server.port());
  LoadPlan plan;
  plan.concurrency = 1;
  plan.timeout = std::chrono::milliseconds(30);
  auto gen = RunStep(server.port(), requests, plan, 8);
  Tally t = Count(gen->samples());
  const auto answered = server.answered();
  ASSERT_GE(answered.at(-1), 2);
  EXPECT_EQ(t.by_status[kTimeout], answered.at(-1));
  EXPECT_EQ(t.by_status[200], answered.at(200));
  EXPECT_EQ(t.by_status[kConnectionError], 0);
  for (const Sample& s : gen->samples()) {
    if (s.status == kTimeout) {
      EXPECT_GE(s.latency_ms, 30);
    }
  }
}

TEST(LoadGenerator, OpenLoopSendsOnScheduleFromIntendedTimes) {
  LoopbackServer server(0, 0);
  const RequestSet requests = FiveByteRequests(server.port());
  LoadPlan plan;
  plan.rate = 1000;  // constant: one due every ms
  plan.max_connections = 4;
  auto gen = RunStep(server.port(), requests, plan, 50);
  Tally t = Count(gen->samples());
  EXPECT_EQ(t.total, server.received());
  EXPECT_EQ(t.by_status[200], t.total);
  // Latency runs from the intended time, so it is never negative, and the
  // samples come in completion order.
  for (std::size_t i = 0; i < gen->samples().size(); ++i) {
    EXPECT_GE(gen->samples()[i].latency_ms, 0);
    if (i > 0) {
      EXPECT_GE(gen->samples()[i].done, gen->samples()[i - 1].done);
    }
  }
}

TEST(LoadGenerator, ServerDownIsConnectionErrors) {
  std::string port;
  {
    LoopbackServer server(0, 0);
    port = server.port();
  }  // closed: nothing listens on the port now
  const RequestSet requests = FiveByteRequests(port);
  LoadPlan plan;
  plan.concurrency = 1;
  auto gen = RunStep(port, requests, plan, 5);
  Tally t = Count(gen->samples());
  ASSERT_GT(t.total, 0);
  EXPECT_EQ(t.by_status[kConnectionError], t.total);
}

}  // namespace
}  // namespace inferd::bench
