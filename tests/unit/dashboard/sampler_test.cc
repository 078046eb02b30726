#include "dashboard/sampler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

namespace inferd::dashboard {
namespace {

class FakeClock : public Clock {
 public:
  TimePoint Now() const override { return TimePoint() + std::chrono::milliseconds(now_ms.load()); }
  void Advance(int ms) { now_ms += ms; }
  std::atomic<int64_t> now_ms{1000};
};

// The series the server records per request (serving/request_metrics.cc,
// scheduler/model_queue.cc), made by hand.
struct Fixture {
  metrics::Registry registry;
  FakeClock clock;
  double cpu_seconds = 0;
  std::map<int, double> executor_cpu;
  std::unique_ptr<Sampler> sampler;

  explicit Fixture(size_t capacity = 5) {
    Sampler::Options o;
    o.metrics = &registry;
    o.clock = &clock;
    o.run_thread = false;
    o.capacity = capacity;
    o.window = 2;
    o.node.usable_cores = 2;
    o.node.executors = {{0, {0}, 1, 0}, {1, {1}, 1, 0}};
    o.process_cpu_seconds = [this] { return cpu_seconds; };
    o.process_resident_bytes = [] { return int64_t{100} << 20; };
    o.executor_cpu_seconds = [this] { return executor_cpu; };
    sampler = std::move(Sampler::Create(std::move(o))).value();
  }
  void Request(const std::string& model, double seconds, const char* code = "OK") {
    registry
        .GetCounter("inferd_requests_total", "h",
                    {{"model", model}, {"protocol", "http"}, {"code", code}})
        .Increment();
    if (model.empty()) return;
    registry
        .GetHistogram("inferd_request_duration_seconds", "h", {{"model", model}},
                      metrics::LatencyBuckets())
        .Observe(seconds);
  }
  void Tick(int ms = 1000) {
    clock.Advance(ms);
    sampler->SampleNow();
  }
};

TEST(Sampler, RejectsAMissingRegistry) { EXPECT_FALSE(Sampler::Create({}).ok()); }

TEST(Sampler, ComputesRatesAndQuantilesPerModelOnTheInjectedClock) {
  Fixture f;
  f.sampler->SampleNow();  // the first tick: counts, no rates yet
  EXPECT_FALSE(f.sampler->Model("a", true));
  for (int i = 0; i < 10; ++i) f.Request("a", 0.003);  // (2.5 ms, 5 ms]
  f.Request("a", 0.003, "INVALID_ARGUMENT");
  f.Tick(500);
  auto a = f.sampler->Model("a", true);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->requests, 11);
  EXPECT_EQ(a->errors, 1);
  EXPECT_DOUBLE_EQ(a->rps, 22.0);  // 11 requests in 0.5 s
  EXPECT_GT(a->p50_ms, 2.5);
  EXPECT_LE(a->p99_ms, 5.0);
  ASSERT_EQ(a->rps_series.size(), 1u);
  EXPECT_FLOAT_EQ(a->rps_series[0], 22.0f);

  // No traffic for a tick: the rate drops to 0, the window still holds the requests.
  f.Tick();
  a = f.sampler->Model("a", true);
  EXPECT_EQ(a->rps, 0);
  EXPECT_GT(a->p99_ms, 0);
  EXPECT_TRUE(std::isnan(a->p99_series.back()));  // no request in that tick
  // Past the window (2 ticks), no quantile.
  f.Tick();
  f.Tick();
  EXPECT_EQ(f.sampler->Model("a", false)->p99_ms, -1);
  EXPECT_TRUE(f.sampler->Model("a", false)->rps_series.empty());  // not asked for
}

TEST(Sampler, RingsAreBoundedAndModelsGoWithTheirSeries) {
  Fixture f(/*capacity=*/3);
  f.sampler->SampleNow();
  for (int t = 0; t < 10; ++t) {
    for (int i = 0; i <= t; ++i) f.Request("a", 0.001);
    f.Tick();
  }
  auto a = f.sampler->Model("a", true);
  ASSERT_EQ(a->rps_series.size(), 3u);
  EXPECT_EQ(a->rps_series, (std::vector<float>{8, 9, 10}));
  EXPECT_EQ(f.sampler->Node().series.at("rps").size(), 3u);

  // The repository removes a model's series when it leaves memory.
  f.registry.RemoveSeries("model", "a");
  f.Tick();
  EXPECT_FALSE(f.sampler->Model("a", true));
  // The node keeps what the model answered, and its rate does not go negative or spike.
  EXPECT_EQ(f.sampler->Node().requests, 55);
  EXPECT_EQ(f.sampler->Node().rps, 0);
}

TEST(Sampler, NodeFiguresCountEveryRequestCpuAndExecutors) {
  Fixture f;
  f.registry.GetCounter("inferd_model_loads_total", "h", {{"outcome", "ok"}}).Increment(2);
  f.registry.GetCounter("inferd_model_loads_total", "h", {{"outcome", "no_room"}}).Increment();
  f.registry.GetGauge("inferd_model_memory_budget_bytes", "h").Set(1000);
  f.registry.GetGauge("inferd_model_resident_bytes", "h").Set(400);
  f.executor_cpu = {{0, 1.0}, {1, 1.0}};
  f.sampler->SampleNow();
  f.Request("a", 0.001);
  f.Request("", 0.001, "NOT_FOUND");  // an unknown model: the node's total only
  f.registry.GetCounter("inferd_model_evictions_total", "h").Increment();
  f.registry.GetCounter("inferd_model_cache_requests_total", "h", {{"result", "hit"}}).Increment(5);
  f.cpu_seconds = 0.5;
  f.executor_cpu = {{0, 1.25}, {1, 1.0}};
  f.Tick(1000);

  auto n = f.sampler->Node();
  EXPECT_EQ(n.ticks, 2u);
  EXPECT_EQ(n.requests, 2);
  EXPECT_DOUBLE_EQ(n.rps, 2);
  EXPECT_DOUBLE_EQ(n.cpu_cores, 0.5);
  EXPECT_EQ(n.rss_bytes, int64_t{100} << 20);
  EXPECT_EQ(n.budget_bytes, 1000);
  EXPECT_EQ(n.model_bytes, 400);
  EXPECT_EQ(n.loads, 2);
  EXPECT_EQ(n.load_failures, 1);
  EXPECT_EQ(n.evictions, 1);
  EXPECT_EQ(n.cache_hits, 5);
  EXPECT_EQ(n.series.at("evictions").back(), 1);
  EXPECT_EQ(n.series.at("loads").back(), 0);  // the loads came before the first tick
  ASSERT_EQ(n.executors.size(), 2u);
  EXPECT_DOUBLE_EQ(n.executors[0].busy, 0.25);
  EXPECT_DOUBLE_EQ(n.executors[1].busy, 0.0);
  EXPECT_TRUE(std::isnan(n.executors[0].busy_series.front()));  // no rate on the first tick
  EXPECT_FALSE(f.sampler->Model("", false));
}

TEST(Sampler, BatchSizesAndQueueDepthAddUpOverVersions) {
  Fixture f;
  for (const char* v : {"1", "2"}) {
    f.registry.GetGauge("inferd_queue_depth", "h", {{"model", "a"}, {"version", v}}).Set(3);
    auto& h = f.registry.GetHistogram("inferd_batch_size", "h", {{"model", "a"}, {"version", v}},
                                      metrics::BatchSizeBuckets());
    h.Observe(1);
    h.Observe(4);
  }
  f.sampler->SampleNow();
  auto a = f.sampler->Model("a", false);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->queue_depth, 6);
  EXPECT_EQ(a->batches, 4u);
  EXPECT_DOUBLE_EQ(a->batch_mean, 2.5);
  EXPECT_EQ(a->batch_sizes, (std::vector<std::pair<double, uint64_t>>{{1, 2}, {4, 2}}));
  EXPECT_EQ(a->requests, 0);
}

// The thread samples on its own (real clock, short period) and stops on destruction.
TEST(Sampler, ThreadSamplesUntilDestroyed) {
  metrics::Registry registry;
  Sampler::Options o;
  o.metrics = &registry;
  o.period = std::chrono::milliseconds(5);
  auto s = std::move(Sampler::Create(std::move(o))).value();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (s->Node().ticks < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(s->Node().ticks, 3u);
  s.reset();
}

}  // namespace
}  // namespace inferd::dashboard
