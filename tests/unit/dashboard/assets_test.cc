#include "dashboard/assets.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace inferd::dashboard {
namespace {

TEST(Assets, ThePageIsEmbeddedWithItsTypes) {
  Asset html = FindAsset("dashboard.html");
  EXPECT_NE(std::string(html.body).find("<title>inferd dashboard</title>"), std::string::npos);
  EXPECT_EQ(html.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(FindAsset("dashboard.css").content_type, "text/css; charset=utf-8");
  EXPECT_EQ(FindAsset("dashboard.js").content_type, "text/javascript; charset=utf-8");
  EXPECT_FALSE(FindAsset("dashboard.js").body.empty());
  EXPECT_TRUE(FindAsset("other.js").body.empty());
}

// The page must work offline: no URL of another origin in any asset (the SVG
// namespace is a name, never fetched).
TEST(Assets, NameNoOtherOrigin) {
  const std::regex url(R"((https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,})");
  for (const char* name : {"dashboard.html", "dashboard.css", "dashboard.js"}) {
    std::string body(FindAsset(name).body);
    for (std::sregex_iterator it(body.begin(), body.end(), url), end; it != end; ++it) {
      EXPECT_EQ(it->str(), "http://www.w3.org") << name;
    }
  }
}

}  // namespace
}  // namespace inferd::dashboard
