#include "bench/server_metrics.h"

#include <gtest/gtest.h>

namespace inferd::bench {
namespace {

constexpr const char* kBefore = R"(# HELP inferd_requests_total requests answered
# TYPE inferd_requests_total counter
inferd_requests_total{code="200",model="mnv3",version="1"} 100
inferd_requests_total{code="500",model="mnv3",version="1"} 4
inferd_requests_total{code="200",model="mnv3_big",version="1"} 999
inferd_request_duration_seconds_bucket{model="mnv3",le="0.01"} 50
inferd_request_duration_seconds_sum{model="mnv3"} 1.0
inferd_request_duration_seconds_count{model="mnv3"} 104
inferd_queue_duration_seconds_sum{model="mnv3"} 0.2
inferd_queue_duration_seconds_count{model="mnv3"} 104
inferd_compute_duration_seconds_sum{model="mnv3"} 0.5
inferd_compute_duration_seconds_count{model="mnv3"} 104
inferd_batch_size_count{model="mnv3:1"} 80
inferd_queue_depth{model="mnv3:1"} 3
inferd_executors 2
inferd_process_page_faults_total{kind="minor"} 5000
inferd_process_page_faults_total{kind="major"} 7
)";

constexpr const char* kAfter = R"(inferd_requests_total{code="200",model="mnv3",version="1"} 300
inferd_requests_total{code="500",model="mnv3",version="1"} 4
inferd_requests_total{code="200",model="mnv3:2"} 50
inferd_requests_total{code="200",model="mnv3_big",version="1"} 5000
inferd_request_duration_seconds_sum{model="mnv3"} 3.5 1700000000000
inferd_request_duration_seconds_count{model="mnv3"} 354
inferd_queue_duration_seconds_sum{model="mnv3"} 0.7
inferd_queue_duration_seconds_count{model="mnv3"} 354
inferd_compute_duration_seconds_sum{model="mnv3"} 3.0
inferd_compute_duration_seconds_count{model="mnv3"} 354
inferd_process_page_faults_total{kind="minor"} 5500
inferd_process_page_faults_total{kind="major"} 7
)";

TEST(ServerMetrics, ParsesOneModelsSeries) {
  const ServerCounters c = ParseServerCounters(kBefore, "mnv3");
  EXPECT_DOUBLE_EQ(c.requests, 104);  // both codes, not mnv3_big
  EXPECT_DOUBLE_EQ(c.request_sum_s, 1.0);
  EXPECT_DOUBLE_EQ(c.request_count, 104);
  EXPECT_DOUBLE_EQ(c.queue_sum_s, 0.2);
  EXPECT_DOUBLE_EQ(c.compute_count, 104);
  EXPECT_DOUBLE_EQ(ParseServerCounters(kBefore, "mnv3_big").requests, 999);
  EXPECT_DOUBLE_EQ(ParseServerCounters(kBefore, "other").requests, 0);
}

TEST(ServerMetrics, VersionedLabelAndTimestamp) {
  const ServerCounters c = ParseServerCounters(kAfter, "mnv3");
  EXPECT_DOUBLE_EQ(c.requests, 354);  // model="mnv3:2" counts for mnv3
  EXPECT_DOUBLE_EQ(c.request_sum_s, 3.5);
}

TEST(ServerMetrics, DifferenceGivesMeansPerRequest) {
  const ServerStepTimes t =
      Difference(ParseServerCounters(kBefore, "mnv3"), ParseServerCounters(kAfter, "mnv3"));
  EXPECT_DOUBLE_EQ(t.requests, 250);
  EXPECT_DOUBLE_EQ(t.request_us, 2.5 / 250 * 1e6);  // 10 ms
  EXPECT_DOUBLE_EQ(t.queue_us, 0.5 / 250 * 1e6);
  EXPECT_DOUBLE_EQ(t.compute_us, 2.5 / 250 * 1e6);
  EXPECT_DOUBLE_EQ(t.minor_faults_per_request, 500.0 / 250);  // process-wide, per request
  EXPECT_DOUBLE_EQ(t.major_faults_per_request, 0);
  const ServerStepTimes none = Difference(ServerCounters{}, ServerCounters{});
  EXPECT_EQ(none.request_us, 0);
  EXPECT_EQ(none.minor_faults_per_request, 0);
}

TEST(ServerMetrics, FetchFailsClearly) {
  auto text = FetchMetricsText("http://127.0.0.1:1/metrics");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("--metrics-url"), std::string::npos);
  EXPECT_FALSE(FetchMetricsText("ftp://x/metrics").ok());
}

}  // namespace
}  // namespace inferd::bench
