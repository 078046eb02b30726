// A request that still holds a version's handle when a reload retires that
// instance is served by its replacement; one whose version was unloaded by
// hand, dropped from the store, or that meets a draining server is refused as
// before (ServedModel::Enqueue, Parts::successor).
#include "repository/model_repository.h"

#include "unit/repository/repository_fixture.h"

namespace inferd::repository {
namespace {

using testing::kConfig;
using testing::RepositoryTest;

using SuccessorTest = RepositoryTest;

scheduler::InferenceRequest Request(const std::string& id) {
  scheduler::InferenceRequest r;
  r.id = id;
  r.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
  return r;
}

// One request's answer.
struct Answer {
  std::promise<StatusOr<scheduler::InferenceResponse>> promise;
  std::future<StatusOr<scheduler::InferenceResponse>> future = promise.get_future();
  scheduler::Completion callback() {
    return [this](StatusOr<scheduler::InferenceResponse> r) { promise.set_value(std::move(r)); };
  }
  bool ready() { return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
};

TEST_F(SuccessorTest, ARequestOnAReloadedInstanceIsServedByTheNewOne) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  ModelHandle old = *repo.Get("a");
  std::shared_ptr<backend::FakeModel> old_model = backend_.LastModel(ModelPath("a"));
  ASSERT_TRUE(old_model);
  ASSERT_TRUE(repo.Load("a").ok());  // replaces version 1's instance, retires `old`
  ModelHandle fresh = *repo.Get("a");
  ASSERT_NE(fresh.get(), old.get());
  std::shared_ptr<backend::FakeModel> new_model = backend_.LastModel(ModelPath("a"));
  ASSERT_NE(new_model, old_model);

  Answer answer;
  Status st = old->Enqueue(Request("raced"), answer.callback());
  ASSERT_TRUE(st.ok()) << "a reload must not refuse a request it raced: " << st.ToString();
  auto response = answer.future.get();
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->id, "raced");
  EXPECT_EQ(new_model->calls().size(), 1u) << "served by the new instance";
  EXPECT_TRUE(old_model->calls().empty());
  EXPECT_TRUE(scheduler_->WaitIdle(TimePoint::max()));
  EXPECT_EQ(fresh->in_flight(), 0);
  EXPECT_EQ(old->in_flight(), 0);

  // Replaced twice: the repository's current instance serves it.
  ASSERT_TRUE(repo.Load("a").ok());
  std::shared_ptr<backend::FakeModel> newest = backend_.LastModel(ModelPath("a"));
  ASSERT_NE(newest, new_model);
  Answer again;
  ASSERT_TRUE(old->Enqueue(Request("twice"), again.callback()).ok());
  ASSERT_TRUE(again.future.get().ok());
  EXPECT_EQ(newest->calls().size(), 1u);
  EXPECT_EQ(new_model->calls().size(), 1u);
}

TEST_F(SuccessorTest, ARequestOnAnUnloadedInstanceIsStillRefused) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  ModelHandle held = *repo.Get("a");
  ASSERT_TRUE(repo.Unload("a").ok());
  Answer answer;
  Status st = held->Enqueue(Request("late"), answer.callback());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message(), "model 'a:1' is being unloaded");
  EXPECT_FALSE(answer.ready()) << "a refused request's completion is not called";
  EXPECT_EQ(held->in_flight(), 0);
}

TEST_F(SuccessorTest, ARequestOnAVersionGoneFromTheStoreIsStillRefused) {
  AddModel("a", kConfig, {1, 2});
  auto& repo = Open();
  ModelHandle v1 = *repo.Get("a", 1);
  std::filesystem::remove_all(store_ / "a" / "1");
  ASSERT_TRUE(repo.Load("a").ok());  // version 1 is retired, version 2 reloaded
  ASSERT_TRUE(repo.Get("a", 2).ok());
  Answer answer;
  Status st = v1->Enqueue(Request("gone"), answer.callback());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << "never handed to another version";
  EXPECT_EQ(st.message(), "model 'a:1' is being unloaded");
  EXPECT_FALSE(answer.ready());
}

TEST_F(SuccessorTest, ARequestOnAReloadedInstanceIsRefusedWhileDraining) {
  AddModel("a", kConfig, {1});
  auto& repo = Open();
  ModelHandle old = *repo.Get("a");
  ASSERT_TRUE(repo.Load("a").ok());
  scheduler_->StopAccepting();
  Answer answer;
  Status st = old->Enqueue(Request("draining"), answer.callback());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message(), "server is draining: not accepting requests");
  EXPECT_FALSE(answer.ready());
  EXPECT_EQ((*repo.Get("a"))->in_flight(), 0);
}

}  // namespace
}  // namespace inferd::repository
