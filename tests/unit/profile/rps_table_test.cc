#include "profile/rps_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd::profile {
namespace {

using ::testing::HasSubstr;

TEST(RpsTableTest, ReadsNamesAndRatesWithTheirLines) {
  auto t = ParseRpsTable("# peak traffic\nresnet18: 40\nbert: 2.5\n", "rps.yaml");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 2u);
  EXPECT_DOUBLE_EQ(t->at("resnet18").rps, 40);
  EXPECT_EQ(t->at("resnet18").line, 2);
  EXPECT_DOUBLE_EQ(t->at("bert").rps, 2.5);
}

TEST(RpsTableTest, RefusesBadValuesNamingTheLine) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {"a: 1\nb: -3\n", "rps.yaml:2: model 'b': req/s must not be negative"},
      {"a: fast\n", "rps.yaml:1: model 'a': expected a number of req/s, got 'fast'"},
      {"a: [1, 2]\n", "rps.yaml:1: model 'a': expected a number"},
      {"- a\n- b\n", "rps.yaml:1: expected a mapping of model names"},
      {"a: {\n", "rps.yaml:"},
  };
  for (const auto& c : cases) {
    auto t = ParseRpsTable(c.text, "rps.yaml");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(t.status().message(), HasSubstr(c.expected)) << c.text;
  }
}

TEST(RpsTableTest, MissingFileIsNamed) {
  auto t = LoadRpsTable("/nonexistent/rps.yaml");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("/nonexistent/rps.yaml"));
}

}  // namespace
}  // namespace inferd::profile
