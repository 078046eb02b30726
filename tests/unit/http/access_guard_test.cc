#include "http/access_guard.h"

#include <gtest/gtest.h>

namespace inferd::http {
namespace {

// Keys by fixed answer: "Bearer good" allows, "Bearer other" is another kind.
class FixedKeys : public auth::Authorizer {
 public:
  auth::Decision Authorize(auth::Kind, std::string_view header) const override {
    if (header == "Bearer good") return auth::Decision::kAllow;
    if (header == "Bearer other") return auth::Decision::kForbidden;
    return auth::Decision::kUnauthenticated;
  }
  bool metrics_protected() const override { return metrics; }
  bool metrics = false;
};

std::string Header(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(AccessGuardTest, HealthIsOpenOnTheInferencePortOnly) {
  FixedKeys keys;
  AccessGuard inference(&keys, auth::Kind::kInference);
  for (const char* path : {"/ping", "/ping/", "/v2/health/live", "/v2/health/ready",
                           "/v2/health/ready?x=1", "/v2/health/%6cive"}) {
    EXPECT_FALSE(inference.Check(path, "").has_value()) << path;
  }
  for (const char* path : {"/v2", "/v2/health", "/v2/health/other", "/v2/models/m/infer",
                           "/predictions/m", "/pingx", "/x/ping", "/v2/health/live/x",
                           "/v2/models/m%2finfer", "/%70ing/x"}) {
    auto r = inference.Check(path, "");
    ASSERT_TRUE(r.has_value()) << path;
    EXPECT_EQ(r->status, 401);
  }
  AccessGuard management(&keys, auth::Kind::kManagement);
  EXPECT_TRUE(management.Check("/ping", "").has_value());
}

TEST(AccessGuardTest, AnswersUnauthenticatedAndForbidden) {
  FixedKeys keys;
  AccessGuard guard(&keys, auth::Kind::kManagement);
  EXPECT_FALSE(guard.Check("/models", "Bearer good").has_value());
  auto missing = guard.Check("/models", "Bearer wrong-key");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(Header(*missing, "WWW-Authenticate"), "Bearer realm=\"inferd\"");
  EXPECT_EQ(missing->body.find("wrong-key"), std::string::npos);
  EXPECT_NE(missing->body.find("management key"), std::string::npos);
  auto other = guard.Check("/models", "Bearer other");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->status, 403);
  EXPECT_EQ(Header(*other, "WWW-Authenticate"), "");
}

TEST(AccessGuardTest, MetricsAreOpenUntilMetricsKeysAreListed) {
  FixedKeys keys;
  AccessGuard guard(&keys, auth::Kind::kMetrics);
  EXPECT_FALSE(guard.Check("/metrics", "").has_value());
  keys.metrics = true;
  auto r = guard.Check("/metrics", "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 401);
  EXPECT_FALSE(guard.Check("/metrics", "Bearer good").has_value());
}

}  // namespace
}  // namespace inferd::http
