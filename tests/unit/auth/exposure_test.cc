#include "auth/exposure.h"

#include <gtest/gtest.h>

namespace inferd::auth {
namespace {

TEST(ExposureTest, LoopbackNeedsNoKeys) {
  EXPECT_TRUE(CheckExposure("127.0.0.1", false, false).ok());
  EXPECT_TRUE(CheckExposure("127.0.0.2", false, false).ok());
  EXPECT_TRUE(CheckExposure("::1", false, false).ok());
}

TEST(ExposureTest, OtherAddressesNeedKeysOrTheFlag) {
  for (const char* bind : {"0.0.0.0", "::", "10.1.2.3", "192.168.0.1", "not-an-address"}) {
    Status s = CheckExposure(bind, false, false);
    ASSERT_FALSE(s.ok()) << bind;
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(s.message().find("--auth-keys"), std::string::npos);
    EXPECT_NE(s.message().find("--allow-unauthenticated"), std::string::npos);
    EXPECT_TRUE(CheckExposure(bind, true, false).ok());
    EXPECT_TRUE(CheckExposure(bind, false, true).ok());
  }
}

}  // namespace
}  // namespace inferd::auth
