#include "scheduler/model_queue.h"

#include <gtest/gtest.h>

#include "unit/scheduler/test_util.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::FloatTensor;
using std::chrono::microseconds;

const TimePoint kT0 = TimePoint() + std::chrono::seconds(100);

// The scheduler's mutex stands here: these tests are single-threaded (and
// clang's thread-safety analysis runs on src/ only).
Mutex test_mu;

QueuedRequest Req(Shape shape, TimePoint t, int priority = 0, TimePoint deadline = TimePoint::max()) {
  QueuedRequest q;
  q.request.inputs.push_back({"x", FloatTensor(shape)});
  q.request.enqueue_time = t;
  q.request.deadline = deadline;
  q.request.priority = priority;
  q.items = static_cast<int>(shape[0]);
  q.done = [](StatusOr<InferenceResponse>) {};
  return q;
}

ModelQueue MakeQueue(const config::ModelConfig& c) {
  return ModelQueue(QueueSpecOf("m:1", c, /*preprocess=*/false), &test_mu);
}

TEST(ModelQueueTest, NoDelayIsReadyAtOnceAndTakesWhatIsQueued) {
  auto q = MakeQueue(Config(8, 0));
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(*q.ReadyTime(), kT0);
  Batch b = q.TakeBatch(kT0);
  EXPECT_EQ(b.items, 2);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.ReadyTime().has_value());
}

TEST(ModelQueueTest, WaitsForTheDelayUnlessFull) {
  auto q = MakeQueue(Config(4, 2000));
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(*q.ReadyTime(), kT0 + microseconds(2000));
  ASSERT_TRUE(q.Push(Req({2, 2}, kT0 + microseconds(10))).ok());
  EXPECT_EQ(*q.ReadyTime(), kT0 + microseconds(2000));
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0 + microseconds(20))).ok());
  EXPECT_EQ(*q.ReadyTime(), kT0) << "4 items fill max_batch_size: ready at once";
  Batch b = q.TakeBatch(kT0 + microseconds(20));
  EXPECT_EQ(b.items, 4);
  EXPECT_EQ(b.requests.size(), 3u);
}

QueuedRequest RawReq(TimePoint t, TimePoint deadline = TimePoint::max()) {
  QueuedRequest q;
  q.request.raw.push_back({"image/jpeg", "jpeg bytes"});
  q.request.enqueue_time = t;
  q.request.deadline = deadline;
  q.done = [](StatusOr<InferenceResponse>) {};
  return q;
}

TEST(ModelQueueTest, ARawHeadOfAModelWithPreprocessingIsReadyAtOnce) {
  ModelQueue q(QueueSpecOf("m:1", Config(8, 2000), /*preprocess=*/true), &test_mu);
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(*q.ReadyTime(), kT0 + microseconds(2000)) << "tensors: the delay applies";
  q.TakeBatch(kT0 + microseconds(2000));
  ASSERT_TRUE(q.Push(RawReq(kT0)).ok());
  EXPECT_EQ(*q.ReadyTime(), kT0) << "its pre-processing is the batching window";
}

TEST(ModelQueueTest, TakeMoreTakesRawRequestsInOrderUpToTheRoomLeft) {
  auto q = MakeQueue(Config(8, 2000));
  ASSERT_TRUE(q.Push(RawReq(kT0)).ok());
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());  // tensors: not for a raw batch
  ASSERT_TRUE(q.Push(RawReq(kT0)).ok());
  ASSERT_TRUE(q.Push(RawReq(kT0)).ok());
  auto more = q.TakeMore(2, kT0);
  EXPECT_EQ(more.size(), 2u);
  EXPECT_EQ(q.size(), 2u) << "the tensor request and the raw one past the room stay";
  EXPECT_EQ(q.TakeMore(8, kT0).size(), 1u);
  EXPECT_TRUE(q.TakeMore(8, kT0).empty());
  EXPECT_EQ(q.size(), 1u);
}

TEST(ModelQueueTest, TakeMoreLeavesAnExpiredRequestForTakeExpired) {
  auto q = MakeQueue(Config(8, 2000));
  ASSERT_TRUE(q.Push(RawReq(kT0, kT0 + microseconds(5))).ok());
  ASSERT_TRUE(q.Push(RawReq(kT0)).ok());
  EXPECT_TRUE(q.TakeMore(8, kT0 + microseconds(10)).empty());
  std::vector<QueuedRequest> expired, cancelled;
  q.TakeExpired(kT0 + microseconds(10), &expired, &cancelled);
  EXPECT_EQ(expired.size(), 1u);
  EXPECT_EQ(q.TakeMore(8, kT0 + microseconds(10)).size(), 1u);
}

TEST(ModelQueueTest, AnIdleExecutorMeansNoWaiting) {
  auto q = MakeQueue(Config(8, 2000));
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(*q.ReadyTime(/*executors_idle=*/false), kT0 + microseconds(2000));
  EXPECT_EQ(*q.ReadyTime(/*executors_idle=*/true), kT0)
      << "waiting for a fuller batch while a core idles would only add latency";
}

TEST(ModelQueueTest, NeverExceedsMaxBatchSize) {
  auto q = MakeQueue(Config(4, 100));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.Push(Req({3, 2}, kT0)).ok());
  Batch b = q.TakeBatch(kT0 + microseconds(100));
  EXPECT_EQ(b.items, 3);
  EXPECT_EQ(q.size(), 2u);
}

TEST(ModelQueueTest, PreferredSizeMakesReadyEarlyAndIsTakenExactly) {
  auto c = Config(8, 5000);
  c.dynamic_batching.preferred_batch_sizes = {2, 4};
  auto q = MakeQueue(c);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(*q.ReadyTime(), kT0 + microseconds(5000)) << "3 < largest preferred (4)";
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(*q.ReadyTime(), kT0);
  Batch b = q.TakeBatch(kT0 + microseconds(1));
  EXPECT_EQ(b.items, 4) << "the largest preferred size available, before the delay";
  EXPECT_EQ(q.size(), 1u);
  Batch rest = q.TakeBatch(kT0 + microseconds(5000));
  EXPECT_EQ(rest.items, 1) << "after the delay whatever is queued";
}

TEST(ModelQueueTest, SharesQueuedItemsWithIdleExecutors) {
  auto q = MakeQueue(Config(8, 0));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(q.TakeBatch(kT0, /*share_with=*/2).items, 3) << "ceil(5 / 2)";
  EXPECT_EQ(q.TakeBatch(kT0, /*share_with=*/2).items, 1) << "ceil(2 / 2)";
  EXPECT_EQ(q.TakeBatch(kT0, /*share_with=*/1).items, 1);
}

TEST(ModelQueueTest, GroupsByShapeWithoutPadValue) {
  auto q = MakeQueue(Config(8, 0, {-1}));
  ASSERT_TRUE(q.Push(Req({1, 3}, kT0)).ok());
  ASSERT_TRUE(q.Push(Req({1, 5}, kT0)).ok());
  ASSERT_TRUE(q.Push(Req({1, 3}, kT0)).ok());
  Batch b = q.TakeBatch(kT0);
  ASSERT_EQ(b.items, 2);
  EXPECT_EQ(b.requests[0].request.inputs[0].tensor.shape(), (Shape{1, 3}));
  EXPECT_EQ(b.requests[1].request.inputs[0].tensor.shape(), (Shape{1, 3}));
  Batch b2 = q.TakeBatch(kT0);
  ASSERT_EQ(b2.items, 1);
  EXPECT_EQ(b2.requests[0].request.inputs[0].tensor.shape(), (Shape{1, 5}));
}

TEST(ModelQueueTest, PadValueLetsShapesShareABatch) {
  auto c = Config(8, 0, {-1});
  c.inputs[0].pad_value = 0;
  auto q = MakeQueue(c);
  ASSERT_TRUE(q.Push(Req({1, 3}, kT0)).ok());
  ASSERT_TRUE(q.Push(Req({1, 5}, kT0)).ok());
  EXPECT_EQ(q.TakeBatch(kT0).items, 2);
}

TEST(ModelQueueTest, HigherPriorityGoesFirst) {
  auto q = MakeQueue(Config(1, 0));
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0, /*priority=*/2)).ok());
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0 + microseconds(5), /*priority=*/1)).ok());
  Batch b = q.TakeBatch(kT0 + microseconds(5));
  ASSERT_EQ(b.requests.size(), 1u);
  EXPECT_EQ(b.requests[0].request.priority, 1);
  EXPECT_EQ(q.TakeBatch(kT0 + microseconds(5)).requests[0].request.priority, 2);
}

TEST(ModelQueueTest, PriorityOneBeatsTheDefaultAndTheDefaultBeatsTwo) {
  auto q = MakeQueue(Config(1, 0));
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0, /*priority=*/2)).ok());
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0, /*priority=*/0)).ok());
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0, /*priority=*/1)).ok());
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.TakeBatch(kT0).requests[0].request.priority);
  EXPECT_EQ(order, (std::vector<int>{1, 0, 2}));
}

TEST(ModelQueueTest, FullQueueIsResourceExhausted) {
  auto c = Config(1, 0);
  c.max_queue_size = 2;
  auto q = MakeQueue(c);
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  Status st = q.Push(Req({1, 2}, kT0));
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("queue"), std::string::npos);
}

TEST(ModelQueueTest, ExpiredAndCancelledAreTakenOut) {
  auto q = MakeQueue(Config(8, 0));
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0, 0, kT0 + microseconds(10))).ok());
  auto cancelled = Req({1, 2}, kT0);
  cancelled.request.is_cancelled = [] { return true; };
  ASSERT_TRUE(q.Push(std::move(cancelled)).ok());
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  std::vector<QueuedRequest> expired, gone;
  q.TakeExpired(kT0 + microseconds(5), &expired, &gone);
  EXPECT_EQ(expired.size(), 0u);
  EXPECT_EQ(gone.size(), 1u);
  q.TakeExpired(kT0 + microseconds(10), &expired, &gone);
  EXPECT_EQ(expired.size(), 1u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.EarliestDeadline(), TimePoint::max());
}

TEST(ModelQueueTest, MeasuredSizesReplaceTheConfiguredOnes) {
  config::ModelConfig c = Config(8, 2000);
  c.dynamic_batching.preferred_batch_sizes = {8};
  auto q = MakeQueue(c);
  EXPECT_EQ(q.max_items(), 8);
  EXPECT_EQ(q.ExecutionLimit(), std::chrono::seconds(60)) << "nothing measured yet";
  q.SetMeasuredSizes(ModelQueue::MeasuredSizes{2, {1, 2}, 0.003, 900});
  EXPECT_EQ(q.max_items(), 2);
  EXPECT_EQ(q.AsContender().cost_s, 0.003) << "batch 1's cost, until a batch is measured";
  EXPECT_EQ(q.ExecutionLimit(), std::chrono::seconds(18)) << "20 x the slowest size measured";
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(*q.ReadyTime(), kT0) << "2 items reach the largest measured size";
  EXPECT_EQ(q.TakeBatch(kT0).items, 2);
  q.SetMeasuredSizes(std::nullopt);
  EXPECT_EQ(q.max_items(), 8) << "not calibrated: the config's max_batch_size";
}

TEST(ModelQueueTest, ConcurrencyCapAndExecutorSet) {
  QueueSpec spec = QueueSpecOf("m:1", Config(1), false);
  spec.max_concurrency = 1;
  spec.executor_ids = {1};
  ModelQueue q(std::move(spec), &test_mu);
  EXPECT_FALSE(q.CanStartOn(0));
  EXPECT_TRUE(q.CanStartOn(1));
  q.BeginRun(1);
  EXPECT_FALSE(q.CanStartOn(1));
}

// An executor takes at most its share of the model's items in flight (queued
// and running) over the executors that may run it: with 8 clients and 2
// executors, 4 each, not 8 for one and nothing for the other.
TEST(ModelQueueTest, AnExecutorTakesItsShareOfTheItemsInFlight) {
  auto q = MakeQueue(Config(8, 0));
  q.set_executors(2);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(q.ShareCap(), 4);
  Batch first = q.TakeBatch(kT0);
  EXPECT_EQ(first.items, 4);
  q.BeginRun(first.items);
  EXPECT_EQ(q.ShareCap(), 4) << "4 running, 4 queued";
  Batch second = q.TakeBatch(kT0);
  EXPECT_EQ(second.items, 4);
  q.BeginRun(second.items);
  q.EndRun(first.items);
  ASSERT_TRUE(q.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(q.ShareCap(), 3) << "4 running, 1 queued: ceil(5 / 2)";
  EXPECT_EQ(q.TakeBatch(kT0).items, 1);
  q.BeginRun(1);
  q.Join(2);  // two more joined the running batch
  EXPECT_EQ(q.ShareCap(), 4) << "4 + 1 + 2 running";
}

TEST(ModelQueueTest, TheShareIsCappedByMaxItemsAndIsAllForOneExecutor) {
  auto deep = MakeQueue(Config(8, 0));
  deep.set_executors(2);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(deep.Push(Req({4, 2}, kT0)).ok());
  EXPECT_EQ(deep.ShareCap(), 8) << "a share of 10, within max_batch_size";
  EXPECT_EQ(deep.TakeBatch(kT0).items, 8);
  QueueSpec spec = QueueSpecOf("m:1", Config(8, 0), false);
  spec.max_concurrency = 1;  // of 4 executors, one at a time may run it
  ModelQueue single(std::move(spec), &test_mu);
  single.set_executors(4);
  EXPECT_EQ(single.ShareCap(), 1) << "nothing in flight: at least one";
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(single.Push(Req({1, 2}, kT0)).ok());
  EXPECT_EQ(single.TakeBatch(kT0).items, 6);
}

TEST(ModelQueueTest, RequestsGivenBackGoToTheirPlacesAndBackToTheQueuedItems) {
  config::ModelConfig c = Config(8, 0, {-1});
  c.inputs[0].pad_value = 0;
  auto q = MakeQueue(c);
  q.set_executors(2);
  for (int64_t length : {5, 6, 7}) ASSERT_TRUE(q.Push(Req({1, length}, kT0)).ok());
  Batch batch = q.TakeBatch(kT0);
  ASSERT_EQ(batch.items, 2) << "its share of 3 over 2 executors";
  q.BeginRun(batch.items);
  ASSERT_TRUE(q.Push(Req({1, 8}, kT0)).ok());
  ASSERT_TRUE(q.Push(Req({1, 9}, kT0, /*priority=*/1)).ok());
  // The runner keeps the first request and gives the second back: it goes
  // before the requests that came after it, behind the higher priority.
  std::vector<QueuedRequest> back;
  back.push_back(std::move(batch.requests[1]));
  back.back().joined = kT0;
  q.GiveBack(std::move(back));
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.ShareCap(), 3) << "1 running, 4 queued: ceil(5 / 2)";
  std::vector<int64_t> lengths;
  for (int i = 0; i < 4; ++i) {
    Batch next = q.TakeBatch(kT0 + microseconds(1));
    for (const auto& r : next.requests) {
      lengths.push_back(r.request.inputs[0].tensor.shape()[1]);
      EXPECT_EQ(r.joined, TimePoint{}) << "a new batch takes it";
    }
  }
  EXPECT_EQ(lengths, (std::vector<int64_t>{9, 6, 7, 8}));
  EXPECT_TRUE(q.empty());
}

TEST(ModelQueueTest, ItemsLeaveTheShareWhenExpiredOrTaken) {
  auto q = MakeQueue(Config(8, 0));
  q.set_executors(2);
  ASSERT_TRUE(q.Push(Req({3, 2}, kT0, 0, kT0 + microseconds(5))).ok());
  ASSERT_TRUE(q.Push(Req({3, 2}, kT0)).ok());
  EXPECT_EQ(q.ShareCap(), 3);
  std::vector<QueuedRequest> expired, cancelled;
  q.TakeExpired(kT0 + microseconds(10), &expired, &cancelled);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(q.ShareCap(), 2) << "ceil(3 / 2)";
  q.TakeAll();
  EXPECT_EQ(q.ShareCap(), 1);
}

}  // namespace
}  // namespace inferd::scheduler
