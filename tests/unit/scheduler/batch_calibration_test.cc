#include "scheduler/batch_calibration.h"

#include <gtest/gtest.h>

#include <map>

namespace inferd::scheduler {
namespace {

BatchCalibration Table(const std::map<int, double>& latency_ms) {
  BatchCalibration c;
  for (const auto& [b, ms] : latency_ms) c.sizes.push_back({b, ms, 0, false});
  return c;
}

TEST(BatchCalibrationTest, LadderIsPowersOfTwoAndTheMax) {
  EXPECT_EQ(CalibrationLadder(8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(CalibrationLadder(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(CalibrationLadder(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(CalibrationLadder(1), (std::vector<int>{1}));
}

TEST(BatchCalibrationTest, OneThreadExecutorsUseThreadCpuTimeOthersWallTime) {
  // The names end the calibration's note; `inferd topology --calibrate` and
  // the server's log must say the same.
  EXPECT_EQ(ExecutorClockName(1), "executor thread CPU time");
  EXPECT_EQ(ExecutorClockName(0), "executor thread CPU time");
  EXPECT_EQ(ExecutorClockName(2), "wall time");
  EXPECT_EQ(ExecutorClockName(8), "wall time");
}

TEST(BatchCalibrationTest, ChoosesEverySizeWhoseCostPerItemFalls) {
  // MobileNetV3-small with a good allocator: 3.1, 2.5, 2.1, 2.1 ms per item.
  BatchCalibration c = Table({{1, 3.1}, {2, 5.0}, {4, 8.4}, {8, 16.8}});
  ChooseBatchSizes(0.05, 0, &c);
  EXPECT_EQ(c.chosen_sizes(), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(c.max_batch, 4);  // batch 8 saves nothing per item over 4
  EXPECT_DOUBLE_EQ(c.sizes[2].ms_per_item, 2.1);
}

TEST(BatchCalibrationTest, NeverChoosesASizeThatCostsMorePerItemThanBatchOne) {
  // glibc's defaults: batch 1 at 3.1 ms, larger batches 13-16 ms per item.
  BatchCalibration c = Table({{1, 3.1}, {2, 28}, {4, 60}, {8, 125}});
  ChooseBatchSizes(0.05, 0, &c);
  EXPECT_EQ(c.chosen_sizes(), (std::vector<int>{1}));
  EXPECT_EQ(c.max_batch, 1);
}

TEST(BatchCalibrationTest, ASmallGainIsNotWorthABatch) {
  // ResNet-50: 95 ms at batch 1, 2% less per item at batch 2.
  BatchCalibration c = Table({{1, 95}, {2, 186}});
  ChooseBatchSizes(0.05, 0, &c);
  EXPECT_EQ(c.max_batch, 1);
  ChooseBatchSizes(0.01, 0, &c);
  EXPECT_EQ(c.max_batch, 2);
}

TEST(BatchCalibrationTest, ABatchLongerThanTheBoundIsNotChosen) {
  // ResNet-50 on this machine (2026-12-02): batch 2 saves 7% per item, batch 4
  // less than batch 2 does; each batch of 2 takes 166 ms.
  BatchCalibration c = Table({{1, 89.7}, {2, 166.3}, {4, 352.6}});
  ChooseBatchSizes(0.05, 0, &c);
  EXPECT_EQ(c.chosen_sizes(), (std::vector<int>{1, 2}));
  ChooseBatchSizes(0.05, 100, &c);
  EXPECT_EQ(c.chosen_sizes(), (std::vector<int>{1}));
  EXPECT_EQ(c.max_batch, 1);
  EXPECT_TRUE(c.sizes[1].too_long);
  EXPECT_FALSE(c.sizes[2].too_long);  // not worth it per item anyway
  EXPECT_EQ(FormatCalibration(c)[1],
            "batch 2: 166.30 ms, 83.150 ms per item, longer than max_batch_latency_ms");
  // MobileNetV3-small: every batch is far below the bound, the choice is the same.
  BatchCalibration light = Table({{1, 6.51}, {2, 10.50}, {4, 17.83}, {8, 32.79}});
  ChooseBatchSizes(0.05, 100, &light);
  EXPECT_EQ(light.chosen_sizes(), (std::vector<int>{1, 2, 4, 8}));
}

TEST(BatchCalibrationTest, TheLadderSkipsSizesThatCannotFitTheBound) {
  EXPECT_TRUE(WorthMeasuring(1, 500, 100));  // batch 1 is always measured
  EXPECT_TRUE(WorthMeasuring(2, 90, 100));   // 90 ms at half the cost per item fits
  EXPECT_FALSE(WorthMeasuring(4, 90, 100));
  EXPECT_FALSE(WorthMeasuring(2, 122, 100));
  EXPECT_TRUE(WorthMeasuring(8, 6.5, 100));
  EXPECT_TRUE(WorthMeasuring(8, 500, 0));  // no bound
}

TEST(CalibrationBudgetTest, ScalesFromBatchOneBetweenTheFloorAndTheCap) {
  CalibrationOptions o;  // 1.5 s floor, 10 s cap, margin 1.25
  // Light: 1 ms at batch 1, ladder 1+2+4+8 = 15 items -> 75 ms wanted: the floor.
  EXPECT_DOUBLE_EQ(CalibrationBudget(o, 8, 1.0, 0.01), 1.5);
  // ResNet-50: 122 ms per item -> 1.25 x 4 calls x 15 items x 0.122 s, after 0.5 s spent.
  EXPECT_NEAR(CalibrationBudget(o, 8, 122.0, 0.5), 0.5 + 1.25 * 4 * 15 * 0.122, 1e-9);
  // Larger ladders want more: 1+2+4+8+16+32 = 63 items.
  EXPECT_NEAR(CalibrationBudget(o, 32, 20.0, 0), 1.25 * 4 * 63 * 0.020, 1e-9);
  // Heavier still: the cap.
  EXPECT_DOUBLE_EQ(CalibrationBudget(o, 8, 500.0, 0.5), 10.0);
  o.max_budget_s = 3;
  EXPECT_DOUBLE_EQ(CalibrationBudget(o, 8, 122.0, 0.5), 3.0);
}

}  // namespace
}  // namespace inferd::scheduler
