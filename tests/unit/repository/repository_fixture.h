// A model store in a temporary folder, a fake backend, a scheduler and a fake
// clock, for the repository's tests. Model sizes are set by the size of the
// model.pt written (FakeModel::WeightBytes is the file's size) and the
// process's resident memory is a counter the test controls, so footprints are
// exact; loads can be held at the fake backend's gate.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "backend/fake/fake_backend.h"
#include "repository/model_repository.h"

namespace inferd::repository::testing {

namespace fs = std::filesystem;

constexpr char kConfig[] = "inputs: [{name: x, datatype: FP32, shape: [2]}]\n";
constexpr int64_t kMiB = int64_t{1} << 20;

class FakeClock : public Clock {
 public:
  TimePoint Now() const override { return TimePoint() + std::chrono::microseconds(now_us.load()); }
  void Advance(std::chrono::milliseconds ms) { now_us += ms.count() * 1000; }
  std::atomic<int64_t> now_us{1'000'000};
};

// Answers of Acquire, one future per call.
struct Acquired {
  std::promise<StatusOr<ModelHandle>> promise;
  std::future<StatusOr<ModelHandle>> future = promise.get_future();
  ModelRepository::AcquireCallback callback() {
    return [this](StatusOr<ModelHandle> h) { promise.set_value(std::move(h)); };
  }
  StatusOr<ModelHandle> get() { return future.get(); }
  bool ready() { return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
};

class RepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = fs::temp_directory_path() /
             ("inferd_repo_test_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(store_);
    fs::create_directories(store_);
    scheduler::Scheduler::Options so;
    so.executors = {scheduler::ExecutorSpec{}};
    so.clock = &clock_;
    scheduler_ = std::move(*scheduler::Scheduler::Create(so));
  }
  void TearDown() override {
    backend_.OpenLoadGate();
    repo_.reset();
    scheduler_.reset();
    fs::remove_all(store_);
  }

  // A model whose version files hold `bytes` bytes (or `text`, when given).
  void AddModel(const std::string& name, const std::string& config, std::vector<int> versions,
                int64_t bytes = 16, const std::string& text = "") {
    fs::create_directories(store_ / name);
    std::ofstream(store_ / name / "config.yaml") << config;
    for (int v : versions) {
      fs::create_directories(store_ / name / std::to_string(v));
      std::ofstream out(store_ / name / std::to_string(v) / "model.pt", std::ios::binary);
      out << (text.empty() ? std::string(static_cast<size_t>(bytes), 'w') : text);
    }
  }
  std::string ModelPath(const std::string& name, int version = 1) const {
    return (store_ / name / std::to_string(version) / "model.pt").string();
  }

  ModelRepository::Options Defaults() {
    ModelRepository::Options o;
    o.store_dir = store_.string();
    o.backend = &backend_;
    o.scheduler = scheduler_.get();
    o.clock = &clock_;
    o.metrics = &registry_;
    o.resident_bytes = [this] { return rss_.load(); };
    o.peak_resident_bytes = [this] { return rss_.load(); };
    o.release_memory = [this] {
      std::lock_guard<std::mutex> lock(release_mu_);
      ++releases_;
      release_cv_.notify_all();
    };
    return o;
  }

  ModelRepository& Open(ModelRepository::Options o, bool start = true) {
    auto repo = ModelRepository::Create(o);
    EXPECT_TRUE(repo.ok()) << repo.status().ToString();
    repo_ = std::move(*repo);
    if (start) {
      repo_->StartEagerLoads();
      repo_->WaitForStartup(TimePoint::max());
    }
    return *repo_;
  }
  ModelRepository& Open() { return Open(Defaults()); }

  StatusOr<ModelHandle> AcquireNow(const std::string& model, std::optional<int64_t> version = {}) {
    Acquired a;
    repo_->Acquire(model, version, TimePoint::max(), a.callback());
    return a.get();
  }

  int Releases() {
    std::lock_guard<std::mutex> lock(release_mu_);
    return releases_;
  }
  // Waits until release_memory has been called more than `seen` times.
  void WaitForRelease(int seen) {
    std::unique_lock<std::mutex> lock(release_mu_);
    release_cv_.wait(lock, [&] { return releases_ > seen; });
  }

  double Counter(const std::string& name, const metrics::Labels& labels = {}) {
    return registry_.GetCounter(name, "", labels).value();
  }

  fs::path store_;
  FakeClock clock_;
  backend::FakeBackend backend_;
  metrics::Registry registry_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<ModelRepository> repo_;
  std::atomic<int64_t> rss_{100 * kMiB};
  std::mutex release_mu_;
  std::condition_variable release_cv_;
  int releases_ = 0;  // guarded by release_mu_
};

}  // namespace inferd::repository::testing
