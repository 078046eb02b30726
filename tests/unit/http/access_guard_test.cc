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
    EXPECT_FALSE(inference.Check("GET", path, "").has_value()) << path;
  }
  for (const char* path : {"/v2", "/v2/health", "/v2/health/other", "/v2/models/m/infer",
                           "/predictions/m", "/pingx", "/x/ping", "/v2/health/live/x",
                           "/v2/models/m%2finfer", "/%70ing/x"}) {
    auto r = inference.Check("GET", path, "");
    ASSERT_TRUE(r.has_value()) << path;
    EXPECT_EQ(r->status, 401);
  }
  AccessGuard management(&keys, auth::Kind::kManagement);
  EXPECT_TRUE(management.Check("GET", "/ping", "").has_value());
}

TEST(AccessGuardTest, DashboardPageIsOpenOnTheManagementPortOnly) {
  FixedKeys keys;
  AccessGuard management(&keys, auth::Kind::kManagement);
  // The page's own files: no data, so a browser can load them without a key.
  for (const char* path : {"/", "/dashboard", "/dashboard/", "/dashboard?x=1",
                           "/dashboard/dashboard.css", "/dashboard/dashboard.js",
                           "/%64ashboard/dashboard.js"}) {
    EXPECT_FALSE(management.Check("GET", path, "").has_value()) << path;
  }
  // Every data route the page calls, anything else, and any method but GET.
  for (const char* path : {"/dashboard/state", "/dashboard/state?limit=50", "/dashboard/state/",
                           "/%64ashboard/state", "/models", "/models/m", "/dashboard/other.js",
                           "/dashboard//", "//dashboard", "/dashboardx", "/x/dashboard"}) {
    auto r = management.Check("GET", path, "");
    ASSERT_TRUE(r.has_value()) << path;
    EXPECT_EQ(r->status, 401) << path;
  }
  for (const char* method : {"POST", "PUT", "DELETE", "HEAD", "get"}) {
    EXPECT_TRUE(management.Check(method, "/dashboard", "").has_value()) << method;
  }
  auto other = management.Check("GET", "/dashboard/state", "Bearer other");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->status, 403);
  EXPECT_FALSE(management.Check("GET", "/dashboard/state", "Bearer good").has_value());
  // The other ports serve no dashboard: nothing opens there.
  AccessGuard inference(&keys, auth::Kind::kInference);
  for (const char* path : {"/", "/dashboard", "/dashboard/dashboard.js"}) {
    EXPECT_TRUE(inference.Check("GET", path, "").has_value()) << path;
  }
}

TEST(AccessGuardTest, AnswersUnauthenticatedAndForbidden) {
  FixedKeys keys;
  AccessGuard guard(&keys, auth::Kind::kManagement);
  EXPECT_FALSE(guard.Check("GET", "/models", "Bearer good").has_value());
  auto missing = guard.Check("GET", "/models", "Bearer wrong-key");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(Header(*missing, "WWW-Authenticate"), "Bearer realm=\"inferd\"");
  EXPECT_EQ(missing->body.find("wrong-key"), std::string::npos);
  EXPECT_NE(missing->body.find("management key"), std::string::npos);
  auto other = guard.Check("GET", "/models", "Bearer other");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->status, 403);
  EXPECT_EQ(Header(*other, "WWW-Authenticate"), "");
}

TEST(AccessGuardTest, MetricsAreOpenUntilMetricsKeysAreListed) {
  FixedKeys keys;
  AccessGuard guard(&keys, auth::Kind::kMetrics);
  EXPECT_FALSE(guard.Check("GET", "/metrics", "").has_value());
  keys.metrics = true;
  auto r = guard.Check("GET", "/metrics", "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 401);
  EXPECT_FALSE(guard.Check("GET", "/metrics", "Bearer good").has_value());
}

}  // namespace
}  // namespace inferd::http
