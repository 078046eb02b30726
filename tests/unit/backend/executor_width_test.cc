// ExecutorWidth: the widest executor noted, from cores or from a thread count.
#include "backend/executor_width.h"

#include <gtest/gtest.h>

namespace inferd::backend {
namespace {

TEST(ExecutorWidthTest, KeepsTheWidestExecutor) {
  ExecutorWidth width;
  EXPECT_EQ(width.threads(), 1);
  width.Note({}, 1);  // a load thread: no cores, one thread
  EXPECT_EQ(width.threads(), 1);
  width.Note({2, 3, 4}, 1);  // the cores count, not num_threads
  EXPECT_EQ(width.threads(), 3);
  width.Note({0}, 1);
  EXPECT_EQ(width.threads(), 3);
  width.Note({}, 4);
  EXPECT_EQ(width.threads(), 4);
}

TEST(ExecutorWidthTest, CountsTheDistinctCoresOfAllExecutors) {
  ExecutorWidth width;
  EXPECT_EQ(width.all_cores(), 1);
  width.Note({}, 1);  // a load thread adds no core
  EXPECT_EQ(width.all_cores(), 1);
  width.Note({0}, 1);
  width.Note({1}, 1);
  width.Note({1}, 1);  // a recycled executor: the same core again
  EXPECT_EQ(width.all_cores(), 2);
  EXPECT_EQ(width.threads(), 1);
  width.Note({4, 5, 6}, 3);
  EXPECT_EQ(width.all_cores(), 5);
}

}  // namespace
}  // namespace inferd::backend
