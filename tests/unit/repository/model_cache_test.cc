// The model cache: lazy loads on demand, concurrent first requests, deadlines,
// and paging under a memory budget (LRU order, pinning, in-flight protection,
// accounting). Fake backend, fake clock, fake resident memory: no sleeps but
// one poll for the executors, which replace themselves on their own threads.
#include "repository/model_repository.h"

#include <chrono>
#include <thread>

#include "unit/repository/repository_fixture.h"
#include "unit/support/eventually.h"

namespace inferd::repository {
namespace {

using testing::Acquired;
using testing::kConfig;
using testing::kMiB;
using testing::RepositoryTest;

const std::string kLazy = std::string(kConfig) + "load: lazy\n";
const std::string kPinned = std::string(kConfig) + "pinned: true\n";

class ModelCacheTest : public RepositoryTest {
 protected:
  // A lazy repository whose budget holds `budget` bytes; models made by
  // AddModel(name, kConfig, {1}, bytes) have footprint = bytes once loaded
  // (resident memory does not move, so the footprint is the weights).
  ModelRepository& OpenLazy(int64_t budget, std::vector<std::string> models = {}) {
    auto o = Defaults();
    o.lazy_load = true;
    o.memory_budget = budget;
    o.models = std::move(models);
    return Open(o);
  }

  // A lazy repository under `budget` whose resident memory (as the repository
  // reads it) is a base of 100 MiB, the resident footprints, and `*leftover`:
  // what unloaded models left behind (caches, free lists).
  ModelRepository& OpenWithLeftover(int64_t budget, const std::atomic<int64_t>* leftover) {
    auto o = Defaults();
    o.lazy_load = true;
    o.memory_budget = budget;
    o.resident_bytes = [this, leftover] {
      return 100 * kMiB + static_cast<int64_t>(Gauge("inferd_model_resident_bytes")) +
             leftover->load();
    };
    return Open(o);
  }

  double Gauge(const std::string& name) { return registry_.GetGauge(name, "").value(); }

  std::vector<std::string> Resident() {
    std::vector<std::string> names;
    for (const auto& m : repo_->List()) {
      if (m.resident_bytes > 0) names.push_back(m.name);
    }
    return names;
  }

  scheduler::InferenceRequest Request() {
    scheduler::InferenceRequest r;
    r.inputs = {{"x", Tensor::Allocate(DataType::kFp32, {1, 2})}};
    return r;
  }
};

TEST_F(ModelCacheTest, ALazyModelLoadsOnItsFirstRequest) {
  AddModel("a", kConfig, {1});
  auto& repo = OpenLazy(0);
  EXPECT_TRUE(repo.AllReady()) << "no eager model to wait for";
  EXPECT_EQ(backend_.loads(), 0u);
  auto status = repo.GetStatus("a");
  EXPECT_EQ(status->state, ModelState::kUnavailable);
  EXPECT_EQ(status->load, LoadPolicy::kLazy);
  EXPECT_EQ(repo.Get("a").status().code(), StatusCode::kUnavailable) << "Get never loads";
  auto h = AcquireNow("a");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(backend_.loads(), 1u);
  EXPECT_TRUE(AcquireNow("a").ok());
  EXPECT_EQ(backend_.loads(), 1u);
  EXPECT_EQ(Counter("inferd_model_cache_requests_total", {{"result", "miss"}}), 1);
  EXPECT_EQ(Counter("inferd_model_cache_requests_total", {{"result", "hit"}}), 1);
  EXPECT_EQ(Counter("inferd_model_loads_total", {{"outcome", "ok"}}), 1);
}

TEST_F(ModelCacheTest, ConfigLoadKeyOverridesTheFlag) {
  AddModel("eager", std::string(kConfig) + "load: eager\n", {1});
  AddModel("lazy", kLazy, {1});
  AddModel("default", kConfig, {1});
  auto& repo = OpenLazy(0);  // --lazy-load
  EXPECT_TRUE(repo.Get("eager").ok()) << "loaded at start";
  EXPECT_FALSE(repo.Get("lazy").ok());
  EXPECT_FALSE(repo.Get("default").ok());
  repo_.reset();
  auto& eager = Open(Defaults());  // no --lazy-load
  EXPECT_TRUE(eager.Get("eager").ok());
  EXPECT_TRUE(eager.Get("default").ok());
  EXPECT_FALSE(eager.Get("lazy").ok());
}

TEST_F(ModelCacheTest, ConcurrentFirstRequestsShareOneLoad) {
  AddModel("a", kConfig, {1});
  auto& repo = OpenLazy(0);
  backend_.CloseLoadGate();
  std::vector<Acquired> waiting(5);
  for (auto& w : waiting) repo.Acquire("a", std::nullopt, TimePoint::max(), w.callback());
  backend_.WaitForLoads(1);
  EXPECT_EQ(repo.GetStatus("a")->state, ModelState::kLoading);
  for (auto& w : waiting) EXPECT_FALSE(w.ready());
  backend_.OpenLoadGate();
  ServedModel* first = nullptr;
  for (auto& w : waiting) {
    auto h = w.get();
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    if (!first) first = h->get();
    EXPECT_EQ(h->get(), first) << "one load, one instance";
  }
  EXPECT_EQ(backend_.loads(), 1u);
  EXPECT_EQ(Counter("inferd_model_cache_requests_total", {{"result", "miss"}}), 5);
}

TEST_F(ModelCacheTest, AWaitEndsAtTheRequestsDeadlineAndTheLoadGoesOn) {
  AddModel("a", kConfig, {1});
  auto& repo = OpenLazy(0);
  backend_.CloseLoadGate();
  Acquired w;
  repo.Acquire("a", std::nullopt, clock_.Now() + std::chrono::milliseconds(100), w.callback());
  backend_.WaitForLoads(1);
  clock_.Advance(std::chrono::milliseconds(150));
  auto h = w.get();  // the deadline timer answers
  ASSERT_EQ(h.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(h.status().message().find("model 'a' was still loading after 150 ms"),
            std::string::npos)
      << h.status().message();
  backend_.OpenLoadGate();
  ASSERT_TRUE(repo.Load("a").ok());
  EXPECT_TRUE(repo.Get("a").ok()) << "the load finished for the next requests";
}

TEST_F(ModelCacheTest, TheDefaultWaitIsTheModelsRequestTimeout) {
  AddModel("a", std::string(kConfig) + "request_timeout_ms: 40\n", {1});
  auto& repo = OpenLazy(0);
  backend_.CloseLoadGate();
  Acquired w;
  repo.Acquire("a", std::nullopt, TimePoint::max(), w.callback());
  backend_.WaitForLoads(1);
  clock_.Advance(std::chrono::milliseconds(39));
  EXPECT_FALSE(w.ready());
  clock_.Advance(std::chrono::milliseconds(2));
  EXPECT_EQ(w.get().status().code(), StatusCode::kDeadlineExceeded);
}

TEST_F(ModelCacheTest, AFailedLazyLoadAnswersEveryWaiterAndIsNotRetried) {
  AddModel("bad", kLazy, {1}, 0, "fail: truncated file");
  auto& repo = OpenLazy(0);
  backend_.CloseLoadGate();
  std::vector<Acquired> waiting(3);
  for (auto& w : waiting) repo.Acquire("bad", std::nullopt, TimePoint::max(), w.callback());
  backend_.OpenLoadGate();
  for (auto& w : waiting) {
    auto h = w.get();
    EXPECT_EQ(h.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(h.status().message().find("fake load failure"), std::string::npos);
  }
  EXPECT_EQ(AcquireNow("bad").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(backend_.loads(), 1u);
  EXPECT_EQ(Counter("inferd_model_loads_total", {{"outcome", "failed"}}), 1);
}

TEST_F(ModelCacheTest, TheLeastRecentlyUsedIdleModelIsEvicted) {
  for (const char* m : {"a", "b", "c", "d"}) AddModel(m, kConfig, {1}, kMiB);
  auto& repo = OpenLazy(0);
  // Learn the footprints first (1 MiB each: resident memory does not move).
  for (const char* m : {"a", "b", "c", "d"}) ASSERT_TRUE(AcquireNow(m).ok());
  EXPECT_EQ(repo.memory().resident, 4 * kMiB);
  for (const auto& m : repo.List()) EXPECT_TRUE(m.versions[0].footprint.measured);
  repo_.reset();
  // (A new repository forgets the footprints; the test keeps to one below.)
  auto& cache = OpenLazy(3 * kMiB + kMiB / 2);
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("a").ok());  // estimate 3 MiB: fits alone
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("b").ok());  // 1 + 3 > 3.5: evicts a
  EXPECT_EQ(Resident(), std::vector<std::string>({"b"}));
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("a").ok());  // known 1 MiB: 1 + 1 fits
  EXPECT_EQ(Resident(), std::vector<std::string>({"a", "b"}));
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("b").ok());  // a hit: b is now the most recent
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("c").ok());  // estimate 3 MiB: evicts a (older), then b
  EXPECT_EQ(Resident(), std::vector<std::string>({"c"}));
  EXPECT_EQ(Counter("inferd_model_evictions_total"), 3);
  EXPECT_LE(cache.memory().resident, cache.memory().budget);
  auto a = cache.GetStatus("a");
  EXPECT_EQ(a->state, ModelState::kUnavailable);
  EXPECT_EQ(a->load, LoadPolicy::kLazy) << "an evicted model still loads on demand";
  EXPECT_TRUE(a->versions[0].footprint.measured) << "its footprint is remembered";
  EXPECT_EQ(a->versions[0].footprint.bytes, kMiB);
}

TEST_F(ModelCacheTest, EvictionOrderFollowsLastUseWithKnownFootprints) {
  for (const char* m : {"a", "b", "c", "d"}) AddModel(m, kConfig, {1}, kMiB);
  auto& repo = OpenLazy(3 * kMiB);
  // First loads reserve 3 MiB each, so they evict whatever is there; after
  // one round every footprint is known (1 MiB) and three fit.
  for (const char* m : {"a", "b", "c", "d"}) {
    clock_.Advance(std::chrono::milliseconds(1));
    ASSERT_TRUE(AcquireNow(m).ok());
  }
  for (const char* m : {"a", "b", "c"}) {
    clock_.Advance(std::chrono::milliseconds(1));
    ASSERT_TRUE(AcquireNow(m).ok());
  }
  EXPECT_EQ(Resident(), std::vector<std::string>({"a", "b", "c"}));
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("a").ok());  // order of use now: b, c, a
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("d").ok());
  EXPECT_EQ(Resident(), std::vector<std::string>({"a", "c", "d"}));
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("b").ok());
  EXPECT_EQ(Resident(), std::vector<std::string>({"a", "b", "d"}));
  EXPECT_EQ(repo.memory().resident, 3 * kMiB);
}

TEST_F(ModelCacheTest, APinnedModelIsNeverEvicted) {
  AddModel("pinned", kPinned, {1}, kMiB);
  AddModel("b", kConfig, {1}, kMiB);
  AddModel("c", kConfig, {1}, kMiB);
  auto& repo = OpenLazy(4 * kMiB + kMiB / 2);
  ASSERT_TRUE(AcquireNow("pinned").ok());
  EXPECT_TRUE(repo.GetStatus("pinned")->pinned);
  clock_.Advance(std::chrono::milliseconds(5));
  ASSERT_TRUE(AcquireNow("b").ok());  // 1 + 3 fits
  clock_.Advance(std::chrono::milliseconds(5));
  ASSERT_TRUE(AcquireNow("c").ok());  // 2 + 3 > 4.5: evicts b, not the older pinned
  EXPECT_EQ(Resident(), std::vector<std::string>({"c", "pinned"}));
}

TEST_F(ModelCacheTest, AModelWithARequestInFlightOrAHandleHeldIsNeverEvicted) {
  AddModel("busy", kConfig, {1}, kMiB);
  AddModel("held", kConfig, {1}, kMiB);
  AddModel("idle", kConfig, {1}, kMiB);
  AddModel("new", kConfig, {1}, kMiB);
  auto& repo = OpenLazy(6 * kMiB);
  auto busy = *AcquireNow("busy");
  auto model = backend_.LastModel(ModelPath("busy"));
  model->CloseGate();
  std::promise<Status> answered;
  ASSERT_TRUE(busy->Enqueue(Request(),
                            [&](StatusOr<scheduler::InferenceResponse> r) {
                              answered.set_value(r.status());
                            })
                  .ok());
  model->WaitForCalls(1);
  busy.reset();  // only the request in flight holds it now
  clock_.Advance(std::chrono::milliseconds(1));
  auto held = *AcquireNow("held");
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("idle").ok());
  EXPECT_EQ(repo.memory().resident, 3 * kMiB);
  EXPECT_EQ(repo.GetStatus("busy")->in_flight, 1);
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("new").ok());  // 3 + 3 fits exactly? no: 6 <= 6 fits
  clock_.Advance(std::chrono::milliseconds(1));
  // Now 4 MiB resident; a model with an unknown footprint (estimate 3 MiB) needs
  // one evicted. busy (oldest, in flight) and held (handle out) are skipped.
  AddModel("late", kConfig, {1}, kMiB);
  ASSERT_TRUE(repo.Load("late").ok());
  EXPECT_EQ(Resident(), std::vector<std::string>({"busy", "held", "late", "new"}));
  model->OpenGate();
  EXPECT_TRUE(answered.get_future().get().ok());
}

TEST_F(ModelCacheTest, ALoadWaitsForRoomWhileTheModelsInUseHoldTheBudget) {
  AddModel("pinned", kPinned, {1}, kMiB);
  AddModel("b", kConfig, {1}, kMiB);
  AddModel("c", kConfig, {1}, kMiB);
  auto& repo = OpenLazy(4 * kMiB);
  ASSERT_TRUE(AcquireNow("pinned").ok());
  auto b = *AcquireNow("b");  // 1 + 3 = 4 fits
  auto model = backend_.LastModel(ModelPath("b"));
  model->CloseGate();
  std::promise<Status> answered;
  ASSERT_TRUE(b->Enqueue(Request(), [&](StatusOr<scheduler::InferenceResponse> r) {
                 answered.set_value(r.status());
               }).ok());
  model->WaitForCalls(1);
  b.reset();
  Acquired c;
  repo.Acquire("c", std::nullopt, TimePoint::max(), c.callback());
  EXPECT_EQ(repo.GetStatus("c")->state, ModelState::kLoading) << "waiting for room";
  EXPECT_FALSE(c.ready());
  model->OpenGate();  // b's request ends: b goes idle, c's load goes on
  model.reset();
  EXPECT_TRUE(answered.get_future().get().ok());
  ASSERT_TRUE(c.get().ok());
  EXPECT_EQ(Resident(), std::vector<std::string>({"c", "pinned"}));
  EXPECT_EQ(Counter("inferd_model_loads_total", {{"outcome", "no_room"}}), 0);
}

TEST_F(ModelCacheTest, AHandleLetGoOutsideARequestIsSeenByTheRetry) {
  AddModel("b", kConfig, {1}, kMiB);
  AddModel("c", kConfig, {1}, kMiB);
  auto& repo = OpenLazy(3 * kMiB);
  auto held = *AcquireNow("b");
  Acquired c;
  repo.Acquire("c", std::nullopt, TimePoint::max(), c.callback());
  EXPECT_FALSE(c.ready());
  held.reset();                                   // no event: the parked load looks again
  clock_.Advance(std::chrono::milliseconds(60));  // after kParkedRetry
  ASSERT_TRUE(c.get().ok());
  EXPECT_EQ(Resident(), std::vector<std::string>({"c"}));
}

TEST_F(ModelCacheTest, WithoutRoomEvenWhenIdleTheLoadFailsAtOnceWithoutAStickyError) {
  AddModel("p1", kPinned, {1}, kMiB);
  AddModel("p2", kPinned, {1}, kMiB);
  AddModel("b", kConfig, {1}, kMiB);
  auto& repo = OpenLazy(4 * kMiB + kMiB / 2);
  ASSERT_TRUE(AcquireNow("p1").ok());
  ASSERT_TRUE(AcquireNow("p2").ok());  // 1 + 3 fits
  auto c = AcquireNow("b");            // 2 + 3 > 4.5, and pinned models never leave
  ASSERT_EQ(c.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(c.status().message().find("memory budget"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("by pinned models"), std::string::npos);
  EXPECT_EQ(repo.Load("b").code(), StatusCode::kUnavailable) << "a load by hand does not wait";
  EXPECT_EQ(Counter("inferd_model_loads_total", {{"outcome", "no_room"}}), 2);
  EXPECT_TRUE(repo.GetStatus("b")->error.empty()) << "no room is not the model's fault";
  ASSERT_TRUE(repo.Unload("p2").ok());
  EXPECT_TRUE(AcquireNow("b").ok()) << "the next request tries again";
}

TEST_F(ModelCacheTest, AWaitForRoomEndsAtTheDeadline) {
  AddModel("b", kConfig, {1}, kMiB);
  AddModel("c", std::string(kConfig) + "request_timeout_ms: 100\n", {1}, kMiB);
  auto& repo = OpenLazy(3 * kMiB);
  auto held = *AcquireNow("b");
  Acquired c;
  repo.Acquire("c", std::nullopt, TimePoint::max(), c.callback());
  clock_.Advance(std::chrono::milliseconds(150));
  EXPECT_EQ(c.get().status().code(), StatusCode::kDeadlineExceeded);
  held.reset();
  clock_.Advance(std::chrono::milliseconds(60));
  EXPECT_TRUE(AcquireNow("c").ok()) << "the given-up wait left the model loadable";
  (void)repo;
}

TEST_F(ModelCacheTest, AModelLargerThanTheBudgetSaysSo) {
  AddModel("huge", kConfig, {1}, 8 * kMiB);
  OpenLazy(4 * kMiB);
  auto h = AcquireNow("huge");
  ASSERT_EQ(h.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(h.status().message().find("more than the whole memory budget"), std::string::npos)
      << h.status().message();
}

TEST_F(ModelCacheTest, TheFootprintIsTheResidentGrowthOfTheFirstLoad) {
  AddModel("a", kConfig, {1}, kMiB / 4);
  auto o = Defaults();
  o.lazy_load = true;
  o.memory_budget = 64 * kMiB;
  // Every reading `step` more: the first load adds 3 MiB between its two.
  std::atomic<int64_t> step{3 * kMiB};
  o.resident_bytes = [&step, this] { return rss_ += step.load(); };
  auto& repo = Open(o);
  ASSERT_TRUE(AcquireNow("a").ok());
  auto f = repo.GetStatus("a")->versions[0].footprint;
  EXPECT_TRUE(f.measured);
  EXPECT_EQ(f.rss_growth, 3 * kMiB);
  EXPECT_EQ(f.weight_bytes, kMiB / 4);
  EXPECT_EQ(f.bytes, 3 * kMiB) << "the larger of the two";
  EXPECT_EQ(f.file_bytes, kMiB / 4);
  EXPECT_EQ(repo.memory().resident, 3 * kMiB);
  const int releases = Releases();
  EXPECT_GT(releases, 0) << "freed memory goes back before a measured load";
  // Unload, load again with readings 5 MiB apart: the footprint is not
  // measured again.
  step = 5 * kMiB;
  ASSERT_TRUE(repo.Unload("a").ok());
  EXPECT_EQ(repo.memory().resident, 0);
  ASSERT_TRUE(repo.Load("a").ok());
  EXPECT_EQ(repo.GetStatus("a")->versions[0].footprint.bytes, 3 * kMiB);
  EXPECT_EQ(repo.memory().resident, 3 * kMiB);
}

TEST_F(ModelCacheTest, MemoryOutsideTheFootprintsIsCarriedByTheBudget) {
  for (const char* m : {"a", "b", "c", "d"}) AddModel(m, kConfig, {1}, kMiB);
  std::atomic<int64_t> leftover{0};
  auto& repo = OpenWithLeftover(3 * kMiB, &leftover);
  auto outside = [this] { return Gauge("inferd_model_outside_bytes"); };
  // Learn the footprints (1 MiB each); a, b and c end up resident.
  for (const char* m : {"a", "b", "c", "d", "a", "b", "c"}) {
    clock_.Advance(std::chrono::milliseconds(1));
    ASSERT_TRUE(AcquireNow(m).ok());
  }
  EXPECT_EQ(Resident(), std::vector<std::string>({"a", "b", "c"}));
  EXPECT_EQ(outside(), 0);
  // Unloaded models leave 1 MiB behind; the next job reads it.
  leftover = kMiB;
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("d").ok());  // 3 + 1 > 3: evicts a
  EXPECT_EQ(Resident(), std::vector<std::string>({"b", "c", "d"}));
  EXPECT_EQ(outside(), kMiB);
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("a").ok());  // 3 + 1 outside + 1 > 3: evicts b and c
  EXPECT_EQ(Resident(), std::vector<std::string>({"a", "d"}));
  EXPECT_LE(repo.memory().resident + static_cast<int64_t>(outside()), repo.memory().budget);
  // More left outside than any eviction can free: the footprints decide.
  leftover = 5 * kMiB;
  ASSERT_TRUE(repo.Unload("d").ok());
  EXPECT_EQ(outside(), 5 * kMiB);
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("b").ok());  // 1 + 1 fits the footprints: a stays
  EXPECT_EQ(Resident(), std::vector<std::string>({"a", "b"}));
}

TEST_F(ModelCacheTest, TheBackendsCachesGoWhenTheOutsideGrowsOrNothingIsResident) {
  for (const char* m : {"a", "b"}) AddModel(m, kConfig, {1}, kMiB);
  std::atomic<int64_t> leftover{0};
  auto& repo = OpenWithLeftover(10 * kMiB, &leftover);
  ASSERT_TRUE(AcquireNow("a").ok());
  EXPECT_EQ(backend_.cache_releases(), 0) << "nothing outside the footprints";
  leftover = kMiB / 2;  // under a tenth of the budget
  ASSERT_TRUE(AcquireNow("b").ok());
  EXPECT_EQ(backend_.cache_releases(), 0);
  leftover = 2 * kMiB;  // a tenth of the budget more than after the last release
  ASSERT_TRUE(repo.Unload("b").ok());
  EXPECT_EQ(backend_.cache_releases(), 1);
  EXPECT_EQ(Counter("inferd_model_cache_releases_total"), 1);
  EXPECT_EQ(scheduler_->recycled_executors(), 0) << "a model is resident: its executors stay";
  ASSERT_TRUE(repo.Unload("a").ok());  // nothing resident, 2 MiB still outside
  // Not grown since the last release, but that one came while a model was
  // resident and recycled no thread: this one does.
  EXPECT_EQ(backend_.cache_releases(), 2);
  // The executors are replaced too, each at its next idle moment.
  const int executors = static_cast<int>(scheduler_->num_executors());
  auto recycled = [&](int n) {
    return test_support::Eventually([&] { return scheduler_->recycled_executors() >= n; });
  };
  EXPECT_TRUE(recycled(executors));
  EXPECT_EQ(scheduler_->recycled_executors(), executors);
  ASSERT_TRUE(repo.Unload("a").ok());
  ASSERT_TRUE(repo.Unload("b").ok());
  EXPECT_EQ(backend_.cache_releases(), 2) << "nothing resident since, nothing grown";
  ASSERT_TRUE(repo.Load("a").ok());
  leftover = 3 * kMiB;
  ASSERT_TRUE(repo.Unload("a").ok());  // nothing resident, and more outside than before
  EXPECT_EQ(backend_.cache_releases(), 3);
  EXPECT_TRUE(recycled(2 * executors));
  EXPECT_EQ(scheduler_->recycled_executors(), 2 * executors);
}

TEST_F(ModelCacheTest, ALoadReservesItsPeakWhileItRuns) {
  for (const char* m : {"a", "b", "c"}) AddModel(m, kConfig, {1}, kMiB);
  auto o = Defaults();
  o.lazy_load = true;
  o.memory_budget = 3 * kMiB;
  // Every load peaks 2 MiB above where it started; its footprint is 1 MiB.
  o.peak_resident_bytes = [this] { return rss_.load() + 2 * kMiB; };
  auto& repo = Open(o);
  for (const char* m : {"a", "b", "c"}) {  // first loads: each evicts the one before
    clock_.Advance(std::chrono::milliseconds(1));
    ASSERT_TRUE(AcquireNow(m).ok());
  }
  auto f = repo.GetStatus("c")->versions[0].footprint;
  EXPECT_EQ(f.bytes, kMiB);
  EXPECT_EQ(f.peak_growth, 2 * kMiB);
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("a").ok());  // 1 resident + a peak of 2 fits
  EXPECT_EQ(Resident(), std::vector<std::string>({"a", "c"}));
  clock_.Advance(std::chrono::milliseconds(1));
  backend_.CloseLoadGate();
  Acquired b;
  repo.Acquire("b", std::nullopt, TimePoint::max(), b.callback());
  backend_.WaitForLoads(5);
  EXPECT_EQ(repo.memory().reserved, 2 * kMiB) << "the peak, not the footprint";
  EXPECT_EQ(Resident(), std::vector<std::string>({"a"})) << "2 resident + 2 > 3: c went first";
  backend_.OpenLoadGate();
  ASSERT_TRUE(b.get().ok());
  EXPECT_EQ(repo.memory().reserved, 0);
  EXPECT_EQ(repo.memory().resident, 2 * kMiB);
}

TEST_F(ModelCacheTest, EvictionHandsTheMemoryBack) {
  AddModel("a", kConfig, {1}, kMiB);
  AddModel("b", kConfig, {1}, kMiB);
  auto& repo = OpenLazy(3 * kMiB + kMiB / 2);
  ASSERT_TRUE(AcquireNow("a").ok());
  const int before = Releases();
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(AcquireNow("b").ok());  // evicts a
  EXPECT_GT(Releases(), before);
  EXPECT_EQ(repo.memory().resident, kMiB);
  EXPECT_EQ(repo.memory().reserved, 0);
}

TEST_F(ModelCacheTest, ListShowsStateBytesAndLastUse) {
  AddModel("a", kConfig, {1}, kMiB);
  AddModel("b", kConfig, {1}, kMiB);
  auto& repo = OpenLazy(0);
  ASSERT_TRUE(AcquireNow("a").ok());
  auto list = repo.List();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].state, ModelState::kReady);
  EXPECT_EQ(list[0].resident_bytes, kMiB);
  EXPECT_TRUE(list[0].versions[0].resident);
  ASSERT_TRUE(list[0].last_used.has_value());
  EXPECT_LE(*list[0].last_used, std::chrono::system_clock::now());
  EXPECT_EQ(list[1].state, ModelState::kUnavailable);
  EXPECT_EQ(list[1].resident_bytes, 0);
  EXPECT_FALSE(list[1].last_used.has_value());
  EXPECT_FALSE(list[1].versions[0].footprint.measured);
  EXPECT_EQ(list[1].versions[0].footprint.bytes, 3 * kMiB) << "the estimate before a load";
}

}  // namespace
}  // namespace inferd::repository
