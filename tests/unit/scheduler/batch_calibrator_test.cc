#include "scheduler/batch_calibrator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>

#include "backend/fake/fake_backend.h"
#include "unit/scheduler/test_util.h"
#include "unit/support/fake_clock.h"

namespace inferd::scheduler {
namespace {

using std::chrono::microseconds;
using test_support::FakeClock;
using testing::Config;

// Calibrate with a fake model, a fake timer and a fake clock: each call
// "costs" what cost_ms says for the batch the model just ran. The clock
// stands still unless a test moves it (advance_clock_: by each call's cost,
// plus first_call_ms on the first call of each batch size), so the budget
// is reached only when the test says so.
class CalibrateTest : public ::testing::Test {
 protected:
  BatchCalibration Run(config::ModelConfig config, std::map<int, double> cost_ms,
                       CalibrationOptions options = {}) {
    auto model = std::make_shared<backend::FakeModel>(config);
    model_ = model;
    BatchCalibrator calibrator({"m:1", config, model, &clock_, {}, {}});
    options.timer = [this, model, cost_ms](const std::function<void()>& call) {
      call();
      const int batch = static_cast<int>(model->batch_sizes().back());
      const double ms = cost_ms.at(batch);
      if (advance_clock_) {
        const bool first = seen_.insert(batch).second;
        Advance(ms + (first ? first_call_ms_ : 0));
      }
      return ms;
    };
    return calibrator.Calibrate(options);
  }
  void Advance(double ms) { clock_.Advance(microseconds(static_cast<int64_t>(ms * 1000))); }

  FakeClock clock_;
  bool advance_clock_ = false;
  double first_call_ms_ = 0;
  std::set<int> seen_;
  std::shared_ptr<backend::FakeModel> model_;
};

TEST_F(CalibrateTest, MeasuresTheLadderOnZeroInputsAndChooses) {
  BatchCalibration c = Run(Config(8), {{1, 3.0}, {2, 5.0}, {4, 8.0}, {8, 17.0}});
  ASSERT_TRUE(c.calibrated) << c.note;
  ASSERT_EQ(c.sizes.size(), 4u);
  EXPECT_EQ(c.sizes[3].batch, 8);
  EXPECT_DOUBLE_EQ(c.sizes[3].latency_ms, 17.0);
  EXPECT_EQ(c.max_batch, 4);
  // Two warm-up calls per size, then timed rounds over all sizes.
  const auto sizes = model_->batch_sizes();
  EXPECT_EQ(std::vector<int64_t>(sizes.begin(), sizes.begin() + 8),
            (std::vector<int64_t>{1, 1, 2, 2, 4, 4, 8, 8}));
  EXPECT_EQ((sizes.size() - 8) % 4, 0u);
  EXPECT_GE(sizes.size(), 8u + 2 * 4);
  for (const auto& call : model_->calls()) {
    for (float v : testing::Floats(call[0].tensor)) ASSERT_EQ(v, 0);
  }
}

TEST_F(CalibrateTest, TheBudgetStopsTheLadder) {
  CalibrationOptions options;
  options.budget_s = 1e-3;  // 1 ms, capped: not even batch 2 fits after batch 1's 3 ms
  options.max_budget_s = 1e-3;
  BatchCalibration c = Run(Config(8), {{1, 3.0}, {2, 5.0}}, options);
  ASSERT_TRUE(c.calibrated);
  ASSERT_EQ(c.sizes.size(), 1u);
  EXPECT_EQ(c.max_batch, 1);
  EXPECT_NE(c.note.find("ladder stopped before batch 2"), std::string::npos) << c.note;
}

TEST_F(CalibrateTest, AHeavyModelIsMeasuredAtEverySize) {
  // 122 ms per item (ResNet-50 here): the fixed 1.5 s budget stopped before
  // batch 4; the budget scaled from batch 1 covers 1, 2, 4 and 8 (with no
  // bound on a batch's latency).
  config::ModelConfig config = Config(8);
  config.dynamic_batching.max_batch_latency_ms = 0;
  BatchCalibration c = Run(config, {{1, 122.0}, {2, 200.0}, {4, 360.0}, {8, 900.0}});
  ASSERT_TRUE(c.calibrated) << c.note;
  ASSERT_EQ(c.sizes.size(), 4u) << c.note;
  EXPECT_EQ(c.max_batch, 4);
  EXPECT_NE(c.note.find("budget 9.15 s from batch 1's 122.00 ms"), std::string::npos) << c.note;
  EXPECT_EQ(c.note.find("ladder stopped"), std::string::npos) << c.note;
}

TEST_F(CalibrateTest, ModelsThatCannotBeMeasuredKeepTheirConfig) {
  EXPECT_FALSE(Run(Config(1), {}).calibrated);
  auto off = Config(8);
  off.dynamic_batching.calibrate = false;
  BatchCalibration c = Run(off, {});
  EXPECT_FALSE(c.calibrated);
  EXPECT_EQ(c.note, "calibrate: false in config.yaml");
  BatchCalibration variable = Run(Config(8, 0, {-1}), {});
  EXPECT_FALSE(variable.calibrated);
  EXPECT_NE(variable.note.find("variable dims"), std::string::npos);
  EXPECT_TRUE(model_->batch_sizes().empty());
}

TEST_F(CalibrateTest, AModelThatFailsIsNotCalibrated) {
  auto config = Config(8);
  auto model = std::make_shared<backend::FakeModel>(config);
  model->FailWith(Internal("zeros are not an image"));
  CalibrationOptions options;
  options.timer = WallTimer();
  BatchCalibration c =
      BatchCalibrator({"m:1", config, model, &clock_, {}, {}}).Calibrate(options);
  EXPECT_FALSE(c.calibrated);
  EXPECT_NE(c.note.find("zeros are not an image"), std::string::npos) << c.note;
}

TEST_F(CalibrateTest, TheBoundOnABatchsLatencyStopsTheLadder) {
  // 90 ms per item: batch 2 may fit 100 ms at best, batch 4 cannot.
  BatchCalibration c = Run(Config(8), {{1, 90.0}, {2, 166.0}, {4, 352.0}, {8, 680.0}});
  ASSERT_TRUE(c.calibrated) << c.note;
  ASSERT_EQ(c.sizes.size(), 2u) << c.note;
  EXPECT_EQ(c.max_batch, 1);
  EXPECT_TRUE(c.sizes[1].too_long);
  EXPECT_NE(c.note.find("not measured from batch 4: it would take over max_batch_latency_ms "
                        "(100)"),
            std::string::npos)
      << c.note;
  for (int64_t b : model_->batch_sizes()) EXPECT_LE(b, 2);
}

TEST_F(CalibrateTest, TimedRoundsStopWhenTheClockPassesTheBudget) {
  // 100 ms at batch 1: the budget is 0.2 s (its two warm-up calls) + 1.25 x 4
  // calls x 15 items x 0.1 s = 7.7 s. The ladder's warm-up ends at 1.94 s,
  // each timed round costs 0.97 s: rounds end at 2.91, ..., 6.79, 7.76 s, and
  // the round that starts past 7.7 s is not run.
  config::ModelConfig config = Config(8);
  config.dynamic_batching.max_batch_latency_ms = 0;
  CalibrationOptions options;
  options.max_rounds = 100;
  advance_clock_ = true;
  const TimePoint start = clock_.Now();
  BatchCalibration c = Run(config, {{1, 100.0}, {2, 150.0}, {4, 240.0}, {8, 480.0}}, options);
  ASSERT_TRUE(c.calibrated) << c.note;
  ASSERT_EQ(c.sizes.size(), 4u) << c.note;
  EXPECT_NE(c.note.find("budget 7.70 s from batch 1's 100.00 ms"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("6 timed rounds"), std::string::npos) << c.note;
  EXPECT_EQ(model_->batch_sizes().size(), 8u + 6 * 4);
  EXPECT_NEAR(c.seconds, 7.76, 1e-9) << "what the calibration cost, by the clock";
  EXPECT_NEAR(std::chrono::duration<double>(clock_.Now() - start).count(), 7.76, 1e-9);
}

TEST_F(CalibrateTest, AClockThatStandsStillLeavesTheRoundsToMaxRounds) {
  BatchCalibration c = Run(Config(8), {{1, 100.0}, {2, 150.0}, {4, 240.0}, {8, 480.0}});
  ASSERT_TRUE(c.calibrated) << c.note;
  EXPECT_NE(c.note.find("5 timed rounds"), std::string::npos) << c.note;
  EXPECT_EQ(c.seconds, 0);
}

TEST_F(CalibrateTest, SlowFirstCallsSpendTheBudgetThatTheTimerDoesNotSee) {
  // Each size's first call takes 5 s of the clock (the graph executor
  // profiling a new shape) while the timer reports the warm cost, 1 ms per
  // item: batch 1 leaves a budget of 5.002 s + 75 ms; batch 2 still fits
  // when it starts, its first call spends the rest, and the ladder stops.
  advance_clock_ = true;
  first_call_ms_ = 5000;
  BatchCalibration c = Run(Config(8), {{1, 1.0}, {2, 2.0}, {4, 4.0}, {8, 8.0}});
  ASSERT_TRUE(c.calibrated) << c.note;
  ASSERT_EQ(c.sizes.size(), 2u) << c.note;
  EXPECT_NE(c.note.find("ladder stopped before batch 4"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("2 timed rounds"), std::string::npos) << c.note;
  for (int64_t b : model_->batch_sizes()) EXPECT_LE(b, 2);
}

// A model of variable lengths (a [-1] input with a pad_value).
config::ModelConfig ByLengthConfig() {
  config::ModelConfig c = Config(8, 0, {-1});
  c.inputs[0].pad_value = 0;
  c.outputs[0].dims = {-1};
  return c;
}

// A timer of 1 ms per call and 0.01 ms per token, that moves `clock` (when
// set) by `clock_ms` per call.
CallTimer TokenTimer(const std::shared_ptr<backend::FakeModel>& model, FakeClock* clock = nullptr,
                     double clock_ms = 0) {
  return [model, clock, clock_ms](const std::function<void()>& call) {
    call();
    if (clock) clock->Advance(microseconds(static_cast<int64_t>(clock_ms * 1000)));
    return 1.0 + 0.01 * static_cast<double>(NumElements(model->calls().back()[0].tensor.shape()));
  };
}

TEST(CalibrateLengthsTest, FitsALengthCostOnAGridOfShapes) {
  FakeClock clock;
  const config::ModelConfig c = ByLengthConfig();
  auto model = std::make_shared<backend::FakeModel>(c);
  CalibrationOptions options;
  options.timer = TokenTimer(model);
  const BatchCalibration cal =
      BatchCalibrator({"m:1", c, model, &clock, {}, {}}).Calibrate(options);
  EXPECT_TRUE(cal.by_length);
  EXPECT_FALSE(cal.calibrated);
  EXPECT_EQ(cal.length_points.size(), 6u);  // batch 1 and 4 at 16, 64 and 128 tokens
  EXPECT_NEAR(cal.length_cost.fixed_ms, 1, 1e-6);
  EXPECT_NEAR(cal.length_cost.token_ms, 0.01, 1e-9);
  EXPECT_NE(cal.note.find("batches cut by length"), std::string::npos) << cal.note;
  EXPECT_EQ(model->calls().size(), 6u * 2 + 2 * 6) << "three rounds: the clock stood still";
}

TEST(CalibrateLengthsTest, RoundsAfterTheFirstRunOnlyWithinTheBudget) {
  // 200 ms of the clock per call: the first round (6 shapes, warmed and
  // timed) takes 2.4 s, past the 1.5 s budget, so no second round runs.
  FakeClock clock;
  const config::ModelConfig c = ByLengthConfig();
  auto model = std::make_shared<backend::FakeModel>(c);
  CalibrationOptions options;
  options.timer = TokenTimer(model, &clock, 200);
  const BatchCalibration cal =
      BatchCalibrator({"m:1", c, model, &clock, {}, {}}).Calibrate(options);
  EXPECT_TRUE(cal.by_length);
  EXPECT_EQ(model->calls().size(), 12u);
  EXPECT_NEAR(cal.seconds, 2.4, 1e-9);
  EXPECT_NEAR(cal.length_cost.token_ms, 0.01, 1e-9);
}

}  // namespace
}  // namespace inferd::scheduler
