#include "auth/key_set.h"

#include <gtest/gtest.h>

namespace inferd::auth {
namespace {

constexpr char kInfer[] = "infer-key-0123456789";
constexpr char kManage[] = "manage-key-0123456789";
constexpr char kMetrics[] = "metrics-key-0123456789";

KeySet MustParse(const std::string& yaml) {
  auto set = KeySet::Parse(yaml, "keys.yaml");
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? std::move(*set) : KeySet();
}

std::string Bearer(const std::string& key) { return "Bearer " + key; }

TEST(BearerTokenTest, TakesTheTokenOfTheBearerScheme) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer abc"), "abc");
  EXPECT_EQ(BearerToken("BEARER   abc==  "), "abc==");
  EXPECT_EQ(BearerToken(" \tBearer\tA-._~+/9"), "A-._~+/9");
}

TEST(BearerTokenTest, RefusesOtherSchemesAndMalformedTokens) {
  EXPECT_EQ(BearerToken(""), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_EQ(BearerToken("Bearer "), "");
  EXPECT_EQ(BearerToken("Basic dXNlcjpwYXNz"), "");
  EXPECT_EQ(BearerToken("Bearerabc"), "");
  EXPECT_EQ(BearerToken("Bearer a b"), "");
  EXPECT_EQ(BearerToken("Bearer =abc"), "");
  EXPECT_EQ(BearerToken("Bearer ab=c"), "");
  EXPECT_EQ(BearerToken("Bearer ab\"c"), "");
  EXPECT_EQ(BearerToken(std::string_view("Bearer ab\0c", 11)), "");
}

TEST(KeySetTest, EachKindOpensItsRoutes) {
  KeySet keys = MustParse(std::string("inference: [") + kInfer + "]\nmanagement: [" + kManage +
                          "]\nmetrics: [" + kMetrics + "]\n");
  EXPECT_EQ(keys.count(Kind::kInference), 1u);
  EXPECT_EQ(keys.count(Kind::kManagement), 1u);
  EXPECT_TRUE(keys.metrics_protected());

  EXPECT_EQ(keys.Authorize(Kind::kInference, Bearer(kInfer)), Decision::kAllow);
  EXPECT_EQ(keys.Authorize(Kind::kManagement, Bearer(kInfer)), Decision::kForbidden);
  EXPECT_EQ(keys.Authorize(Kind::kMetrics, Bearer(kInfer)), Decision::kForbidden);

  // A management key may also call inference and read the metrics.
  EXPECT_EQ(keys.Authorize(Kind::kInference, Bearer(kManage)), Decision::kAllow);
  EXPECT_EQ(keys.Authorize(Kind::kManagement, Bearer(kManage)), Decision::kAllow);
  EXPECT_EQ(keys.Authorize(Kind::kMetrics, Bearer(kManage)), Decision::kAllow);

  EXPECT_EQ(keys.Authorize(Kind::kMetrics, Bearer(kMetrics)), Decision::kAllow);
  EXPECT_EQ(keys.Authorize(Kind::kInference, Bearer(kMetrics)), Decision::kForbidden);
  EXPECT_EQ(keys.Authorize(Kind::kManagement, Bearer(kMetrics)), Decision::kForbidden);
}

TEST(KeySetTest, UnknownMissingOrMalformedKeysAreUnauthenticated) {
  KeySet keys = MustParse(std::string("inference: [") + kInfer + "]\n");
  EXPECT_FALSE(keys.metrics_protected());
  for (std::string header :
       {std::string(""), std::string("Bearer"), std::string(kInfer), "Basic " + std::string(kInfer),
        Bearer("infer-key-012345678"),     // a prefix
        Bearer("infer-key-01234567890"),   // one more character
        Bearer("infer-key-012345678X"),    // the last character differs
        Bearer("Infer-key-0123456789"),    // keys are case-sensitive
        Bearer(std::string(5000, 'a'))}) {
    EXPECT_EQ(keys.Authorize(Kind::kInference, header), Decision::kUnauthenticated) << header;
  }
}

TEST(KeySetTest, SeveralKeysOfAKindAreValidAtOnce) {
  KeySet keys = MustParse("inference:\n  - old-key-0123456789abc\n  - new-key-0123456789abc\n");
  EXPECT_EQ(keys.count(Kind::kInference), 2u);
  EXPECT_EQ(keys.Authorize(Kind::kInference, Bearer("old-key-0123456789abc")), Decision::kAllow);
  EXPECT_EQ(keys.Authorize(Kind::kInference, Bearer("new-key-0123456789abc")), Decision::kAllow);
}

TEST(KeySetTest, AKeyInTwoListsHasBothKinds) {
  KeySet keys = MustParse(std::string("inference: [") + kInfer + "]\nmetrics: [" + kInfer + "]\n");
  EXPECT_EQ(keys.Authorize(Kind::kMetrics, Bearer(kInfer)), Decision::kAllow);
  EXPECT_EQ(keys.Authorize(Kind::kInference, Bearer(kInfer)), Decision::kAllow);
}

TEST(KeySetTest, BadFilesSayWhatIsWrongWithoutQuotingKeys) {
  const std::string secret = "short-secret";  // under 16 characters
  struct Case {
    std::string yaml, expect;
  } cases[] = {
      {"inference: [", "not valid YAML"},
      {"- a\n- b\n", "expected a map"},
      {"inference: [" + std::string(kInfer) + "]\nmanagment: []\n", "unknown field 'managment'"},
      {"inference: " + std::string(kInfer) + "\n", "inference must be a list"},
      {"inference: [{a: 1}]\n", "inference[0] is not a string"},
      {"inference: [" + std::string(kInfer) + ", " + secret + "]\n", "inference[1]: a key must be"},
      {"management: [\"" + std::string(kManage) + " x\"]\n", "management[0]: a key must be"},
      {"metrics: [" + std::string(kMetrics) + "]\n", "no inference or management keys"},
      {"", "expected a map"},
  };
  for (const auto& c : cases) {
    auto set = KeySet::Parse(c.yaml, "keys.yaml");
    ASSERT_FALSE(set.ok()) << c.yaml;
    EXPECT_NE(set.status().message().find(c.expect), std::string::npos) << set.status().message();
    EXPECT_NE(set.status().message().find("keys.yaml"), std::string::npos);
    EXPECT_EQ(set.status().message().find(secret), std::string::npos);
    EXPECT_EQ(set.status().message().find(kManage), std::string::npos);
  }
}

}  // namespace
}  // namespace inferd::auth
