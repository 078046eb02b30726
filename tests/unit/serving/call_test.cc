#include "serving/call.h"

#include <gtest/gtest.h>

namespace inferd::serving {
namespace {

TEST(ParseModelVersion, EmptyIsTheDefault) {
  auto v = ParseModelVersion("");
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->has_value());
}

TEST(ParseModelVersion, TakesIntegersAndTorchServesDotZero) {
  EXPECT_EQ(**ParseModelVersion("3"), 3);
  EXPECT_EQ(**ParseModelVersion("2.0"), 2);
}

TEST(ParseModelVersion, RefusesTheRest) {
  for (const char* bad : {"0", "-1", "x", "1.5", "2.0.0", " 1", ".0"}) {
    auto v = ParseModelVersion(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(v.status().message(),
              "model version must be a positive integer, got '" + std::string(bad) + "'");
  }
}

TEST(Protocol, Names) {
  EXPECT_EQ(ProtocolName(Protocol::kHttp), "http");
  EXPECT_EQ(ProtocolName(Protocol::kGrpc), "grpc");
}

}  // namespace
}  // namespace inferd::serving
