#include "scheduler/batch_assembly.h"

#include <gtest/gtest.h>

#include "unit/scheduler/test_util.h"

namespace inferd::scheduler {
namespace {

using testing::Config;
using testing::FloatTensor;
using testing::Floats;

TEST(BatchAssemblyTest, SingleRequestPassesThroughWithoutCopy) {
  std::vector<NamedTensor> a = {{"x", FloatTensor({2, 2})}};
  auto b = AssembleBatch(Config(8), {&a});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->inputs[0].tensor.data(), a[0].tensor.data());
}

TEST(BatchAssemblyTest, ConcatenatesAndSplitsBack) {
  std::vector<NamedTensor> a = {{"x", FloatTensor({1, 2}, 0)}};
  std::vector<NamedTensor> b = {{"x", FloatTensor({2, 2}, 10)}};
  auto batch = AssembleBatch(Config(8), {&a, &b});
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->inputs[0].tensor.shape(), (Shape{3, 2}));
  EXPECT_EQ(Floats(batch->inputs[0].tensor), (std::vector<float>{0, 1, 10, 11, 12, 13}));
  auto split = SplitOutputs(*batch, {{"y", batch->inputs[0].tensor}});
  ASSERT_TRUE(split.ok());
  ASSERT_EQ(split->size(), 2u);
  EXPECT_EQ(Floats((*split)[0][0].tensor), (std::vector<float>{0, 1}));
  EXPECT_EQ((*split)[1][0].tensor.shape(), (Shape{2, 2}));
  EXPECT_EQ(Floats((*split)[1][0].tensor), (std::vector<float>{10, 11, 12, 13}));
}

// Found by UBSan (make test-asan) replaying the v2_json fuzz corpus: an
// empty tensor's data() is null, and memcpy(dst, nullptr, 0) is undefined.
// Under UBSan this test fails without the 0-byte guard in AssembleBatch.
TEST(BatchAssemblyTest, EmptyTensorsConcatenateToAnEmptyBatch) {
  std::vector<NamedTensor> a = {{"x", FloatTensor({1, 0})}};
  std::vector<NamedTensor> b = {{"x", FloatTensor({2, 0})}};
  auto batch = AssembleBatch(Config(8, 0, {0}), {&a, &b});
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  EXPECT_EQ(batch->inputs[0].tensor.shape(), (Shape{3, 0}));
  EXPECT_EQ(batch->inputs[0].tensor.byte_size(), 0u);
}

TEST(BatchAssemblyTest, PadsToTheLongestAndCutsOutputsBack) {
  auto c = Config(8, 0, {-1});
  c.inputs[0].pad_value = -1;
  std::vector<NamedTensor> a = {{"x", FloatTensor({1, 2}, 0)}};
  std::vector<NamedTensor> b = {{"x", FloatTensor({1, 3}, 10)}};
  auto batch = AssembleBatch(c, {&a, &b});
  ASSERT_TRUE(batch.ok());
  EXPECT_TRUE(batch->padded);
  EXPECT_EQ(batch->inputs[0].tensor.shape(), (Shape{2, 3}));
  EXPECT_EQ(Floats(batch->inputs[0].tensor), (std::vector<float>{0, 1, -1, 10, 11, 12}));
  auto split = SplitOutputs(*batch, {{"y", batch->inputs[0].tensor}});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(Floats((*split)[0][0].tensor), (std::vector<float>{0, 1}));
  EXPECT_EQ(Floats((*split)[1][0].tensor), (std::vector<float>{10, 11, 12}));
}

TEST(BatchAssemblyTest, PadsInnerDimsOfRank3) {
  auto c = Config(8, 0, {-1, 2});
  c.inputs[0].pad_value = 0;
  std::vector<NamedTensor> a = {{"x", FloatTensor({1, 1, 2}, 1)}};
  std::vector<NamedTensor> b = {{"x", FloatTensor({1, 2, 2}, 5)}};
  auto batch = AssembleBatch(c, {&a, &b});
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(Floats(batch->inputs[0].tensor), (std::vector<float>{1, 2, 0, 0, 5, 6, 7, 8}));
  auto split = SplitOutputs(*batch, {{"y", batch->inputs[0].tensor}});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ((*split)[0][0].tensor.shape(), (Shape{1, 1, 2}));
  EXPECT_EQ(Floats((*split)[0][0].tensor), (std::vector<float>{1, 2}));
  EXPECT_EQ(Floats((*split)[1][0].tensor), (std::vector<float>{5, 6, 7, 8}));
}

// A pooled buffer comes back holding the previous batch's bytes and is not
// zeroed: assembly must write every byte, pad included.
TEST(BatchAssemblyTest, AReusedBufferIsOverwrittenWhole) {
  TensorPool pool;
  auto c = Config(8, 0, {-1});
  c.inputs[0].pad_value = -1;
  const std::byte* first = nullptr;
  {
    std::vector<NamedTensor> a = {{"x", FloatTensor({1, 3}, 90)}};
    std::vector<NamedTensor> b = {{"x", FloatTensor({1, 3}, 99)}};
    auto batch = AssembleBatch(c, {&a, &b}, &pool);
    ASSERT_TRUE(batch.ok());
    EXPECT_FALSE(batch->padded);
    EXPECT_EQ(Floats(batch->inputs[0].tensor), (std::vector<float>{90, 91, 92, 99, 100, 101}));
    first = batch->inputs[0].tensor.data();
  }
  std::vector<NamedTensor> a = {{"x", FloatTensor({1, 1}, 0)}};
  std::vector<NamedTensor> b = {{"x", FloatTensor({1, 3}, 10)}};
  auto batch = AssembleBatch(c, {&a, &b}, &pool);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->inputs[0].tensor.data(), first) << "the first batch's buffer is reused";
  EXPECT_EQ(pool.stats().reused, 1u);
  EXPECT_EQ(Floats(batch->inputs[0].tensor), (std::vector<float>{0, -1, -1, 10, 11, 12}));
  std::vector<NamedTensor> d = {{"x", FloatTensor({2, 2}, 5)}};
  std::vector<NamedTensor> e = {{"x", FloatTensor({1, 2}, 50)}};
  auto c2 = Config(8);
  auto next = AssembleBatch(c2, {&d, &e}, &pool);
  ASSERT_TRUE(next.ok());
  EXPECT_NE(next->inputs[0].tensor.data(), first) << "still held by `batch`";
  EXPECT_EQ(Floats(next->inputs[0].tensor), (std::vector<float>{5, 6, 7, 8, 50, 51}));
}

TEST(BatchAssemblyTest, OutputWithoutBatchDimIsAnError) {
  std::vector<NamedTensor> a = {{"x", FloatTensor({1, 2})}};
  std::vector<NamedTensor> b = {{"x", FloatTensor({1, 2})}};
  auto batch = AssembleBatch(Config(8), {&a, &b});
  ASSERT_TRUE(batch.ok());
  auto split = SplitOutputs(*batch, {{"y", FloatTensor({5})}});
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().code(), StatusCode::kInternal);
  EXPECT_NE(split.status().message().find("'y'"), std::string::npos);
}

}  // namespace
}  // namespace inferd::scheduler
