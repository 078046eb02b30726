// A model's metric series (the scheduler's per-queue ones, the front ends'
// per-request ones) are removed from the registry once no version of the
// model is in memory any more, and come back at its next load: unloaded models
// must not leave /metrics lines (and the memory behind them) behind.
#include <string>

#include "repository/internal/cache_metrics.h"
#include "repository/model_repository.h"
#include "unit/repository/repository_fixture.h"

namespace inferd::repository {
namespace {

using testing::kConfig;
using testing::kMiB;
using testing::RepositoryTest;

class ModelSeriesTest : public RepositoryTest {
 protected:
  void SetUp() override {
    RepositoryTest::SetUp();
    // The scheduler registers each queue's series in the test's registry.
    scheduler::Scheduler::Options so;
    so.executors = {scheduler::ExecutorSpec{}};
    so.clock = &clock_;
    so.metrics = &registry_;
    scheduler_ = std::move(*scheduler::Scheduler::Create(so));
  }

  // What the front ends record per request (serving::RequestMetrics), and the
  // core plan's per-model gauge exported at start-up.
  void RecordRequest(const std::string& model) {
    registry_
        .GetCounter("inferd_requests_total", "",
                    {{"model", model}, {"protocol", "http"}, {"code", "OK"}})
        .Increment();
  }
  void ExportPlanGauge(const std::string& model) {
    registry_.GetGauge("inferd_model_max_concurrency", "", {{"model", model}}).Set(1);
  }

  // Lines of the exposition that carry model="<model>".
  int Lines(const std::string& model) {
    const std::string text = registry_.RenderPrometheus();
    const std::string label = "model=\"" + model + "\"";
    int n = 0;
    for (size_t at = text.find(label); at != std::string::npos; at = text.find(label, at + 1)) {
      ++n;
    }
    return n;
  }
  bool Has(const std::string& needle) {
    return registry_.RenderPrometheus().find(needle) != std::string::npos;
  }
};

TEST_F(ModelSeriesTest, UnloadingTheLastVersionRemovesTheModelsSeries) {
  AddModel("a", kConfig, {1});
  AddModel("b", kConfig, {1});
  auto& repo = Open();
  ExportPlanGauge("a");
  RecordRequest("a");
  RecordRequest("b");
  EXPECT_TRUE(Has("inferd_queue_depth{model=\"a\",version=\"1\"}"));
  const int b_lines = Lines("b");
  EXPECT_GT(b_lines, 10) << "queue depth, rejections by reason, batch sizes, requests";

  ASSERT_TRUE(repo.Unload("a").ok());
  // Only the core plan's gauge, which is there for every model of the store, stays.
  EXPECT_EQ(Lines("a"), 1) << registry_.RenderPrometheus();
  EXPECT_TRUE(Has("inferd_model_max_concurrency{model=\"a\"} 1"));
  EXPECT_FALSE(Has("inferd_queue_depth{model=\"a\""));
  EXPECT_FALSE(Has("inferd_requests_total{code=\"OK\",model=\"a\""));
  EXPECT_EQ(Lines("b"), b_lines) << "the other model's series stay";
  // The cache's own series have no model label and stay.
  EXPECT_TRUE(Has("inferd_model_loads_total{outcome=\"ok\"} 2"));
}

TEST_F(ModelSeriesTest, TheSeriesComeBackOnReloadFromZero) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  RecordRequest("a");
  RecordRequest("a");
  ASSERT_TRUE(repo.Unload("a").ok());
  EXPECT_EQ(Lines("a"), 0);
  ASSERT_TRUE(repo.Load("a").ok());
  EXPECT_TRUE(Has("inferd_queue_depth{model=\"a\",version=\"1\"} 0"));
  RecordRequest("a");
  EXPECT_TRUE(Has("inferd_requests_total{code=\"OK\",model=\"a\",protocol=\"http\"} 1\n"))
      << "a counter that comes back restarts at 0 (a reset to Prometheus)";
}

TEST_F(ModelSeriesTest, TheSeriesStayWhileAHandleKeepsTheModelInMemory) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  RecordRequest("a");
  auto held = *repo.Get("a");
  ASSERT_TRUE(repo.Unload("a").ok());
  EXPECT_TRUE(Has("inferd_queue_depth{model=\"a\""))
      << "a request may still run and count on them";
  held.reset();  // the last handle: the version leaves memory
  EXPECT_EQ(Lines("a"), 0) << registry_.RenderPrometheus();
}

TEST_F(ModelSeriesTest, AnEvictedModelsSeriesGo) {
  AddModel("a", kConfig, {1}, kMiB);
  AddModel("b", kConfig, {1}, kMiB);
  auto o = Defaults();
  o.lazy_load = true;
  o.memory_budget = 3 * kMiB + kMiB / 2;  // one model (a load's estimate is larger)
  Open(o);
  ASSERT_TRUE(AcquireNow("a").ok());
  RecordRequest("a");
  EXPECT_GT(Lines("a"), 0);
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("b").ok());  // evicts a
  EXPECT_EQ(Lines("a"), 0) << registry_.RenderPrometheus();
  EXPECT_GT(Lines("b"), 0);
}

TEST_F(ModelSeriesTest, ReplacingAVersionKeepsTheSeriesUntilTheModelIsUnloaded) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  RecordRequest("a");
  AddModel("a", kConfig, {2});  // a new version in the store: the reload replaces 1 by 2
  ASSERT_TRUE(repo.Load("a").ok());
  EXPECT_TRUE(Has("inferd_queue_depth{model=\"a\",version=\"2\"}"));
  EXPECT_TRUE(Has("inferd_requests_total{code=\"OK\",model=\"a\",protocol=\"http\"} 1"))
      << "the model never left memory: its series stay";
  ASSERT_TRUE(repo.Unload("a").ok());
  EXPECT_EQ(Lines("a"), 0) << "both versions' series go with the last one";
}

TEST(RemoveModelSeries, KeepsOnlyThePlansFamily) {
  metrics::Registry r;
  r.GetGauge("inferd_model_max_concurrency", "", {{"model", "a"}}).Set(2);
  r.GetGauge("inferd_queue_depth", "", {{"model", "a"}, {"version", "1"}}).Set(1);
  EXPECT_EQ(internal::RemoveModelSeries(r, "a"), 1u);
  EXPECT_EQ(r.RenderPrometheus(),
            "# HELP inferd_model_max_concurrency \n"
            "# TYPE inferd_model_max_concurrency gauge\n"
            "inferd_model_max_concurrency{model=\"a\"} 2\n");
}

}  // namespace
}  // namespace inferd::repository
