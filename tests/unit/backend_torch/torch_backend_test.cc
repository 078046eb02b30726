// TorchBackend: loading (good, missing, corrupt files; bf16), concurrent
// Execute on one shared model, and the pinned intra-op pools.
#include <omp.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backend/torch/intra_op_pool.h"
#include "unit/backend_torch/test_models.h"

namespace inferd::backend {
namespace {

using ::testing::HasSubstr;
using testing::LoadOrDie;
using testing::LoadTestModel;
using testing::MakeTensor;
using testing::TestLoadOptions;
using testing::Values;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "." + std::to_string(::getpid()))).string();
}

TEST(TorchBackendTest, MissingFileIsInvalidArgumentNamingThePath) {
  auto backend = TorchBackend::Create();
  ASSERT_TRUE(backend.ok());
  LoadOptions options;
  options.config.name = "ghost";
  options.model_path = "/nonexistent/ghost/1/model.pt";
  auto model = (*backend)->Load(options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("/nonexistent/ghost/1/model.pt"));
}

TEST(TorchBackendTest, CorruptFileIsInvalidArgumentNamingThePath) {
  const std::string path = TempPath("corrupt_model.pt");
  {
    std::ofstream out(path);
    out << "this is not a TorchScript archive";
  }
  auto backend = TorchBackend::Create();
  ASSERT_TRUE(backend.ok());
  LoadOptions options;
  options.config.name = "corrupt";
  options.model_path = path;
  auto model = (*backend)->Load(options);
  std::filesystem::remove(path);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr(path));
  EXPECT_THAT(model.status().message(), HasSubstr("cannot load TorchScript file"));
}

std::vector<float> RandomImages(std::mt19937& rng, int64_t batch) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(batch * 64);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(TorchBackendTest, Bf16OutputsStayCloseToFp32AndComeBackAsFp32) {
  SKIP_WITHOUT_TEST_STORE();
  auto fp32 = LoadTestModel("tiny_cnn");
  LoadOptions options = TestLoadOptions("tiny_cnn");
  options.config.precision = config::Precision::kBf16;
  auto bf16 = LoadOrDie(options);
  ASSERT_NE(fp32, nullptr);
  ASSERT_NE(bf16, nullptr);
  std::mt19937 rng(7);
  Tensor in = MakeTensor(DataType::kFp32, {4, 1, 8, 8}, RandomImages(rng, 4));
  auto a = fp32->Execute({{"image", in}});
  auto b = bf16->Execute({{"image", in}});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)[0].tensor.dtype(), DataType::kFp32);
  std::vector<float> x = Values<float>((*a)[0].tensor), y = Values<float>((*b)[0].tensor);
  ASSERT_EQ(x.size(), y.size());
  double max_diff = 0;
  bool any_differs = false;
  for (size_t i = 0; i < x.size(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(x[i] - y[i])));
    any_differs |= x[i] != y[i];
  }
  EXPECT_LT(max_diff, 0.05);
  EXPECT_TRUE(any_differs) << "bf16 gave bit-identical results: was it applied?";
}

// Issue 3, item 4: one shared module, many threads, outputs equal to a
// single-threaded run of the same inputs.
TEST(TorchBackendTest, ConcurrentExecuteOnOneModelMatchesSingleThreadedRun) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("tiny_cnn");
  ASSERT_NE(model, nullptr);
  constexpr int kThreads = 8;
  constexpr int kCalls = 50;
  std::vector<std::vector<Tensor>> inputs(kThreads);
  std::vector<std::vector<std::vector<float>>> expected(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    std::mt19937 rng(100 + t);
    for (int c = 0; c < kCalls; ++c) {
      const int64_t batch = 1 + static_cast<int64_t>(rng() % 4);
      inputs[t].push_back(MakeTensor(DataType::kFp32, {batch, 1, 8, 8}, RandomImages(rng, batch)));
      auto out = model->Execute({{"image", inputs[t].back()}});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      expected[t].push_back(Values<float>((*out)[0].tensor));
    }
  }
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        auto out = model->Execute({{"image", inputs[t][c]}});
        if (!out.ok()) {
          failures.fetch_add(1);
          continue;
        }
        std::vector<float> got = Values<float>((*out)[0].tensor);
        bool same = got.size() == expected[t][c].size();
        for (size_t i = 0; same && i < got.size(); ++i) {
          same = std::fabs(got[i] - expected[t][c][i]) <= 1e-5f * (1 + std::fabs(got[i]));
        }
        if (!same) mismatches.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

std::vector<int> UsableCores() {
  std::vector<int> cores;
  std::thread([&] { cores = CurrentThreadCores(); }).join();
  return cores;
}

TEST(IntraOpPoolTest, EachTeamMemberIsPinnedToItsOwnCore) {
  std::vector<int> usable = UsableCores();
  if (usable.size() < 2) GTEST_SKIP() << "needs 2 usable cores, this process has " << usable.size();
  const std::vector<int> cores = {usable[0], usable[1]};
  std::vector<std::vector<int>> member_cores(cores.size());
  int max_threads = 0;
  Status status;
  std::thread([&] {
    status = ConfigureIntraOpPool(cores, 0);
    max_threads = omp_get_max_threads();
#pragma omp parallel num_threads(2)
    member_cores[omp_get_thread_num()] = CurrentThreadCores();
  }).join();
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(max_threads, 2);
  EXPECT_EQ(member_cores[0], std::vector<int>{cores[0]});
  EXPECT_EQ(member_cores[1], std::vector<int>{cores[1]});
}

TEST(IntraOpPoolTest, ThreadsConfigureTheirOwnPoolsIndependently) {
  std::vector<int> usable = UsableCores();
  ASSERT_FALSE(usable.empty());
  int one = 0, three = 0;
  std::vector<int> pinned;
  std::thread a([&] {
    ASSERT_TRUE(ConfigureIntraOpPool({usable[0]}, 0).ok());
    pinned = CurrentThreadCores();
    one = omp_get_max_threads();
  });
  a.join();
  std::thread b([&] {
    ASSERT_TRUE(ConfigureIntraOpPool({}, 3).ok());
    three = omp_get_max_threads();
  });
  b.join();
  EXPECT_EQ(one, 1);
  EXPECT_EQ(three, 3);
  EXPECT_EQ(pinned, std::vector<int>{usable[0]});
}

// ATen sets a thread's OpenMP thread count lazily, at its first parallel
// call, from a process-wide value: a later executor's count must not leak
// into an executor that was configured before it but ran nothing yet.
TEST(IntraOpPoolTest, AnotherThreadsCountDoesNotLeakIntoAConfiguredThread) {
  std::promise<void> a_configured, b_configured;
  int a_threads = 0;
  std::thread a([&] {
    ASSERT_TRUE(ConfigureIntraOpPool({}, 1).ok());
    a_configured.set_value();
    b_configured.get_future().wait();
    a_threads = at::get_num_threads();
  });
  std::thread b([&] {
    a_configured.get_future().wait();
    EXPECT_TRUE(ConfigureIntraOpPool({}, 3).ok());
    EXPECT_EQ(at::get_num_threads(), 3);
    b_configured.set_value();
  });
  a.join();
  b.join();
  EXPECT_EQ(a_threads, 1);
}

TEST(IntraOpPoolTest, ModelRunsOnAPinnedExecutorThread) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadTestModel("tiny_cnn");
  ASSERT_NE(model, nullptr);
  auto backend = TorchBackend::Create();
  ASSERT_TRUE(backend.ok());
  std::vector<int> usable = UsableCores();
  bool ok = false;
  std::thread([&] {
    (*backend)->InitExecutorThread({usable[0]}, 1);
    std::mt19937 rng(1);
    auto out = model->Execute({{"image", MakeTensor(DataType::kFp32, {2, 1, 8, 8},
                                                    RandomImages(rng, 2))}});
    ok = out.ok() && CurrentThreadCores() == std::vector<int>{usable[0]};
  }).join();
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace inferd::backend
