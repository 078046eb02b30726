#include "http/dashboard_state.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <atomic>

namespace inferd::http {
namespace {

using repository::ModelState;
using repository::ModelStatus;

class StepClock : public Clock {
 public:
  TimePoint Now() const override { return TimePoint() + std::chrono::seconds(now_s.load()); }
  std::atomic<int64_t> now_s{1};
};

ModelStatus Model(const std::string& name, ModelState state, int64_t bytes = 0,
                  const std::string& error = "") {
  ModelStatus s;
  s.name = name;
  config::ModelConfig c;
  c.name = name;
  c.max_batch_size = 8;
  c.precision = config::Precision::kFp32;
  s.config = c;
  repository::VersionStatus v;
  v.version = 1;
  v.state = state;
  v.error = error;
  v.resident = bytes > 0;
  v.footprint.bytes = bytes;
  s.versions = {v};
  s.state = state;
  s.resident_bytes = bytes;
  return s;
}

struct Fixture {
  metrics::Registry registry;
  StepClock clock;
  std::unique_ptr<dashboard::Sampler> sampler;
  Fixture() {
    dashboard::Sampler::Options o;
    o.metrics = &registry;
    o.clock = &clock;
    o.run_thread = false;
    o.node.usable_cores = 2;
    o.node.usable_cpus = "0-1";
    o.node.origin = {{"budget", "2 of 2 allowed cores: cpus 0-1"}};
    o.node.executors = {{0, {0}, 1, 0}};
    o.process_cpu_seconds = [] { return 0.0; };
    o.process_resident_bytes = [] { return int64_t{1} << 20; };
    o.executor_cpu_seconds = [] { return std::map<int, double>{}; };
    sampler = std::move(dashboard::Sampler::Create(std::move(o))).value();
  }
  void Requests(const std::string& model, int n) {
    registry.GetCounter("inferd_requests_total", "h", {{"model", model}, {"code", "OK"}})
        .Increment(n);
    auto& h = registry.GetHistogram("inferd_request_duration_seconds", "h", {{"model", model}},
                                    metrics::LatencyBuckets());
    for (int i = 0; i < n; ++i) h.Observe(0.002);
  }
  void Tick() {
    clock.now_s += 1;
    sampler->SampleNow();
  }
};

simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& text) {
  auto doc = parser.parse(text);
  EXPECT_EQ(doc.error(), simdjson::SUCCESS) << text;
  return doc.value();
}

TEST(DashboardState, ListsModelsWithStateFiguresAndTheNode) {
  Fixture f;
  std::vector<ModelStatus> models = {Model("b", ModelState::kReady, 4096),
                                     Model("a", ModelState::kUnavailable, 0, "bad magic")};
  f.sampler->SampleNow();
  f.Requests("b", 5);
  f.Tick();
  auto q = ParseDashboardQuery({});
  ASSERT_TRUE(q.ok());
  const std::string text = WriteDashboardState(models, *f.sampler, *q);
  simdjson::dom::parser parser;
  auto root = Parse(parser, text);
  EXPECT_EQ(int64_t(root["models_total"]), 2);
  EXPECT_EQ(int64_t(root["states"]["READY"]), 1);
  EXPECT_EQ(int64_t(root["states"]["UNAVAILABLE"]), 1);
  EXPECT_EQ(int64_t(root["node"]["usable_cores"]), 2);
  EXPECT_EQ(std::string_view(root["node"]["origin"].at(0)["step"]), "budget");
  EXPECT_EQ(int64_t(root["node"]["executors"].at(0)["cpus"].at(0)), 0);
  EXPECT_EQ(double(root["node"]["requests"]), 5);
  auto models_json = root["models"].get_array().value();
  ASSERT_EQ(models_json.size(), 2u);
  auto a = models_json.at(0), b = models_json.at(1);  // sorted by name
  EXPECT_EQ(std::string_view(a["name"]), "a");
  EXPECT_EQ(std::string_view(a["state"]), "UNAVAILABLE");
  EXPECT_EQ(std::string_view(a["reason"]), "bad magic");
  EXPECT_EQ(double(a["requests"]), 0);
  EXPECT_TRUE(a["p99_ms"].is_null());
  EXPECT_EQ(std::string_view(b["state"]), "READY");
  EXPECT_EQ(int64_t(b["resident_bytes"]), 4096);
  EXPECT_EQ(double(b["requests"]), 5);
  EXPECT_DOUBLE_EQ(double(b["rps"]), 5);
  EXPECT_GT(double(b["p99_ms"]), 1.0);
  EXPECT_LE(double(b["p99_ms"]), 2.5);
  EXPECT_EQ(std::string_view(b["precision"]), "fp32");
  EXPECT_EQ(b["series"]["rps"].get_array().size(), 1u);
}

TEST(DashboardState, AQuarantinedModelShowsWhy) {
  Fixture f;
  ModelStatus q = Model("spinner", ModelState::kQuarantined);
  q.reason = "running in 2 crashes of the serving process, two within 10 minutes: ...";
  q.versions[0].reason = q.reason;
  std::vector<ModelStatus> models = {q};
  f.sampler->SampleNow();
  auto query = ParseDashboardQuery({});
  ASSERT_TRUE(query.ok());
  const std::string text = WriteDashboardState(models, *f.sampler, *query);
  simdjson::dom::parser parser;
  auto root = Parse(parser, text);
  auto m = root["models"].at(0);
  EXPECT_EQ(std::string_view(m["state"]), "QUARANTINED");
  EXPECT_EQ(std::string_view(m["reason"]), q.reason);
}

TEST(DashboardState, PagesFiltersAndSorts) {
  Fixture f;
  std::vector<ModelStatus> models;
  for (int i = 0; i < 1000; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "m%04d", i);
    models.push_back(Model(name, i % 10 == 0 ? ModelState::kReady : ModelState::kUnavailable));
  }
  f.sampler->SampleNow();
  f.Requests("m0500", 3);
  f.Tick();
  simdjson::dom::parser parser;

  auto page = ParseDashboardQuery({{"offset", "990"}, {"limit", "50"}, {"series", "0"}});
  ASSERT_TRUE(page.ok());
  auto root = Parse(parser, WriteDashboardState(models, *f.sampler, *page));
  EXPECT_EQ(int64_t(root["models_matched"]), 1000);
  auto rows = root["models"].get_array().value();
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(std::string_view(rows.at(0)["name"]), "m0990");
  EXPECT_TRUE(rows.at(0)["series"].error() == simdjson::NO_SUCH_FIELD);

  auto filtered = ParseDashboardQuery({{"filter", "ready"}});
  root = Parse(parser, WriteDashboardState(models, *f.sampler, *filtered));
  EXPECT_EQ(int64_t(root["models_matched"]), 100);

  auto busiest = ParseDashboardQuery({{"sort", "requests"}, {"limit", "1"}});
  root = Parse(parser, WriteDashboardState(models, *f.sampler, *busiest));
  EXPECT_EQ(std::string_view(root["models"].at(0)["name"]), "m0500");
}

TEST(DashboardState, BadQueriesSayWhatIsWrong) {
  auto limit = ParseDashboardQuery({{"limit", "0"}});
  ASSERT_FALSE(limit.ok());
  EXPECT_NE(limit.status().message().find("limit=0"), std::string::npos);
  EXPECT_FALSE(ParseDashboardQuery({{"limit", "5000"}}).ok());
  EXPECT_FALSE(ParseDashboardQuery({{"offset", "-1"}}).ok());
  auto sort = ParseDashboardQuery({{"sort", "size"}});
  ASSERT_FALSE(sort.ok());
  EXPECT_NE(sort.status().message().find("sort=size"), std::string::npos);
  EXPECT_FALSE(ParseDashboardQuery({{"series", "yes"}}).ok());
}

}  // namespace
}  // namespace inferd::http
