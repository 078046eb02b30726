// A quarantined version (ModelRepository::Quarantine, ModelSpec::quarantine):
// out of service at once with its reason, never loaded again on demand, back
// in service only after a load through the management API.
#include <map>
#include <mutex>
#include <thread>

#include "repository/model_repository.h"
#include "unit/repository/repository_fixture.h"

namespace inferd::repository {
namespace {

using testing::kConfig;
using testing::RepositoryTest;

constexpr char kReason[] = "its forward ran 61000 ms, past max_execution_ms 3000";
const std::string kLazyConfig = std::string(kConfig) + "load: lazy\n";

scheduler::InferenceRequest OneRequest() {
  scheduler::InferenceRequest r;
  r.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
  return r;
}

class QuarantineTest : public RepositoryTest {
 protected:
  // Keeps each instance's ModelSpec::quarantine, as the scheduler would.
  ModelRepository::Options WithHooks() {
    auto o = Defaults();
    o.placement = [this](const config::ModelConfig& c, scheduler::ModelSpec* spec) {
      std::lock_guard<std::mutex> lock(mu_);
      hooks_[c.name] = spec->quarantine;
    };
    return o;
  }
  // The quarantine hook of `model`'s latest instance.
  std::function<void(std::string)> Hook(const std::string& model) {
    std::lock_guard<std::mutex> lock(mu_);
    return hooks_.at(model);
  }
  double Gauge(const std::string& model, const std::string& version) {
    return registry_
        .GetGauge("inferd_model_quarantined", "", {{"model", model}, {"version", version}})
        .value();
  }

  std::mutex mu_;
  std::map<std::string, std::function<void(std::string)>> hooks_;  // guarded by mu_
};

TEST_F(QuarantineTest, AHungForwardTakesTheVersionOutOfServiceWithItsReason) {
  AddModel("a", kConfig, {1});
  AddModel("b", kConfig, {1});
  auto& repo = Open(WithHooks());
  ModelHandle held = *repo.Get("a");
  std::shared_ptr<backend::FakeModel> model = backend_.LastModel(ModelPath("a"));
  ASSERT_TRUE(model);
  model->CloseGate();
  std::promise<StatusOr<scheduler::InferenceResponse>> answer;
  ASSERT_TRUE(held->Enqueue(OneRequest(),
                            [&](StatusOr<scheduler::InferenceResponse> r) {
                              answer.set_value(std::move(r));
                            })
                  .ok());
  model->WaitForCalls(1);  // the forward hangs at the gate
  held.reset();

  // The scheduler's watchdog calls the hook from a thread of its own.
  const size_t loads = backend_.loads();
  auto hook = Hook("a");
  std::thread watchdog([&] { hook(kReason); });
  watchdog.join();
  auto st = repo.GetStatus("a");
  ASSERT_EQ(st->state, ModelState::kQuarantined);
  EXPECT_EQ(st->reason, kReason);
  ASSERT_EQ(st->versions.size(), 1u);
  EXPECT_EQ(st->versions[0].state, ModelState::kQuarantined);
  EXPECT_EQ(st->versions[0].reason, kReason);
  EXPECT_EQ(ModelStateName(st->state), "QUARANTINED");

  // Requests and readiness are refused with the reason, and nothing loads.
  for (const auto& refused : {AcquireNow("a"), AcquireNow("a", 1), repo.Get("a")}) {
    ASSERT_EQ(refused.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(refused.status().message().find("QUARANTINED: " + std::string(kReason)),
              std::string::npos)
        << refused.status().message();
    EXPECT_NE(refused.status().message().find("management API"), std::string::npos);
  }
  EXPECT_EQ(backend_.loads(), loads) << "not loaded again on demand";
  EXPECT_TRUE(AcquireNow("b").ok()) << "the other model serves on";
  EXPECT_EQ(Counter("inferd_model_quarantines_total"), 1);
  EXPECT_EQ(Gauge("a", "1"), 1);

  // The hung forward ends; a second call of the hook changes nothing.
  model->OpenGate();
  EXPECT_TRUE(answer.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  hook("again");
  EXPECT_EQ(repo.GetStatus("a")->reason, kReason);

  // A load through the management API clears it.
  ASSERT_TRUE(repo.Load("a").ok());
  st = repo.GetStatus("a");
  EXPECT_EQ(st->state, ModelState::kReady);
  EXPECT_TRUE(st->reason.empty());
  EXPECT_TRUE(AcquireNow("a").ok());
  EXPECT_EQ(Gauge("a", "1"), 0);
  EXPECT_GT(backend_.loads(), loads);
}

TEST_F(QuarantineTest, ALazyModelIsNotLoadedAgainOnDemand) {
  AddModel("a", kLazyConfig, {1});
  auto& repo = Open();
  ASSERT_TRUE(AcquireNow("a").ok());
  ASSERT_TRUE(repo.Quarantine("a", 1, kReason).ok());
  const size_t loads = backend_.loads();
  for (int i = 0; i < 3; ++i) {
    auto refused = AcquireNow("a");
    ASSERT_EQ(refused.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(refused.status().message().find(kReason), std::string::npos);
  }
  EXPECT_EQ(backend_.loads(), loads) << "a request must not load a quarantined model";
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kQuarantined);
  // Unloaded by hand, it stays quarantined; loaded by hand, it serves (and
  // loads on demand again after that).
  ASSERT_TRUE(repo.Unload("a").ok());
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kQuarantined);
  ASSERT_TRUE(repo.Load("a").ok());
  EXPECT_TRUE(AcquireNow("a").ok());
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kReady);
}

TEST_F(QuarantineTest, OneVersionOutTheOthersServe) {
  AddModel("a", kConfig, {1, 2});
  auto& repo = Open();
  ASSERT_TRUE(repo.Quarantine("a", 2, kReason).ok());
  auto v2 = AcquireNow("a", 2);
  EXPECT_EQ(v2.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(v2.status().message().find("version 2 is QUARANTINED"), std::string::npos);
  auto v = AcquireNow("a");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)->version(), 1) << "the highest ready version serves";
  auto st = repo.GetStatus("a");
  EXPECT_EQ(st->state, ModelState::kReady);
  EXPECT_EQ(st->versions[1].state, ModelState::kQuarantined);
  EXPECT_EQ(st->versions[0].state, ModelState::kReady);
}

TEST_F(QuarantineTest, AnInstanceAlreadyReplacedIsNotQuarantined) {
  AddModel("a", kConfig, {1});
  auto& repo = Open(WithHooks());
  auto old_hook = Hook("a");
  ASSERT_TRUE(repo.Load("a").ok());  // a new instance replaces the one the hook names
  old_hook(kReason);
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kReady);
  EXPECT_TRUE(AcquireNow("a").ok());
  EXPECT_EQ(Counter("inferd_model_quarantines_total"), 0);
}

TEST_F(QuarantineTest, BadAsksAreRefused) {
  AddModel("a", kLazyConfig, {1});
  auto& repo = Open();
  EXPECT_EQ(repo.Quarantine("nope", 1, kReason).code(), StatusCode::kNotFound);
  EXPECT_EQ(repo.Quarantine("a", 7, kReason).code(), StatusCode::kNotFound);
  EXPECT_EQ(repo.Quarantine("../a", 1, kReason).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(repo.Quarantine("a", 1, kReason).code(), StatusCode::kFailedPrecondition)
      << "not loaded: nothing to take out of service";
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kUnavailable);
}

// The crash journal's quarantine at start: before the eager loads, a version
// not loaded yet is quarantined as it is; its model is not loaded at start,
// the others are; a management load clears it.
TEST_F(QuarantineTest, BeforeTheStartAVersionNotLoadedIsQuarantinedAndNotLoaded) {
  AddModel("poison", kConfig, {1});
  AddModel("fine", kConfig, {1});
  auto& repo = Open(Defaults(), /*start=*/false);
  ASSERT_TRUE(repo.Quarantine("poison", 1, "running in 2 crashes").ok());
  repo.StartEagerLoads();
  ASSERT_TRUE(repo.WaitForStartup(TimePoint::max()));
  EXPECT_TRUE(repo.AllReady());  // the node serves its other models
  EXPECT_EQ(repo.GetStatus("fine")->state, ModelState::kReady);
  auto st = repo.GetStatus("poison");
  EXPECT_EQ(st->state, ModelState::kQuarantined);
  EXPECT_EQ(st->reason, "running in 2 crashes");
  EXPECT_EQ(backend_.LastModel(ModelPath("poison")), nullptr);  // never loaded
  EXPECT_EQ(Gauge("poison", "1"), 1);
  auto refused = repo.Get("poison");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("QUARANTINED: running in 2 crashes"),
            std::string::npos)
      << refused.status().message();
  ASSERT_TRUE(repo.Load("poison").ok());
  EXPECT_EQ(repo.GetStatus("poison")->state, ModelState::kReady);
  EXPECT_EQ(Gauge("poison", "1"), 0);
}

}  // namespace
}  // namespace inferd::repository
