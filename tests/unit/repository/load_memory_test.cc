// What a reload skips: the batch calibration measured at an earlier load of
// the same file is adopted (nothing measured again); a load on demand defers
// calibration until requests queue. Fake backend; no timing is asserted.
#include "repository/model_repository.h"
#include "unit/repository/repository_fixture.h"

namespace inferd::repository {
namespace {

using testing::Acquired;
using testing::kConfig;
using testing::RepositoryTest;

const std::string kBatching = std::string(kConfig) + "max_batch_size: 4\n";

class LoadMemoryTest : public RepositoryTest {};

TEST_F(LoadMemoryTest, AReloadOfTheSameFileAdoptsTheEarlierCalibration) {
  AddModel("a", kBatching, {1});
  auto& repo = Open();  // eager: calibrated at start-up
  auto first = backend_.LastModel(ModelPath("a"));
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->batch_sizes().empty()) << "the first load measured";
  auto status = repo.GetStatus("a");
  ASSERT_TRUE(status.ok());
  ASSERT_TRUE(status->versions[0].calibration);
  const scheduler::BatchCalibration measured = *status->versions[0].calibration;
  ASSERT_TRUE(measured.calibrated) << measured.note;
  first.reset();

  ASSERT_TRUE(repo.Unload("a").ok());
  ASSERT_TRUE(repo.Load("a").ok());
  auto second = backend_.LastModel(ModelPath("a"));
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->batch_sizes().empty()) << "the reload measured nothing";
  status = repo.GetStatus("a");
  ASSERT_TRUE(status->versions[0].calibration);
  EXPECT_TRUE(status->versions[0].calibration->calibrated);
  EXPECT_EQ(status->versions[0].calibration->max_batch, measured.max_batch);
  EXPECT_EQ(status->versions[0].calibration->sizes.size(), measured.sizes.size());
}

TEST_F(LoadMemoryTest, AChangedFileIsMeasuredAgain) {
  AddModel("a", kBatching, {1});
  auto& repo = Open();
  ASSERT_TRUE(repo.Unload("a").ok());
  AddModel("a", kBatching, {1}, 64);  // another file (another size)
  ASSERT_TRUE(repo.Load("a").ok());  // by hand: from now on a model loaded on demand
  auto status = repo.GetStatus("a");
  ASSERT_TRUE(status->versions[0].calibration);
  EXPECT_FALSE(status->versions[0].calibration->calibrated)
      << "the old file's calibration is not adopted; the new one waits for queued requests";
  EXPECT_NE(status->versions[0].calibration->note.find("deferred"), std::string::npos);
}

TEST_F(LoadMemoryTest, ALoadOnDemandDefersCalibration) {
  AddModel("a", kBatching, {1});
  auto o = Defaults();
  o.lazy_load = true;
  auto& repo = Open(o);
  Acquired got;
  repo.Acquire("a", std::nullopt, TimePoint::max(), got.callback());
  auto handle = got.get();
  ASSERT_TRUE(handle.ok()) << handle.status().ToString();
  auto model = backend_.LastModel(ModelPath("a"));
  ASSERT_TRUE(model);
  EXPECT_TRUE(model->batch_sizes().empty()) << "the request did not wait for a calibration";
  auto status = repo.GetStatus("a");
  ASSERT_TRUE(status->versions[0].calibration);
  EXPECT_FALSE(status->versions[0].calibration->calibrated);
  EXPECT_NE(status->versions[0].calibration->note.find("deferred"), std::string::npos);
}

}  // namespace
}  // namespace inferd::repository
