#include "plan/traffic_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd::plan {
namespace {

using ::testing::HasSubstr;

// Two models on one server: `a` ran 100 requests in batches of 4 with 2 s of
// (per-request-observed) compute, `b` 50 requests one at a time with 1 s.
std::string Scrape(double cpu, double a_requests, double b_requests, double a_compute,
                   double b_compute, double a_batches, double b_batches, int loaded = 2) {
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "# TYPE process_cpu_seconds_total counter\n"
      "process_cpu_seconds_total %g\n"
      "inferd_models_loaded %d\n"
      "inferd_model_resident_bytes 300000000\n"
      "inferd_requests_total{code=\"OK\",model=\"a\",protocol=\"http\",version=\"1\"} %g\n"
      "inferd_requests_total{code=\"OK\",model=\"b\",protocol=\"http\"} %g\n"
      "inferd_requests_total{code=\"NOT_FOUND\",model=\"nope\",protocol=\"http\"} 3\n"
      "inferd_compute_duration_seconds_sum{model=\"a\"} %g\n"
      "inferd_compute_duration_seconds_count{model=\"a\"} %g\n"
      "inferd_compute_duration_seconds_sum{model=\"b\"} %g\n"
      "inferd_compute_duration_seconds_count{model=\"b\"} %g\n"
      "inferd_batch_size_sum{model=\"a\",version=\"1\"} %g\n"
      "inferd_batch_size_count{model=\"a\",version=\"1\"} %g\n"
      "inferd_batch_size_sum{model=\"b\",version=\"1\"} %g\n"
      "inferd_batch_size_count{model=\"b\",version=\"1\"} %g\n"
      "inferd_queue_depth{model=\"a\",version=\"1\"} 0\n"
      "inferd_queue_depth{model=\"b\",version=\"1\"} 0\n",
      cpu, loaded, a_requests, b_requests, a_compute, a_requests, b_compute, b_requests, a_requests,
      a_batches, b_requests, b_batches);
  return buf;
}

TEST(ParseScrapeTest, ReadsTheSeriesByModel) {
  auto s = ParseScrape(Scrape(12.5, 100, 50, 2, 1, 25, 50), "http://h:1/metrics");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(s->process_cpu_seconds, 12.5);
  EXPECT_DOUBLE_EQ(s->requests.at("a"), 100);
  EXPECT_DOUBLE_EQ(s->requests.at("nope"), 3);
  EXPECT_DOUBLE_EQ(s->compute_seconds.at("a"), 2);
  EXPECT_DOUBLE_EQ(s->batches.at("a"), 25);
  EXPECT_EQ(s->models.size(), 2u);  // `nope` is not served there
  EXPECT_DOUBLE_EQ(s->models_loaded, 2);
}

TEST(ParseScrapeTest, RefusesWhatIsNotInferd) {
  EXPECT_THAT(ParseScrape("go_goroutines 5\n", "u").status().message(),
              HasSubstr("not an inferd /metrics"));
  EXPECT_THAT(ParseScrape("inferd_models_loaded 1\n", "u").status().message(),
              HasSubstr("process_cpu_seconds_total"));
}

TEST(MeasureFromScrapesTest, SharesTheProcessCpuByForwardTime) {
  auto before = ParseScrape(Scrape(10, 0, 0, 0, 0, 0, 0), "u");
  // In 10 s: a 100 requests in 25 batches of 4, its compute sum 2 s counts
  // each batch 4 times: 0.5 s of forwards; b 50 requests, 1.5 s of forwards.
  // The process used 4 s of CPU: a gets 1 s (10 ms per request), b 3 s (60 ms).
  auto after = ParseScrape(Scrape(14, 100, 50, 2, 1.5, 25, 50), "u");
  ASSERT_TRUE(before.ok() && after.ok());
  std::vector<ModelDemand> base(1);
  base[0] = {"b", 1, 1, 5000, 3};
  auto m = MeasureFromScrapes({*before}, {*after}, 10, base, "base.yaml");
  ASSERT_FALSE(m.ok());  // a's memory is known nowhere (two models loaded)
  EXPECT_THAT(m.status().message(), HasSubstr("no memory for a"));
  base.push_back({"a", 1, 1, 7000, 4});
  m = MeasureFromScrapes({*before}, {*after}, 10, base, "base.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 2u);
  const ModelDemand& b = (*m)[0].demand;
  const ModelDemand& a = (*m)[1].demand;
  EXPECT_EQ(b.name, "b");
  EXPECT_DOUBLE_EQ(a.rps, 10);
  EXPECT_DOUBLE_EQ(b.rps, 5);
  EXPECT_NEAR(a.core_ms, 10, 1e-9);
  EXPECT_NEAR(b.core_ms, 60, 1e-9);
  EXPECT_EQ(a.memory_bytes, 7000);
  EXPECT_THAT((*m)[1].how, HasSubstr("memory from base.yaml"));
}

TEST(MeasureFromScrapesTest, OneModelServerGivesItsMemoryAndFileModelsStay) {
  auto before = ParseScrape(Scrape(10, 0, 0, 0, 0, 0, 0, 1), "u");
  auto after = ParseScrape(Scrape(12, 40, 0, 1, 0, 40, 0, 1), "u");
  ASSERT_TRUE(before.ok() && after.ok());
  // `cold` is served by no scraped server; `b` is, without traffic, and is
  // not the one model loaded: its memory must come from the file.
  std::vector<ModelDemand> base(1);
  base[0] = {"cold", 0.5, 20, 9000, 2};
  auto m = MeasureFromScrapes({*before}, {*after}, 4, base, "base.yaml");
  EXPECT_THAT(m.status().message(), HasSubstr("no memory for b"));
  base.push_back({"b", 3, 7, 5000, 3});
  m = MeasureFromScrapes({*before}, {*after}, 4, base, "base.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 3u);  // the file's cold and b, then a
  EXPECT_EQ((*m)[0].demand.name, "cold");
  EXPECT_DOUBLE_EQ((*m)[0].demand.rps, 0.5);
  EXPECT_EQ((*m)[1].demand.name, "b");
  EXPECT_DOUBLE_EQ((*m)[1].demand.rps, 0);      // measured: no requests
  EXPECT_DOUBLE_EQ((*m)[1].demand.core_ms, 7);  // so the file's
  EXPECT_EQ((*m)[2].demand.name, "a");
  EXPECT_EQ((*m)[2].demand.memory_bytes, 300000000);           // its server's one model
  EXPECT_NEAR((*m)[2].demand.core_ms, 2.0 / 40 * 1000, 1e-9);  // all 2 s of CPU
  EXPECT_DOUBLE_EQ((*m)[2].demand.rps, 10);
}

TEST(MeasureFromScrapesTest, ARestartedServerIsAnError) {
  auto before = ParseScrape(Scrape(10, 100, 0, 0, 0, 0, 0), "u");
  auto after = ParseScrape(Scrape(2, 5, 0, 0, 0, 0, 0), "u");
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_THAT(MeasureFromScrapes({*before}, {*after}, 1, {}, "").status().message(),
              HasSubstr("restarted"));
}

TEST(MeasureTrafficTest, FetchErrorsNameTheUrl) {
  MetricsFetcher fail = [](const std::string&) -> StatusOr<std::string> {
    return Unavailable("connection refused");
  };
  auto m = MeasureTraffic({"http://x:1/metrics"}, 0.01, fail, {}, "");
  EXPECT_THAT(m.status().message(), HasSubstr("http://x:1/metrics: connection refused"));
}

TEST(FormatMeasuredModelsTest, ReadsBackAsAModelsFile) {
  std::vector<MeasuredModel> models(1);
  models[0].demand = {"a", 10, 2.5, 1234, 0};
  models[0].how = "1 server";
  const std::string text = FormatMeasuredModels(models, {"http://h/metrics"}, 10);
  auto parsed = ParseModelList(text, "saved.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ((*parsed)[0].name, "a");
  EXPECT_DOUBLE_EQ((*parsed)[0].rps, 10);
  EXPECT_DOUBLE_EQ((*parsed)[0].core_ms, 2.5);
  EXPECT_EQ((*parsed)[0].memory_bytes, 1234);
}

}  // namespace
}  // namespace inferd::plan
