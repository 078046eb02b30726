#include "topology/plan_metrics.h"

#include <gtest/gtest.h>

namespace inferd::topology {
namespace {

TEST(PlanMetricsTest, ExportsBudgetExecutorsAndModels) {
  CpuBudget budget;
  for (int cpu : {4, 5, 6}) budget.usable.push_back({cpu, cpu, 0, 0});
  budget.available_cores = 5;
  budget.quota_cores = 3;
  config::ModelConfig m;
  m.name = "resnet";
  m.instances.automatic = false;
  m.instances.count = 1;
  m.instances.threads = 2;
  auto plan = MakeCorePlan(budget.usable, {m});
  ASSERT_TRUE(plan.ok());

  metrics::Registry registry;
  ExportPlanMetrics(budget, *plan, registry);
  EXPECT_EQ(registry.GetGauge("inferd_cpu_usable_cores", "").value(), 3);
  EXPECT_EQ(registry.GetGauge("inferd_cpu_quota_cores", "").value(), 3);
  EXPECT_EQ(registry.GetGauge("inferd_executors", "").value(), 1);
  EXPECT_EQ(registry
                .GetGauge("inferd_executor_threads", "",
                          {{"executor", "0"}, {"cpus", "4-5"}, {"numa_node", "0"}})
                .value(),
            2);
  EXPECT_EQ(registry.GetGauge("inferd_model_max_concurrency", "", {{"model", "resnet"}}).value(),
            1);
}

}  // namespace
}  // namespace inferd::topology
