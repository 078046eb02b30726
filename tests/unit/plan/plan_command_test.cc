#include "plan/plan_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace inferd::plan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class PlanCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("plan-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  PlanCommandOptions Options(const std::string& models_yaml) {
    std::ofstream(dir_ / "models.yaml") << models_yaml;
    PlanCommandOptions o;
    o.models_file = (dir_ / "models.yaml").string();
    o.node_cores = 16;
    o.node_memory = "64Gi";
    return o;
  }

  fs::path dir_;
};

constexpr const char* kModels =
    "models:\n"
    "  - {name: m0001, rps: 40, core_ms: 12.5, memory: 180M}\n"
    "  - {name: hot, rps: 2000, core_ms: 10, memory: 1Gi}\n"
    "  - {name: cold, rps: 0, core_ms: 30, memory: 20Gi}\n";

TEST_F(PlanCommandTest, JsonHasExactlyTheIssueShape) {
  PlanCommandOptions o = Options(kModels);
  o.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunPlanCommand(o, out, err), 0) << err.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(out.str());
  std::set<std::string> top;
  for (auto kv : doc.get_object()) top.insert(std::string(kv.key));
  EXPECT_EQ(top, (std::set<std::string>{"nodes", "lower_bound_nodes"}));
  // hot: 20 cores of 12.8 usable -> 2 replicas of 10 cores: 2 nodes at least.
  EXPECT_EQ(int64_t(doc["lower_bound_nodes"]), 2);
  double rps_hot = 0;
  int models = 0;
  for (auto node : doc["nodes"].get_array()) {
    std::set<std::string> keys;
    for (auto kv : node.get_object()) keys.insert(std::string(kv.key));
    EXPECT_EQ(keys, (std::set<std::string>{"name", "cores_used", "memory_used_bytes", "models"}));
    double cores = 0;
    int64_t memory = 0;
    for (auto m : node["models"].get_array()) {
      std::set<std::string> mk;
      for (auto kv : m.get_object()) mk.insert(std::string(kv.key));
      EXPECT_EQ(mk, (std::set<std::string>{"name", "rps", "cores", "memory_bytes"}));
      cores += double(m["cores"]);
      memory += int64_t(m["memory_bytes"]);
      if (std::string_view(m["name"]) == "hot") rps_hot += double(m["rps"]);
      ++models;
    }
    EXPECT_NEAR(double(node["cores_used"]), cores, 1e-9);
    EXPECT_EQ(int64_t(node["memory_used_bytes"]), memory);
    EXPECT_LE(cores, 12.8 + 1e-9);
  }
  EXPECT_EQ(models, 4);  // hot twice
  EXPECT_DOUBLE_EQ(rps_hot, 2000);
}

TEST_F(PlanCommandTest, TextSaysNodesBoundAndMethod) {
  PlanCommandOptions o = Options(kModels);
  std::ostringstream out, err;
  ASSERT_EQ(RunPlanCommand(o, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("inferd plan: 3 models on 2 nodes (1 split into replicas"));
  EXPECT_THAT(out.str(), HasSubstr("lower bound: 2 nodes"));
  EXPECT_THAT(out.str(), HasSubstr("method: "));
  EXPECT_THAT(out.str(), HasSubstr("hot [replica 2/2]"));
}

TEST_F(PlanCommandTest, BadFileExitsTwoWithTheLine) {
  PlanCommandOptions o = Options(
      "models:\n  - {name: a, rps: 1, core_ms: 1, memory: 1M}\n"
      "  - {name: b, rps: 1, core_ms: -2, memory: 1M}\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunPlanCommand(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("models.yaml:3: model 'b': core_ms: must not be negative"));
  EXPECT_EQ(out.str(), "");
}

TEST_F(PlanCommandTest, AModelThatFitsNoNodeExitsTwo) {
  PlanCommandOptions o = Options("models:\n  - {name: a, rps: 1, core_ms: 1, memory: 60Gi}\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunPlanCommand(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("models.yaml:2: model 'a': fits on no node even alone"));
}

TEST_F(PlanCommandTest, BadNodeFlagsExitTwo) {
  PlanCommandOptions o = Options(kModels);
  o.node_memory = "lots";
  std::ostringstream out, err;
  EXPECT_EQ(RunPlanCommand(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--node-memory"));
  o.node_memory = "64Gi";
  o.headroom = 1.5;
  EXPECT_EQ(RunPlanCommand(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--headroom"));
}

TEST_F(PlanCommandTest, EmitsTheObjectsWhenAsked) {
  PlanCommandOptions o = Options(kModels);
  o.emit_k8s_dir = (dir_ / "k8s").string();
  std::ostringstream out, err;
  ASSERT_EQ(RunPlanCommand(o, out, err), 0) << err.str();
  EXPECT_TRUE(fs::exists(dir_ / "k8s" / "routes.yaml"));
  EXPECT_TRUE(fs::exists(dir_ / "k8s" / "kserve.yaml"));
  EXPECT_TRUE(fs::exists(dir_ / "k8s" / "nodes" / "inferd-node-0002.yaml"));
}

TEST_F(PlanCommandTest, NodeTypesAddTheTypeTheCostAndTheBound) {
  PlanCommandOptions o = Options(kModels);
  o.node_cores = 0;
  o.node_memory.clear();
  o.node_types = {"cpu:16:32Gi:0.68", "mem:8:64Gi:0.5"};
  o.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunPlanCommand(o, out, err), 0) << err.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(out.str());
  std::set<std::string> top;
  for (auto kv : doc.get_object()) top.insert(std::string(kv.key));
  EXPECT_EQ(top, (std::set<std::string>{"nodes", "lower_bound_nodes", "cost_per_hour",
                                        "lower_bound_cost_per_hour", "node_types"}));
  double cost = 0;
  for (auto node : doc["nodes"].get_array()) {
    const std::string_view type = node["type"].get_string();
    cost += type == "cpu" ? 0.68 : 0.5;
  }
  EXPECT_NEAR(double(doc["cost_per_hour"]), cost, 1e-9);
  EXPECT_LE(double(doc["lower_bound_cost_per_hour"]), cost);

  o.json = false;
  std::ostringstream text;
  ASSERT_EQ(RunPlanCommand(o, text, err), 0) << err.str();
  EXPECT_THAT(text.str(), HasSubstr("lower bound"));
  EXPECT_THAT(text.str(), HasSubstr("the best single type:"));
}

TEST_F(PlanCommandTest, NodeFlagsAreCheckedTogether) {
  PlanCommandOptions o = Options(kModels);
  o.node_types = {"cpu:16:32Gi:0.68"};
  std::ostringstream out, err;
  // The one shape beside a type needs a price to be compared.
  EXPECT_EQ(RunPlanCommand(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--node-price"));
  o.node_price = 0.9;
  err.str("");
  EXPECT_EQ(RunPlanCommand(o, out, err), 0) << err.str();
  o = Options(kModels);
  o.node_cores = 0;
  err.str("");
  EXPECT_EQ(RunPlanCommand(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("give --node-cores and --node-memory, or --node-type"));
  o = Options(kModels);
  o.node_types = {"cpu:16:32Gi"};
  err.str("");
  EXPECT_EQ(RunPlanCommand(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("NAME:CORES:MEMORY:PRICE"));
}

TEST_F(PlanCommandTest, CurrentRebalancesARunningPlan) {
  PlanCommandOptions o = Options(kModels);
  o.json = true;
  std::ostringstream running, err;
  ASSERT_EQ(RunPlanCommand(o, running, err), 0) << err.str();
  std::ofstream(dir_ / "running.json") << running.str();
  o.current_plan = (dir_ / "running.json").string();
  std::ostringstream out;
  ASSERT_EQ(RunPlanCommand(o, out, err), 0) << err.str();
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(out.str());
  EXPECT_EQ(int64_t(doc["rebalance"]["moved_models"]), 0);
  o.current_plan = (dir_ / "missing.json").string();
  err.str("");
  EXPECT_EQ(RunPlanCommand(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("missing.json: cannot read the running plan"));
}

}  // namespace
}  // namespace inferd::plan
