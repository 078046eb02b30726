#include "http/router.h"

#include <gtest/gtest.h>

namespace inferd::http {
namespace {

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tag = [this](std::string name) {
      return [this, name](const HttpRequest&, const PathParams& p, Responder) {
        hit = name;
        params = p;
      };
    };
    router.Add("GET", "/v2/models/{model}/versions/{version}/ready", tag("version_ready"));
    router.Add("GET", "/v2/models/{model}/ready", tag("ready"));
    router.Add("GET", "/v2/models/{model}", tag("meta"));
    router.Add("POST", "/v2/models/{model}/infer", tag("infer"));
    router.Add("GET", "/ping", tag("ping"));
    router.Add("GET", "/", tag("root"));
  }
  HttpResponse Run(std::string method, std::string path) {
    HttpRequest req;
    req.method = std::move(method);
    req.path = std::move(path);
    HttpResponse out;
    out.status = 0;
    router.Dispatch(req, [&](ResponseMaker make) { out = make(); });
    return out;
  }
  Router router;
  std::string hit;
  PathParams params;
};

TEST_F(RouterTest, CapturesParameters) {
  Run("GET", "/v2/models/resnet/versions/3/ready");
  EXPECT_EQ(hit, "version_ready");
  EXPECT_EQ(params.at("model"), "resnet");
  EXPECT_EQ(params.at("version"), "3");
}

TEST_F(RouterTest, PicksByLengthAndLiterals) {
  Run("GET", "/v2/models/resnet/ready");
  EXPECT_EQ(hit, "ready");
  Run("GET", "/v2/models/resnet");
  EXPECT_EQ(hit, "meta");
  EXPECT_EQ(params.at("model"), "resnet");
}

TEST_F(RouterTest, IgnoresTrailingSlashAndMatchesRoot) {
  Run("GET", "/ping/");
  EXPECT_EQ(hit, "ping");
  Run("GET", "/");
  EXPECT_EQ(hit, "root");
}

TEST_F(RouterTest, UnknownPathIs404WithJson) {
  HttpResponse r = Run("GET", "/nope");
  EXPECT_TRUE(hit.empty());
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"error":"no route for GET /nope"})");
}

TEST_F(RouterTest, EmptySegmentDoesNotMatchAParameter) {
  HttpResponse r = Run("GET", "/v2/models//ready");
  EXPECT_TRUE(hit.empty());
  EXPECT_EQ(r.status, 404);
}

TEST_F(RouterTest, WrongMethodIs405WithAllow) {
  HttpResponse r = Run("DELETE", "/v2/models/m/infer");
  EXPECT_TRUE(hit.empty());
  EXPECT_EQ(r.status, 405);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].first, "Allow");
  EXPECT_EQ(r.headers[0].second, "POST");
}

TEST(SplitPath, Splits) {
  EXPECT_EQ(SplitPath("/a/b/"), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(SplitPath("/"), (std::vector<std::string_view>{}));
  EXPECT_EQ(SplitPath("/a//b"), (std::vector<std::string_view>{"a", "", "b"}));
}

}  // namespace
}  // namespace inferd::http
