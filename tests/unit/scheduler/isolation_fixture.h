// The fixture of the isolation tests (isolation_test.cc, overdue_test.cc):
// a scheduler on a fake clock with fake models held at their gates, requests
// submitted with a tag whose answer order is recorded, and the quarantines
// the scheduler asked for. No sleeps, no timing.
#pragma once

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/fake/fake_backend.h"
#include "scheduler/scheduler.h"
#include "unit/scheduler/test_util.h"
#include "unit/support/fake_clock.h"

namespace inferd::scheduler {

class IsolationTest : public ::testing::Test {
 public:
  using Answer = std::future<StatusOr<InferenceResponse>>;

 protected:
  void StartScheduler(int executors, int max_stuck_per_model = 0, int max_stuck_threads = 0) {
    Scheduler::Options opts;
    opts.max_stuck_per_model = max_stuck_per_model;
    opts.max_stuck_threads = max_stuck_threads;
    opts.executors.assign(static_cast<size_t>(executors), ExecutorSpec{});
    opts.clock = &clock_;
    opts.metrics = &registry_;
    opts.calibrate = false;
    scheduler_ = std::move(*Scheduler::Create(opts));
  }

  struct Model {
    std::shared_ptr<backend::FakeModel> fake;
    std::shared_ptr<ScheduledModel> queue;
  };
  Model Add(const std::string& name, config::ModelConfig config) {
    config.name = name;
    Model m;
    m.fake = std::make_shared<backend::FakeModel>(config);
    ModelSpec spec;
    spec.name = name + ":1";
    spec.version = "1";
    spec.config = config;
    spec.model = m.fake;
    spec.quarantine = [this, name](const std::string& reason) {
      std::lock_guard<std::mutex> lock(mu_);
      quarantined_.push_back(name + ": " + reason);
    };
    m.queue = scheduler_->AddModel(std::move(spec));
    return m;
  }

  // Submits one request; its answer, and its model's name in `order_` when
  // it is answered.
  Answer Submit(const Model& m, const std::string& tag, TimePoint deadline = TimePoint::max()) {
    auto promise = std::make_shared<std::promise<StatusOr<InferenceResponse>>>();
    Answer answer = promise->get_future();
    Status st = TrySubmit(m, tag, deadline, 0, promise);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return answer;
  }
  // Submits one request at `priority`; the status of Enqueue, and its answer
  // through `promise` when it was queued.
  Status TrySubmit(const Model& m, const std::string& tag, TimePoint deadline, int priority,
                   std::shared_ptr<std::promise<StatusOr<InferenceResponse>>> promise) {
    InferenceRequest r;
    r.inputs = {{"x", testing::FloatTensor({1, 2}, 1)}};
    r.deadline = deadline;
    r.priority = priority;
    return scheduler_->Enqueue(*m.queue, std::move(r),
                               [this, promise, tag](StatusOr<InferenceResponse> res) {
                                 {
                                   std::lock_guard<std::mutex> lock(mu_);
                                   order_.push_back(tag);
                                 }
                                 promise->set_value(std::move(res));
                               });
  }

  std::vector<std::string> order() {
    std::lock_guard<std::mutex> lock(mu_);
    return order_;
  }
  std::vector<std::string> quarantined() {
    std::lock_guard<std::mutex> lock(mu_);
    return quarantined_;
  }
  double Late(const std::string& model) {
    return registry_
        .GetCounter("inferd_late_results_total", "", {{"model", model}, {"version", "1"}})
        .value();
  }

  double Unwaited() {
    return registry_.GetCounter("inferd_executors_unwaited_total", "", {}).value();
  }
  double Overdue() {
    return registry_.GetCounter("inferd_executors_overdue_total", "", {}).value();
  }
  // Runs one batch of `m` that takes `ms` on the fake clock: its measured
  // forward, from which its overdue time derives (max(8x, +50 ms)).
  void RunOneOf(const Model& m, int ms) {
    const size_t calls = m.fake->calls().size();
    m.fake->CloseGate();
    auto answer = Submit(m, "measured");
    m.fake->WaitForCalls(calls + 1);
    clock_.Advance(std::chrono::milliseconds(ms));
    m.fake->OpenGate();
    ASSERT_TRUE(answer.get().ok());
  }

  test_support::FakeClock clock_;
  metrics::Registry registry_;
  std::unique_ptr<Scheduler> scheduler_;
  std::mutex mu_;
  std::vector<std::string> order_;        // guarded by mu_
  std::vector<std::string> quarantined_;  // guarded by mu_
};

}  // namespace inferd::scheduler
