#include "bench/load_generator.h"

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <optional>

#include "bench/grpc_connection.h"
#include "bench/http_connection.h"

namespace inferd::bench {

namespace asio = boost::asio;
using Steady = std::chrono::steady_clock;

namespace {
// After a failed connect in closed loop, a connection waits this long before
// its next try, so that a server that is down does not turn the client into a
// busy loop of failures.
constexpr auto kReconnectBackoff = std::chrono::milliseconds(10);

double MillisBetween(TimePoint from, TimePoint to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}
}  // namespace

struct LoadGenerator::Impl {
  asio::io_context ioc{1};
  std::unique_ptr<GrpcClient> grpc;  // --protocol grpc; after ioc: destroyed before it
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  asio::ip::tcp::resolver::results_type endpoints;
  const RequestSet* requests = nullptr;
  LoadPlan plan;

  std::vector<std::shared_ptr<Connection>> connections;
  std::vector<std::shared_ptr<Connection>> idle;  // open loop
  std::deque<TimePoint> due;                      // open loop: intended times
  std::optional<ArrivalSchedule> schedule;
  std::optional<asio::steady_timer> arrival_timer;
  std::optional<asio::steady_timer> watchdog;  // enforces plan.timeout
  TimePoint start;
  TimePoint next_arrival;

  std::vector<Sample> samples;
  LoadCounters counters;
  std::uint64_t next_request = 0;
  bool stopping = false;

  // Sends the next request on `conn`, intended at `intended`.
  void Issue(const std::shared_ptr<Connection>& conn, TimePoint intended) {
    const PreparedRequest& req = requests->At(next_request++);
    ++counters.sent;
    ++counters.in_flight;
    conn->Send(&req.bytes, [this, conn, intended](int status) { OnDone(conn, intended, status); });
  }

  void OnDone(const std::shared_ptr<Connection>& conn, TimePoint intended, int status) {
    const TimePoint now = Steady::now();
    --counters.in_flight;
    ++counters.finished;
    samples.push_back(Sample{now, MillisBetween(intended, now), status});
    if (stopping) return;
    if (plan.concurrency > 0) {
      if (status == kConnectionError) {
        auto timer = std::make_shared<asio::steady_timer>(ioc, kReconnectBackoff);
        timer->async_wait([this, conn, timer](const boost::system::error_code& ec) {
          if (!ec && !stopping) Issue(conn, Steady::now());
        });
      } else {
        Issue(conn, now);
      }
    } else {
      idle.push_back(conn);
      Dispatch();
    }
  }

  // Open loop: hands due requests to idle or new connections.
  void Dispatch() {
    while (!due.empty()) {
      std::shared_ptr<Connection> conn;
      if (!idle.empty()) {
        conn = std::move(idle.back());
        idle.pop_back();
      } else if (connections.size() < static_cast<std::size_t>(plan.max_connections)) {
        conn = NewConnection();
      } else {
        break;
      }
      const TimePoint intended = due.front();
      due.pop_front();
      Issue(conn, intended);
    }
    counters.queued = due.size();
  }

  std::shared_ptr<Connection> NewConnection() {
    if (grpc) {
      connections.push_back(std::make_shared<GrpcConnection>(grpc.get(), plan.timeout));
    } else {
      connections.push_back(std::make_shared<HttpConnection>(ioc, endpoints, plan.timeout));
    }
    return connections.back();
  }

  // Closes connections whose request is older than the timeout, a few times
  // per timeout period; it runs until Stop() has drained, so that a hung
  // request cannot hold the drain beyond its timeout either.
  void ArmWatchdog() {
    const auto period = std::clamp<std::chrono::nanoseconds>(
        plan.timeout / 4, std::chrono::milliseconds(1), std::chrono::milliseconds(250));
    watchdog->expires_after(period);
    watchdog->async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      const TimePoint now = Steady::now();
      for (auto& conn : connections) conn->CloseIfExpired(now);
      ArmWatchdog();
    });
  }

  void OnArrivalTimer() {
    if (stopping) return;
    const TimePoint now = Steady::now();
    while (next_arrival <= now) {
      due.push_back(next_arrival);
      next_arrival = start + schedule->Next();
    }
    Dispatch();
    arrival_timer->expires_at(next_arrival);
    arrival_timer->async_wait([this](const boost::system::error_code& ec) {
      if (!ec) OnArrivalTimer();
    });
  }
};

LoadGenerator::LoadGenerator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LoadGenerator::~LoadGenerator() {
  if (!impl_->stopping) Stop(Steady::now());
}

StatusOr<std::unique_ptr<LoadGenerator>> LoadGenerator::Create(const ParsedUrl& url,
                                                               const RequestSet* requests,
                                                               const LoadPlan& plan) {
  if (requests == nullptr || requests->size() == 0) return InvalidArgument("no requests to send");
  if ((plan.concurrency > 0) == (plan.rate > 0)) {
    return InvalidArgument("a load step needs either a concurrency or a rate");
  }
  auto impl = std::make_unique<Impl>();
  impl->requests = requests;
  impl->plan = plan;
  if (plan.protocol == Protocol::kGrpc) {
    impl->grpc = std::make_unique<GrpcClient>(impl->ioc, url.host + ":" + url.port);
  }
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(impl->ioc);
  impl->endpoints = resolver.resolve(url.host, url.port, ec);
  if (ec) {
    return Unavailable("cannot resolve " + url.host + ":" + url.port + ": " + ec.message());
  }
  if (plan.rate > 0) {
    ASSIGN_OR_RETURN(ArrivalSchedule schedule,
                     ArrivalSchedule::Create(plan.rate, plan.arrivals, plan.seed));
    impl->schedule.emplace(std::move(schedule));
  }
  return std::unique_ptr<LoadGenerator>(new LoadGenerator(std::move(impl)));
}

void LoadGenerator::Start() {
  Impl& m = *impl_;
  m.work.emplace(m.ioc.get_executor());
  m.start = Steady::now();
  m.watchdog.emplace(m.ioc);
  m.ArmWatchdog();
  if (m.plan.concurrency > 0) {
    for (int i = 0; i < m.plan.concurrency; ++i) m.Issue(m.NewConnection(), m.start);
    return;
  }
  m.next_arrival = m.start + m.schedule->Next();
  m.arrival_timer.emplace(m.ioc);
  m.OnArrivalTimer();
}

void LoadGenerator::RunUntil(TimePoint deadline) {
  while (Steady::now() < deadline) {
    if (impl_->ioc.stopped()) impl_->ioc.restart();
    impl_->ioc.run_until(deadline);
  }
}

void LoadGenerator::Stop(TimePoint drain_deadline) {
  Impl& m = *impl_;
  m.stopping = true;
  m.due.clear();
  m.counters.queued = 0;
  if (m.arrival_timer) m.arrival_timer->cancel();
  while (m.counters.in_flight > 0 && Steady::now() < drain_deadline) {
    if (m.ioc.stopped()) m.ioc.restart();
    m.ioc.run_one_until(drain_deadline);
  }
  if (m.watchdog) m.watchdog->cancel();
  for (auto& conn : m.connections) conn->Close();
  m.work.reset();
  // Lets the cancelled operations finish (their callbacks see `stopping`).
  if (m.ioc.stopped()) m.ioc.restart();
  m.ioc.run_for(std::chrono::seconds(1));
}

const std::vector<Sample>& LoadGenerator::samples() const { return impl_->samples; }

LoadCounters LoadGenerator::counters() const { return impl_->counters; }

}  // namespace inferd::bench
