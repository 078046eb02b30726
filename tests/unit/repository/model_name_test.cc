#include "repository/model_name.h"

#include <gtest/gtest.h>

namespace inferd::repository {
namespace {

TEST(ModelName, AcceptsFolderNames) {
  for (const std::string& name :
       std::vector<std::string>{"resnet18", "m0001", "bert-base.v2", "My Model", "caf\xc3\xa9",
                                "\xe6\xa8\xa1\xe5\x9e\x8b", "emoji\xf0\x9f\x98\x80", ".hidden",
                                "a..b", std::string(255, 'x')}) {
    EXPECT_TRUE(ValidateModelName(name).ok()) << name << ": " << ValidateModelName(name).message();
  }
}

TEST(ModelName, RefusesWhatCannotBeOneFolderOfTheStore) {
  struct Case {
    std::string name;
    std::string why;
  };
  const Case cases[] = {
      {"", "empty"},
      {".", "'.' and '..'"},
      {"..", "'.' and '..'"},
      {"../etc", "path separator"},
      {"a/b", "path separator"},
      {"a\\b", "path separator"},
      {std::string("a\0b", 3), "NUL byte"},
      {"tab\there", "control character"},
      {"new\nline", "control character"},
      {"del\x7f", "control character"},
      {"c1\xc2\x85", "control character"},
      {std::string(256, 'x'), "256 bytes long"},
      {"\xff", "not valid UTF-8 (at byte 0)"},
      {"ok\xc3", "not valid UTF-8 (at byte 2)"},  // truncated sequence
      {"\xc0\xaf", "not valid UTF-8"},            // overlong '/'
      {"\xe0\x80\xaf", "not valid UTF-8"},        // overlong, 3 bytes
      {"\xed\xa0\x80", "not valid UTF-8"},        // UTF-16 surrogate
      {"\xf4\x90\x80\x80", "not valid UTF-8"},    // past U+10FFFF
      {"\x80start", "not valid UTF-8"},           // lone continuation byte
  };
  for (const auto& c : cases) {
    Status st = ValidateModelName(c.name);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << ::testing::PrintToString(c.name);
    EXPECT_NE(st.message().find(c.why), std::string::npos)
        << ::testing::PrintToString(c.name) << ": " << st.message();
  }
}

TEST(ModelName, MessagesShowTheNameEscapedAndShort) {
  Status st = ValidateModelName(std::string("a\0b\xff", 4));
  EXPECT_NE(st.message().find("'a\\x00b\\xFF'"), std::string::npos) << st.message();
  Status long_name = ValidateModelName(std::string(5000, 'n'));
  EXPECT_LT(long_name.message().size(), 300u);
  EXPECT_EQ(EscapeForMessage("abc", 2), "ab...");
}

}  // namespace
}  // namespace inferd::repository
