#include "plan/model_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd::plan {
namespace {

using ::testing::HasSubstr;

TEST(ParseByteSizeTest, PlainDecimalAndBinarySuffixes) {
  EXPECT_EQ(*ParseByteSize("1234"), 1234);
  EXPECT_EQ(*ParseByteSize("180M"), 180000000);
  EXPECT_EQ(*ParseByteSize("2k"), 2000);
  EXPECT_EQ(*ParseByteSize("512Mi"), 512LL << 20);
  EXPECT_EQ(*ParseByteSize("1.5Gi"), 1610612736);
  EXPECT_EQ(*ParseByteSize("64Gi"), 64LL << 30);
  EXPECT_EQ(*ParseByteSize("1T"), 1000000000000LL);
}

TEST(ParseByteSizeTest, RefusesWhatIsNotAByteCount) {
  for (const char* bad : {"", "M", "12MB", "abc", "-5", "-1Gi", "1e400", "12 M"}) {
    EXPECT_FALSE(ParseByteSize(bad).ok()) << bad;
  }
  EXPECT_THAT(ParseByteSize("12MB").status().message(), HasSubstr("'12MB'"));
}

TEST(FormatByteQuantityTest, LargestExactBinarySuffix) {
  EXPECT_EQ(FormatByteQuantity(512LL << 20), "512Mi");
  EXPECT_EQ(FormatByteQuantity(3LL << 30), "3Gi");
  EXPECT_EQ(FormatByteQuantity(3072), "3Ki");
  EXPECT_EQ(FormatByteQuantity(1536), "1536");
  EXPECT_EQ(FormatByteQuantity(1000), "1000");
}

TEST(ParseModelListTest, ReadsEveryFieldAndLine) {
  auto m = ParseModelList(
      "# fleet\n"
      "models:\n"
      "  - {name: m0001, rps: 40, core_ms: 12.5, memory: 180M}\n"
      "  - name: big\n"
      "    rps: 0\n"
      "    core_ms: 3\n"
      "    memory: 2Gi\n",
      "f.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].name, "m0001");
  EXPECT_DOUBLE_EQ((*m)[0].rps, 40);
  EXPECT_DOUBLE_EQ((*m)[0].core_ms, 12.5);
  EXPECT_EQ((*m)[0].memory_bytes, 180000000);
  EXPECT_DOUBLE_EQ((*m)[0].cores(), 0.5);
  EXPECT_EQ((*m)[0].line, 3);
  EXPECT_EQ((*m)[1].name, "big");
  EXPECT_EQ((*m)[1].memory_bytes, 2LL << 30);
  EXPECT_EQ((*m)[1].line, 4);
}

// Each bad file names the file, the line and what is wrong.
struct BadCase {
  const char* text;
  const char* expect;
};

TEST(ParseModelListTest, BadFilesNameTheLineAndTheReason) {
  const BadCase cases[] = {
      {"models:\n  - {name: a, rps: 1, core_ms: 1, memory: 1M}\n  - {name: b, rps: 1, core_ms: 1, "
       "memory: 1M, gpu: 1}\n",
       "f.yaml:3: model 'b': unknown key 'gpu'"},
      {"models:\n  - {name: a, rps: -3, core_ms: 1, memory: 1M}\n",
       "f.yaml:2: model 'a': rps: must not be negative"},
      {"models:\n  - {name: a, rps: 1, memory: 1M}\n", "f.yaml:2: model 'a': missing `core_ms`"},
      {"models:\n  - {name: a, rps: 1, core_ms: 1}\n", "f.yaml:2: model 'a': missing `memory`"},
      {"models:\n  - {name: a, rps: lots, core_ms: 1, memory: 1M}\n",
       "f.yaml:2: model 'a': rps: expected a number, got 'lots'"},
      {"models:\n  - name: a\n    rps: 1\n    core_ms: 1\n    memory: 9XB\n",
       "f.yaml:5: model 'a': memory: expected a byte count"},
      {"models:\n  - {name: a, rps: 1, core_ms: 1, memory: -1M}\n",
       "f.yaml:2: model 'a': memory: must not be negative"},
      {"models:\n  - {name: a, rps: 1, core_ms: 1, memory: 1M}\n  - {name: a, rps: 1, core_ms: 1, "
       "memory: 1M}\n",
       "f.yaml:3: model 'a' is listed twice"},
      {"models:\n  - {rps: 1, core_ms: 1, memory: 1M}\n", "f.yaml:2: model without a `name`"},
      {"modles:\n  - {name: a, rps: 1, core_ms: 1, memory: 1M}\n",
       "f.yaml:1: unknown key 'modles'"},
      {"models: {name: a}\n", "f.yaml:1: models: expected a list"},
      {"models:\n  - {name: a, rps: [1, core_ms: 1}\n", "f.yaml:2: not valid YAML"},
      {"models: []\n", "the list is empty"},
      {"", "f.yaml:1: expected a mapping with the key `models`"},
  };
  for (const BadCase& c : cases) {
    auto m = ParseModelList(c.text, "f.yaml");
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(m.status().message(), HasSubstr(c.expect)) << c.text;
  }
}

TEST(LoadModelListTest, MissingFileIsNotFound) {
  auto m = LoadModelList("/nonexistent/models.yaml");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace inferd::plan
