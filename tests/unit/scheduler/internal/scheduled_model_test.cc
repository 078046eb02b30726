#include "scheduler/internal/scheduled_model.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "backend/fake/fake_backend.h"
#include "unit/scheduler/test_util.h"

namespace inferd::scheduler {
namespace {

using testing::Config;

ModelSpec Spec(config::ModelConfig config) {
  ModelSpec spec;
  spec.name = "m:1";
  spec.version = "1";
  spec.config = config;
  spec.model = std::make_shared<backend::FakeModel>(config);
  return spec;
}

// The scheduler's mutex stands here: single-threaded tests (clang's
// thread-safety analysis runs on src/ only).
TEST(ScheduledModelTest, ACalibrationSetsTheQueuesSizes) {
  Mutex mu;
  ScheduledModel m(Spec(Config(8)), &mu, Clock::Real(), nullptr, 1);
  MutexLock lock(&mu);
  m.AssertLockedBy(&mu);
  ModelQueue& q = m.queue();
  q.AssertLockedBy(&mu);
  EXPECT_EQ(q.max_items(), 8);
  BatchCalibration c;
  c.sizes = {{1, 3, 0, false}, {2, 4, 0, false}, {4, 10, 0, false}, {8, 500, 0, false}};
  ChooseBatchSizes(0.05, 0, &c);
  c.calibrated = true;
  m.SetCalibration(c);
  EXPECT_EQ(q.max_items(), 2);
  EXPECT_EQ(q.AsContender().cost_s, 0.003) << "batch 1's cost until a batch is measured";
  EXPECT_EQ(q.ExecutionLimit(), std::chrono::seconds(10)) << "20 x 500 ms, as measured";
  EXPECT_EQ(m.calibration().max_batch, 2) << "kept whole for GetCalibration";
}

TEST(ScheduledModelTest, ACalibrationByLengthSetsTheRunnersCostAndLeavesTheQueue) {
  Mutex mu;
  config::ModelConfig config = Config(8, 0, {-1});
  config.inputs[0].pad_value = 0;
  ScheduledModel m(Spec(config), &mu, Clock::Real(), nullptr, 1);
  ASSERT_EQ(m.runner().length_input(), 0);
  MutexLock lock(&mu);
  m.AssertLockedBy(&mu);
  BatchCalibration c;
  c.by_length = true;
  c.length_cost = {2, 0.5, 0.01};
  m.SetCalibration(c);
  EXPECT_EQ(m.runner().length_cost().fixed_ms, 2);
  EXPECT_EQ(m.runner().length_cost().token_ms, 0.5);
  ModelQueue& q = m.queue();
  q.AssertLockedBy(&mu);
  EXPECT_EQ(q.max_items(), 8) << "not calibrated in batch sizes: the config's";
  EXPECT_EQ(q.ExecutionLimit(), std::chrono::seconds(60));
}

TEST(ScheduledModelTest, TheQueueGetsTheSpecsBatchingPartAndWhereItMayRun) {
  Mutex mu;
  config::ModelConfig config = Config(4, 2000);
  config.inputs[0].pad_value = 0;
  config.weight = 3;
  ModelSpec spec = Spec(config);
  spec.max_concurrency = 1;
  spec.executor_ids = {2};
  spec.hooks.preprocess = [](InferenceRequest&) { return Status::Ok(); };
  ScheduledModel m(std::move(spec), &mu, Clock::Real(), nullptr, 4);
  const QueueSpec& q = m.queue().spec();
  EXPECT_EQ(q.name, "m:1");
  EXPECT_EQ(q.max_batch_size, 4);
  EXPECT_EQ(q.max_queue_delay_us, 2000);
  EXPECT_EQ(q.pads, (std::vector<bool>{true}));
  EXPECT_TRUE(q.preprocess);
  EXPECT_EQ(q.weight, 3);
  EXPECT_EQ(q.max_concurrency, 1);
  EXPECT_EQ(q.executor_ids, (std::vector<int>{2}));
}

TEST(ScheduledModelTest, TheRunnerHasTheBatchSizeSeriesAndTheModelTheQueues) {
  Mutex mu;
  metrics::Registry registry;
  ScheduledModel m(Spec(Config(8)), &mu, Clock::Real(), &registry, 1);
  ASSERT_TRUE(m.metrics().queue_depth);
  ASSERT_TRUE(m.metrics().queue_full);
  ASSERT_TRUE(m.metrics().late_results);
  // The runner records inferd_batch_size: one series of this version, empty
  // until a forward runs.
  const auto sizes = registry.ReadHistograms("inferd_batch_size");
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0].labels, (metrics::Labels{{"model", "m"}, {"version", "1"}}));
  ScheduledModel none(Spec(Config(8)), &mu, Clock::Real(), nullptr, 1);
  EXPECT_FALSE(none.metrics().queue_depth) << "no registry, no series";
}

}  // namespace
}  // namespace inferd::scheduler
