#include "scheduler/fair_share.h"

#include <gtest/gtest.h>

#include <vector>

#include "unit/support/test_units.h"

namespace inferd::scheduler {
namespace {

using test_support::At;

Contender Make(int level, double start, double cost, int weight, int arrival_ms) {
  Contender c;
  c.level = level;
  c.start = start;
  c.cost_s = cost;
  c.weight = weight;
  c.head_arrival = At(arrival_ms);
  return c;
}

TEST(FairShareTest, NoContenderPicksNone) { EXPECT_EQ(FairShare::Pick({}), -1); }

TEST(FairShareTest, LightModelGoesAheadOfAHeavyBacklog) {
  // The heavy model's head has waited longer, but its next batch costs 100 ms
  // against the light model's 0.1 ms from the same virtual start.
  std::vector<Contender> c = {Make(3, 5.0, 0.100, 1, 0), Make(3, 5.0, 0.0001, 1, 90)};
  EXPECT_EQ(FairShare::Pick(c), 1);
}

TEST(FairShareTest, MoreUrgentPriorityLevelFirstWhateverItsShare) {
  std::vector<Contender> c = {Make(3, 0.0, 0.001, 1, 0), Make(2, 50.0, 1.0, 1, 10)};
  EXPECT_EQ(FairShare::Pick(c), 1);
}

TEST(FairShareTest, TiesGoToTheLongestWaitingHead) {
  std::vector<Contender> c = {Make(3, 1.0, 0.01, 1, 20), Make(3, 1.0, 0.01, 1, 10)};
  EXPECT_EQ(FairShare::Pick(c), 1);
}

// Two backlogged models: each pick is charged what the batch cost. Compute
// time is shared in proportion to the weights, whatever the batch costs.
TEST(FairShareTest, BackloggedModelsShareComputeByWeight) {
  struct Model {
    double start = 0;
    double cost;
    int weight;
    double used = 0;
  };
  std::vector<Model> models = {{0, 0.030, 2}, {0, 0.010, 1}};
  for (int round = 0; round < 3000; ++round) {
    std::vector<Contender> c;
    for (const auto& m : models) c.push_back(Make(3, m.start, m.cost, m.weight, 0));
    const int pick = FairShare::Pick(c);
    ASSERT_GE(pick, 0);
    Model& m = models[static_cast<size_t>(pick)];
    m.start = FairShare::Charge(m.start, m.cost, m.weight);
    m.used += m.cost;
  }
  EXPECT_NEAR(models[0].used / models[1].used, 2.0, 0.05);
}

TEST(FairShareTest, AnIdleModelBanksNoCredit) {
  // A model idle while the others used 100 s re-enters at their virtual time.
  EXPECT_DOUBLE_EQ(FairShare::Reenter(0.5, 100.0), 100.0);
  EXPECT_DOUBLE_EQ(FairShare::Reenter(120.0, 100.0), 120.0);  // ahead stays ahead
}

TEST(FairShareTest, ChargeDividesByWeight) {
  EXPECT_DOUBLE_EQ(FairShare::Charge(1.0, 0.4, 2), 1.2);
  EXPECT_DOUBLE_EQ(FairShare::Charge(1.0, -3, 1), 1.0);  // a clock step back costs nothing
}

TEST(FairShareTest, CostFollowsMeasurements) {
  EXPECT_DOUBLE_EQ(FairShare::UpdateCost(0, 0.02), 0.02);  // first measurement taken as is
  double cost = 0.02;
  for (int i = 0; i < 20; ++i) cost = FairShare::UpdateCost(cost, 0.1);
  EXPECT_NEAR(cost, 0.1, 1e-3);
}

}  // namespace
}  // namespace inferd::scheduler
