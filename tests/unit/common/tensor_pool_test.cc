#include "common/tensor_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace inferd {
namespace {

TEST(TensorPoolTest, ReusesTheBytesOnlyAfterTheLastHandleIsGone) {
  TensorPool pool;
  Tensor a = pool.AllocateUninitialized(DataType::kFp32, {2, 3});
  EXPECT_EQ(a.byte_size(), 24u);
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  const std::byte* bytes = a.data();
  Tensor copy = a;                // a second handle
  Tensor view = a.Reshaped({6});  // a view
  a = Tensor();
  copy = Tensor();
  Tensor b = pool.AllocateUninitialized(DataType::kFp32, {2, 3});
  EXPECT_NE(b.data(), bytes) << "a view still holds the first buffer";
  EXPECT_EQ(pool.stats().allocated, 2u);
  view = Tensor();
  EXPECT_EQ(pool.stats().free_buffers, 1u);
  Tensor c = pool.AllocateUninitialized(DataType::kFp32, {6});
  EXPECT_EQ(c.data(), bytes) << "the first buffer came back";
  EXPECT_EQ(pool.stats().reused, 1u);
}

TEST(TensorPoolTest, ABorrowingTensorKeepsThePooledBytesOutOfThePool) {
  // What a response slice does (SplitOutputs): hold the batch via its owner.
  TensorPool pool;
  Tensor batch = pool.AllocateUninitialized(DataType::kUint8, {4});
  std::memcpy(batch.mutable_data(), "abcd", 4);
  auto holder = std::make_shared<Tensor>(batch);
  Tensor slice = Tensor::Borrow(DataType::kUint8, {2}, holder, batch.data() + 2, 2);
  holder.reset();
  batch = Tensor();
  Tensor next = pool.AllocateUninitialized(DataType::kUint8, {4});
  std::memset(next.mutable_data(), 'x', 4);
  EXPECT_EQ(std::memcmp(slice.data(), "cd", 2), 0);
  EXPECT_EQ(pool.stats().reused, 0u);
}

TEST(TensorPoolTest, TakesTheSmallestThatFitsAndDropsOneTooSmall) {
  TensorPool pool;
  {
    Tensor small = pool.AllocateUninitialized(DataType::kUint8, {10});
    Tensor large = pool.AllocateUninitialized(DataType::kUint8, {100});
  }
  EXPECT_EQ(pool.stats().free_buffers, 2u);
  EXPECT_EQ(pool.stats().free_bytes, 110u);
  {
    Tensor t = pool.AllocateUninitialized(DataType::kUint8, {8});
    EXPECT_EQ(pool.stats().free_bytes, 100u) << "took the 10-byte buffer, not the 100";
    Tensor u = pool.AllocateUninitialized(DataType::kUint8, {200});  // nothing fits
    EXPECT_EQ(pool.stats().dropped, 1u) << "the 100-byte buffer is given up";
    EXPECT_EQ(pool.stats().free_buffers, 0u);
  }
  const TensorPool::Stats s = pool.stats();
  EXPECT_EQ(s.free_buffers, 2u) << "never more than were in use at once";
  EXPECT_EQ(s.free_bytes, 210u);
  EXPECT_EQ(s.reused, 1u);
  EXPECT_EQ(s.allocated, 3u);
}

TEST(TensorPoolTest, FreesReturnedBuffersPastMaxFreeBytes) {
  TensorPool pool({.max_free_bytes = 150});
  {
    Tensor a = pool.AllocateUninitialized(DataType::kUint8, {100});
    Tensor b = pool.AllocateUninitialized(DataType::kUint8, {100});
  }
  EXPECT_EQ(pool.stats().free_buffers, 1u);
  EXPECT_EQ(pool.stats().dropped, 1u);
}

TEST(TensorPoolTest, TensorsOutliveThePool) {
  Tensor t;
  {
    TensorPool pool;
    t = pool.AllocateUninitialized(DataType::kInt32, {3});
    t.mutable_data_as<int32_t>()[2] = 7;
  }
  EXPECT_EQ(t.data_as<int32_t>()[2], 7);
  t = Tensor();  // frees its bytes itself (ASan would see a leak or a double free)
}

TEST(TensorPoolTest, EmptyAndInvalidShapes) {
  TensorPool pool;
  EXPECT_EQ(pool.AllocateUninitialized(DataType::kFp32, {0, 3}).byte_size(), 0u);
  EXPECT_EQ(pool.stats().allocated, 0u) << "nothing to pool";
  EXPECT_THROW(pool.AllocateUninitialized(DataType::kFp32, {-1}), std::invalid_argument);
}

TEST(TensorPoolTest, BuffersComeBackFromOtherThreads) {
  TensorPool pool;
  for (int round = 0; round < 50; ++round) {
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      Tensor t = pool.AllocateUninitialized(DataType::kFp32, {256});
      threads.emplace_back([t]() mutable {
        float* f = t.mutable_data_as<float>();
        for (int k = 0; k < 256; ++k) f[k] = static_cast<float>(k);
      });
    }
    for (auto& th : threads) th.join();
  }
  const TensorPool::Stats s = pool.stats();
  EXPECT_EQ(s.reused + s.allocated, 200u);
  EXPECT_LE(s.free_buffers, 4u);
  EXPECT_GE(s.reused, 196u) << "at most 4 buffers are ever in use at once";
}

}  // namespace
}  // namespace inferd
