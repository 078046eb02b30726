#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "metrics/text_format.h"

namespace inferd::metrics {
namespace {

TEST(TextFormat, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue(R"(a"b\c)"
                             "\n"),
            R"(a\"b\\c\n)");
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
}

TEST(TextFormat, EscapesHelpButNotQuotes) {
  EXPECT_EQ(EscapeHelp("say \"hi\"\\\nnext"), "say \"hi\"\\\\\\nnext");
}

TEST(TextFormat, FormatsValues) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(3), "3");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(5e-05), "5e-05");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatValue(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(FormatValue(0.0 / 0.0), "NaN");
  EXPECT_EQ(std::stod(FormatValue(0.1 + 0.2)), 0.1 + 0.2);
}

TEST(TextFormat, ValidatesNames) {
  EXPECT_TRUE(IsValidName("inferd_requests_total", true));
  EXPECT_TRUE(IsValidName("a:b", true));
  EXPECT_FALSE(IsValidName("a:b", false));
  EXPECT_FALSE(IsValidName("1abc", true));
  EXPECT_FALSE(IsValidName("a-b", true));
  EXPECT_FALSE(IsValidName("", true));
}

TEST(Registry, RendersCounterWithHelpTypeAndEscapedLabels) {
  Registry r;
  r.GetCounter("reqs_total", "Requests.\nAll of them", {{"model", "a\"b"}, {"code", "200"}})
      .Increment(2);
  EXPECT_EQ(r.RenderPrometheus(),
            "# HELP reqs_total Requests.\\nAll of them\n"
            "# TYPE reqs_total counter\n"
            "reqs_total{code=\"200\",model=\"a\\\"b\"} 2\n");
}

TEST(Registry, ReadsSeriesBackWithTheirLabels) {
  Registry r;
  r.GetCounter("reqs_total", "h", {{"model", "a"}}).Increment(3);
  r.GetCounter("reqs_total", "h", {{"model", "b"}}).Increment(1);
  r.GetGauge("depth", "h").Set(7);
  Histogram& h = r.GetHistogram("lat", "h", {{"model", "a"}}, {1, 2});
  h.Observe(0.5);
  h.Observe(1.5);
  h.Observe(9);

  auto reqs = r.ReadScalars("reqs_total");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].labels.at("model"), "a");
  EXPECT_EQ(reqs[0].value, 3);
  EXPECT_EQ(reqs[1].value, 1);
  ASSERT_EQ(r.ReadScalars("depth").size(), 1u);
  EXPECT_EQ(r.ReadScalars("depth")[0].value, 7);
  EXPECT_TRUE(r.ReadScalars("absent").empty());
  EXPECT_TRUE(r.ReadScalars("lat").empty());  // a histogram is not a scalar

  auto lat = r.ReadHistograms("lat");
  ASSERT_EQ(lat.size(), 1u);
  EXPECT_EQ(lat[0].upper_bounds, (std::vector<double>{1, 2}));
  EXPECT_EQ(lat[0].cumulative, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(lat[0].sum, 11);
  r.RemoveSeries("model", "a");
  EXPECT_TRUE(r.ReadHistograms("lat").empty());
  EXPECT_EQ(r.ReadScalars("reqs_total").size(), 1u);
}

TEST(Registry, SameLabelsGiveTheSameSeries) {
  Registry r;
  Counter& a = r.GetCounter("c", "h", {{"m", "x"}});
  Counter& b = r.GetCounter("c", "h", {{"m", "x"}});
  Counter& other = r.GetCounter("c", "h", {{"m", "y"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &other);
  a.Increment();
  b.Increment();
  EXPECT_EQ(a.value(), 2);
  EXPECT_EQ(other.value(), 0);
}

TEST(Registry, CounterIgnoresNegativeIncrements) {
  Registry r;
  Counter& c = r.GetCounter("c", "h");
  c.Increment(-5);
  c.Increment(1.5);
  EXPECT_EQ(c.value(), 1.5);
}

TEST(Registry, RendersGaugeWithoutLabels) {
  Registry r;
  Gauge& g = r.GetGauge("depth", "Queue depth.");
  g.Set(4);
  g.Add(-1.5);
  EXPECT_EQ(r.RenderPrometheus(), "# HELP depth Queue depth.\n# TYPE depth gauge\ndepth 2.5\n");
}

TEST(Histogram, BucketsAreCumulativeAndInclusive) {
  Histogram h({1, 0.5, 2, 2});  // unsorted, duplicated
  ASSERT_EQ(h.upper_bounds(), (std::vector<double>{0.5, 1, 2}));
  h.Observe(0.5);  // le=0.5 is inclusive
  h.Observe(0.7);
  h.Observe(3);
  EXPECT_EQ(h.CumulativeCounts(), (std::vector<uint64_t>{1, 2, 2, 3}));
  EXPECT_EQ(h.count(), 3u);
  EXPECT_DOUBLE_EQ(h.sum(), 4.2);
}

TEST(Registry, RendersHistogramBucketsSumAndCount) {
  Registry r;
  Histogram& h = r.GetHistogram("lat_seconds", "Latency.", {{"model", "m"}}, {0.1, 1});
  h.Observe(0.05);
  h.Observe(0.5);
  EXPECT_EQ(r.RenderPrometheus(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{model=\"m\",le=\"0.1\"} 1\n"
            "lat_seconds_bucket{model=\"m\",le=\"1\"} 2\n"
            "lat_seconds_bucket{model=\"m\",le=\"+Inf\"} 2\n"
            "lat_seconds_sum{model=\"m\"} 0.55\n"
            "lat_seconds_count{model=\"m\"} 2\n");
}

TEST(Registry, FamiliesRenderInNameOrder) {
  Registry r;
  r.GetCounter("b_total", "b").Increment();
  r.GetGauge("a", "a").Set(1);
  std::string text = r.RenderPrometheus();
  EXPECT_LT(text.find("# HELP a "), text.find("# HELP b_total "));
}

TEST(Registry, ConcurrentUpdatesAreNotLost) {
  Registry r;
  Counter& c = r.GetCounter("c", "h");
  Histogram& h = r.GetHistogram("h", "h", {}, LatencyBuckets());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.Increment();
        h.Observe(0.001);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 40000);
  EXPECT_EQ(h.count(), 40000u);
  EXPECT_EQ(h.CumulativeCounts().back(), 40000u);
}

TEST(Registry, RemoveSeriesRemovesEveryFamilysSeriesForTheLabelValue) {
  Registry r;
  r.GetCounter("req_total", "h", {{"model", "a"}, {"code", "OK"}}).Increment();
  r.GetCounter("req_total", "h", {{"model", "a"}, {"code", "UNAVAILABLE"}}).Increment();
  r.GetCounter("req_total", "h", {{"model", "b"}, {"code", "OK"}}).Increment();
  r.GetGauge("depth", "h", {{"model", "a"}}).Set(3);
  r.GetHistogram("lat", "h", {{"model", "a"}}, {1}).Observe(0.5);
  r.GetGauge("unlabelled", "h").Set(1);
  EXPECT_EQ(r.RemoveSeries("model", "a"), 4u);
  const std::string text = r.RenderPrometheus();
  EXPECT_EQ(text.find("model=\"a\""), std::string::npos) << text;
  EXPECT_NE(text.find("req_total{code=\"OK\",model=\"b\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("unlabelled 1"), std::string::npos) << text;
  // Families left empty go with their HELP and TYPE lines.
  EXPECT_EQ(text.find("# TYPE depth"), std::string::npos) << text;
  EXPECT_EQ(text.find("# TYPE lat"), std::string::npos) << text;
  EXPECT_EQ(r.RemoveSeries("model", "a"), 0u);
}

TEST(Registry, RemoveSeriesMatchesTheValueExactly) {
  Registry r;
  r.GetGauge("g", "h", {{"model", "ab"}}).Set(1);
  r.GetGauge("g", "h", {{"other", "a"}}).Set(2);
  EXPECT_EQ(r.RemoveSeries("model", "a"), 0u);
  EXPECT_NE(r.RenderPrometheus().find("g{model=\"ab\"} 1"), std::string::npos);
  EXPECT_NE(r.RenderPrometheus().find("g{other=\"a\"} 2"), std::string::npos);
}

TEST(Registry, RemoveSeriesSparesTheFamiliesToKeep) {
  Registry r;
  r.GetGauge("plan", "h", {{"model", "a"}}).Set(2);
  r.GetGauge("depth", "h", {{"model", "a"}}).Set(1);
  EXPECT_EQ(r.RemoveSeries("model", "a", {"plan"}), 1u);
  const std::string text = r.RenderPrometheus();
  EXPECT_NE(text.find("plan{model=\"a\"} 2"), std::string::npos) << text;
  EXPECT_EQ(text.find("depth{"), std::string::npos) << text;
}

TEST(Registry, ARemovedSeriesComesBackFromZero) {
  Registry r;
  r.GetCounter("c_total", "h", {{"model", "a"}}).Increment(5);
  r.RemoveSeries("model", "a");
  r.GetCounter("c_total", "h", {{"model", "a"}}).Increment();
  EXPECT_NE(r.RenderPrometheus().find("c_total{model=\"a\"} 1\n"), std::string::npos)
      << r.RenderPrometheus();
}

TEST(Registry, ASharedSeriesOutlivesItsRemoval) {
  Registry r;
  std::shared_ptr<Counter> c = r.ShareCounter("c_total", "h", {{"model", "a"}});
  std::shared_ptr<Histogram> h = r.ShareHistogram("h", "h", {{"model", "a"}}, {1});
  EXPECT_EQ(c.get(), &r.GetCounter("c_total", "h", {{"model", "a"}}));
  r.RemoveSeries("model", "a");
  c->Increment();  // still valid (ASan would catch a use after free), just not rendered
  h->Observe(2);
  EXPECT_EQ(c->value(), 1);
  EXPECT_EQ(h->count(), 1u);
  EXPECT_EQ(r.RenderPrometheus(), "");
  EXPECT_NE(r.ShareCounter("c_total", "h", {{"model", "a"}}), c);  // a new series
}

TEST(Registry, RemoveSeriesWhileOthersUpdateAndRender) {
  Registry r;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        r.ShareCounter("c_total", "h", {{"model", "a"}})->Increment();
        r.ShareHistogram("h", "h", {{"model", "a"}}, {1})->Observe(0.5);
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop.load()) r.RenderPrometheus();
  });
  for (int i = 0; i < 2000; ++i) r.RemoveSeries("model", "a");
  stop = true;
  for (auto& t : threads) t.join();
  r.RemoveSeries("model", "a");
  EXPECT_EQ(r.RenderPrometheus(), "");
}

TEST(Buckets, DefaultsAreSortedAndSpanTheDocumentedRange) {
  auto lat = LatencyBuckets();
  EXPECT_TRUE(std::is_sorted(lat.begin(), lat.end()));
  EXPECT_DOUBLE_EQ(lat.front(), 50e-6);
  EXPECT_DOUBLE_EQ(lat.back(), 60);
  auto bs = BatchSizeBuckets();
  EXPECT_EQ(bs.front(), 1);
  EXPECT_EQ(bs.back(), 256);
}

}  // namespace
}  // namespace inferd::metrics
