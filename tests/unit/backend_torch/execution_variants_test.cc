// Execution variants chosen at load: verified against the frozen module, and
// refused when their outputs differ.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backend/torch/torch_model.h"
#include "unit/backend_torch/test_models.h"

namespace inferd::backend {
namespace {

using ::testing::HasSubstr;
using testing::LoadOrDie;
using testing::MakeTensor;
using testing::TestLoadOptions;
using testing::Values;

const ExecutionVariantTrial* Find(const ExecutionReport& r, const std::string& name) {
  for (const auto& t : r.trials) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(ExecutionVariantsTest, ALayoutSensitiveModelRefusesChannelsLast) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadOrDie(TestLoadOptions("layout_probe"));
  ASSERT_NE(model, nullptr);
  const ExecutionReport report = model->execution_report();
  const auto* cl = Find(report, "channels_last");
  ASSERT_NE(cl, nullptr);
  EXPECT_TRUE(cl->tried);
  EXPECT_FALSE(cl->accepted);
  EXPECT_GT(cl->max_relative_error, 1e-3);
  EXPECT_THAT(cl->note, HasSubstr("refused: outputs differ"));
  EXPECT_NE(report.chosen, "channels_last");
  const auto* frozen = Find(report, "frozen");
  ASSERT_NE(frozen, nullptr);
  EXPECT_TRUE(frozen->accepted);
  EXPECT_EQ(frozen->max_relative_error, 0);
  // And the served answer is the NCHW one: the first 8 elements.
  std::vector<float> x(2 * 3 * 4 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  auto out = model->Execute({{"image", MakeTensor(DataType::kFp32, {2, 3, 4, 4}, x)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0].tensor),
            (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 48, 49, 50, 51, 52, 53, 54, 55}));
}

TEST(ExecutionVariantsTest, VariantsFrozenInConfigTriesNothing) {
  SKIP_WITHOUT_TEST_STORE();
  LoadOptions options = TestLoadOptions("tiny_cnn");
  options.config.variants = config::Variants::kFrozen;
  auto model = LoadOrDie(options);
  ASSERT_NE(model, nullptr);
  const ExecutionReport report = model->execution_report();
  EXPECT_EQ(report.chosen, "frozen");
  for (const auto& t : report.trials) EXPECT_FALSE(t.tried) << t.name;
}

TEST(ExecutionVariantsTest, TinyCnnTriesEveryVariantAndServesAVerifiedOne) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadOrDie(TestLoadOptions("tiny_cnn"));
  ASSERT_NE(model, nullptr);
  const ExecutionReport report = model->execution_report();
  ASSERT_EQ(report.trials.size(), 3u);
  const auto* chosen = Find(report, report.chosen);
  ASSERT_NE(chosen, nullptr);
  EXPECT_TRUE(chosen->accepted);
  EXPECT_LE(chosen->max_relative_error, 1e-3);
  EXPECT_GT(chosen->ms_per_item, 0);
  EXPECT_THAT(chosen->note, HasSubstr("chosen"));
  for (const auto& t : report.trials) {
    EXPECT_TRUE(t.tried) << t.name;
    if (t.accepted) {
      EXPECT_GT(t.ms_per_item, 0) << t.name;
    }
  }
}

TEST(ExecutionVariantsTest, ModelsWithoutImageInputsSkipChannelsLast) {
  SKIP_WITHOUT_TEST_STORE();
  auto model = LoadOrDie(TestLoadOptions("two_io"));
  ASSERT_NE(model, nullptr);
  const ExecutionReport report = model->execution_report();
  const auto* cl = Find(report, "channels_last");
  ASSERT_NE(cl, nullptr);
  EXPECT_FALSE(cl->tried);
  EXPECT_THAT(cl->note, HasSubstr("not applicable"));
}

}  // namespace
}  // namespace inferd::backend
