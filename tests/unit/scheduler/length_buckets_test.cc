#include "scheduler/length_buckets.h"

#include <gtest/gtest.h>

#include <memory>

#include <algorithm>
#include <optional>

#include "scheduler/batch_runner.h"
#include "unit/scheduler/test_util.h"

namespace inferd::scheduler {
namespace {

using testing::FloatTensor;
using testing::Floats;

TEST(LengthCostTest, CostsTheCallTheTokensAndThePairs) {
  const LengthCost cost{2, 0.5, 0.01};
  EXPECT_DOUBLE_EQ(cost.Cost(3, 10), 2 + 0.5 * 30 + 0.01 * 300);
}

TEST(FitLengthCostTest, RecoversTheTermsOfExactPoints) {
  const LengthCost truth{3, 0.02, 0.0001};
  std::vector<CostPoint> points;
  for (int64_t items : {1, 4}) {
    for (int64_t length : {16, 64, 256}) points.push_back({items, length, truth.Cost(items, length)});
  }
  const LengthCost fit = FitLengthCost(points);
  EXPECT_NEAR(fit.fixed_ms, 3, 1e-6);
  EXPECT_NEAR(fit.token_ms, 0.02, 1e-9);
  EXPECT_NEAR(fit.token2_ms, 0.0001, 1e-11);
}

TEST(FitLengthCostTest, NeverFitsANegativeTerm) {
  // Cost falls with length at batch 1: an unconstrained fit goes negative.
  const std::vector<CostPoint> points = {{1, 16, 5}, {1, 64, 4.5}, {4, 16, 6}, {4, 64, 12}};
  const LengthCost fit = FitLengthCost(points);
  EXPECT_GE(fit.fixed_ms, 0);
  EXPECT_GE(fit.token_ms, 0);
  EXPECT_GE(fit.token2_ms, 0);
  EXPECT_GT(fit.Cost(4, 64), fit.Cost(1, 16));
}

TEST(FitLengthCostTest, TooFewPointsGiveTheDefault) {
  const LengthCost fit = FitLengthCost({{1, 16, 5}});
  EXPECT_EQ(fit.fixed_ms, DefaultLengthCost().fixed_ms);
  EXPECT_EQ(fit.token_ms, DefaultLengthCost().token_ms);
}

TEST(PlanByLengthTest, ALongRequestRunsApartFromShortOnesAndAfterThem) {
  // 32 tokens' worth per call: seven 20-token texts share a call, the
  // 250-token one runs alone (together: 32 + 8 * 250 = 2032; apart: 32 + 140
  // + 32 + 250 = 454).
  const std::vector<int64_t> lengths = {250, 20, 20, 20, 20, 20, 20, 20};
  const std::vector<int> items(8, 1);
  const auto groups = PlanByLength(lengths, items, DefaultLengthCost(), 16);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].size(), 7u);
  EXPECT_EQ(groups[1], std::vector<size_t>{0});
}

TEST(PlanByLengthTest, ACostlyCallKeepsTheBatchWhole) {
  const std::vector<int64_t> lengths = {30, 10, 20};
  const auto groups = PlanByLength(lengths, {1, 1, 1}, LengthCost{1000, 1, 0}, 16);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0], (std::vector<size_t>{1, 2, 0}));  // ascending by length
}

TEST(PlanByLengthTest, FreeCallsRunEveryLengthApart) {
  const std::vector<int64_t> lengths = {30, 10, 20, 10};
  const auto groups = PlanByLength(lengths, {1, 1, 1, 1}, LengthCost{0, 1, 0}, 16);
  // Equal lengths may share a call at no cost; different ones never do.
  for (const auto& g : groups) {
    for (size_t i : g) EXPECT_EQ(lengths[i], lengths[g[0]]);
  }
  size_t total = 0;
  for (const auto& g : groups) total += g.size();
  EXPECT_EQ(total, 4u);
}

TEST(PlanByLengthTest, GroupsStayWithinMaxItemsAndAnOversizedRequestRunsAlone) {
  const std::vector<int64_t> lengths = {8, 8, 8, 8, 8};
  const std::vector<int> items = {1, 2, 1, 9, 1};
  const auto groups = PlanByLength(lengths, items, LengthCost{1000, 1, 0}, 4);
  std::vector<size_t> seen;
  for (const auto& g : groups) {
    int n = 0;
    for (size_t i : g) {
      n += items[i];
      seen.push_back(i);
    }
    if (g.size() > 1) {
      EXPECT_LE(n, 4);
    }
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

TEST(CountTokensTest, CountsThePaddingToTheLongest) {
  const TokenCount c = CountTokens({5, 10, 3}, {1, 2, 1}, {0, 1, 2});
  EXPECT_EQ(c.real, 5 + 20 + 3);
  EXPECT_EQ(c.computed, 4 * 10);
}

// AddOne on a [-1] input, recording each batch's shape.
class LengthRecordingModel : public backend::Model {
 public:
  StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) override {
    const Tensor& in = inputs[0].tensor;
    shapes.push_back(in.shape());
    Tensor out = Tensor::Allocate(in.dtype(), in.shape());
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      out.mutable_data_as<float>()[i] = in.data_as<float>()[i] + 1;
    }
    return std::vector<NamedTensor>{{"y", out}};
  }
  std::vector<Shape> shapes;
};

TEST(BatchRunnerByLengthTest, CutsTheBatchByLengthAndAnswersEveryRequestItsOwnRows) {
  config::ModelConfig c = testing::Config(8, 0, {-1});
  c.inputs[0].pad_value = 0;
  c.outputs[0].dims = {-1};
  auto model = std::make_shared<LengthRecordingModel>();
  BatchRunner::Options o;
  o.name = "m:1";
  o.config = c;
  o.model = model;
  auto padded = std::make_shared<metrics::Counter>();
  auto real = std::make_shared<metrics::Counter>();
  o.metrics.padded_tokens = padded;
  o.metrics.real_tokens = real;
  BatchRunner runner(std::move(o));
  ASSERT_EQ(runner.length_input(), 0);

  const std::vector<int64_t> lengths = {2, 40, 3, 2};
  std::vector<QueuedRequest> batch;
  std::vector<std::optional<StatusOr<InferenceResponse>>> results(lengths.size());
  std::vector<int> order;  // the order of the answers
  for (size_t i = 0; i < lengths.size(); ++i) {
    QueuedRequest q;
    q.request.inputs = {{"x", FloatTensor({1, lengths[i]}, 100.0f * static_cast<float>(i))}};
    q.done = [&, i](StatusOr<InferenceResponse> r) {
      results[i] = std::move(r);
      order.push_back(static_cast<int>(i));
    };
    batch.push_back(std::move(q));
  }
  runner.Run(batch, TimePoint());
  // DefaultLengthCost: the three short ones share a call (padded to 3), the
  // 40-token one runs alone, after them.
  ASSERT_EQ(model->shapes.size(), 2u);
  EXPECT_EQ(model->shapes[0], (Shape{3, 3}));
  EXPECT_EQ(model->shapes[1], (Shape{1, 40}));
  EXPECT_EQ(order.back(), 1);
  for (size_t i = 0; i < lengths.size(); ++i) {
    ASSERT_TRUE(results[i] && results[i]->ok()) << i;
    const Tensor& y = (*results[i])->outputs[0].tensor;
    EXPECT_EQ(y.shape(), (Shape{1, lengths[i]}));
    EXPECT_EQ(Floats(y)[0], 100.0f * static_cast<float>(i) + 1);
    EXPECT_EQ(Floats(y).back(), 100.0f * static_cast<float>(i) + static_cast<float>(lengths[i]));
  }
  EXPECT_EQ((*results[1])->batch_size, 1);
  EXPECT_EQ((*results[0])->batch_size, 3);
  EXPECT_EQ(real->value(), 2 + 40 + 3 + 2);
  EXPECT_EQ(padded->value(), 9 - 7);
}

// The runner of LengthRecordingModel on [-1] inputs with pad_value 0, and a
// request of each of `lengths` whose answer goes to results[i].
struct ByLength {
  explicit ByLength(const std::vector<int64_t>& lengths) : results(lengths.size()) {
    config::ModelConfig c = testing::Config(8, 0, {-1});
    c.inputs[0].pad_value = 0;
    c.outputs[0].dims = {-1};
    BatchRunner::Options o;
    o.name = "m:1";
    o.config = c;
    o.model = model;
    runner = std::make_unique<BatchRunner>(std::move(o));
    for (size_t i = 0; i < lengths.size(); ++i) {
      QueuedRequest q;
      q.seq = i;
      q.request.inputs = {{"x", FloatTensor({1, lengths[i]}, 100.0f * static_cast<float>(i))}};
      q.done = [this, i](StatusOr<InferenceResponse> r) { results[i] = std::move(r); };
      batch.push_back(std::move(q));
    }
  }
  std::shared_ptr<LengthRecordingModel> model = std::make_shared<LengthRecordingModel>();
  std::unique_ptr<BatchRunner> runner;
  std::vector<QueuedRequest> batch;
  std::vector<std::optional<StatusOr<InferenceResponse>>> results;
};

TEST(BatchRunnerByLengthTest, TheOldestRequestsGroupRunsAndTheOthersAreGivenBack) {
  // The oldest (first) request is the long one: its group runs first.
  ByLength t({40, 2, 3, 2});
  std::vector<uint64_t> given;
  t.runner->Run(t.batch, TimePoint(), nullptr, [&](std::vector<QueuedRequest>& back) {
    for (auto& r : back) given.push_back(r.seq);
    back.clear();  // taken
    return true;
  });
  ASSERT_EQ(t.model->shapes.size(), 1u);
  EXPECT_EQ(t.model->shapes[0], (Shape{1, 40}));
  EXPECT_EQ(given, (std::vector<uint64_t>{1, 2, 3})) << "in queue order";
  ASSERT_TRUE(t.results[0] && t.results[0]->ok());
  for (size_t i = 1; i < 4; ++i) EXPECT_FALSE(t.results[i].has_value()) << i;
}

TEST(BatchRunnerByLengthTest, GroupsTheQueueRefusesRunHereAfterTheOldestRequestsGroup) {
  ByLength t({40, 2, 3, 2});
  int offered = 0;
  t.runner->Run(t.batch, TimePoint(), nullptr, [&](std::vector<QueuedRequest>& back) {
    offered += static_cast<int>(back.size());
    return false;  // e.g. the scheduler is stopping
  });
  EXPECT_EQ(offered, 3);
  ASSERT_EQ(t.model->shapes.size(), 2u);
  EXPECT_EQ(t.model->shapes[0], (Shape{1, 40}));
  EXPECT_EQ(t.model->shapes[1], (Shape{3, 3}));
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(t.results[i] && t.results[i]->ok()) << i;
    EXPECT_EQ(Floats((*t.results[i])->outputs[0].tensor)[0], 100.0f * static_cast<float>(i) + 1);
  }
}

}  // namespace
}  // namespace inferd::scheduler
