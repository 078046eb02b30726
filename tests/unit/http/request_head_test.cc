// The conversion of a request's head: X-Request-Timeout-Ms is parsed once,
// here, for every route that reads it.
#include "http/request_head.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace inferd::http {
namespace {

namespace bhttp = boost::beast::http;

const TimePoint kReceived = TimePoint() + std::chrono::seconds(100);

BeastRequest Post(const char* timeout) {
  BeastRequest m{bhttp::verb::post, "/predictions/m?x=1", 11};
  if (timeout) m.set("X-Request-Timeout-Ms", timeout);
  m.body() = "{}";
  return m;
}

TEST(RequestHead, NoTimeoutHeaderNoDeadline) {
  HttpRequest r = ToHttpRequest(Post(nullptr), kReceived);
  EXPECT_FALSE(r.timeout_deadline.has_value());
  EXPECT_EQ(r.path, "/predictions/m");
  EXPECT_EQ(r.query.at("x"), "1");
  EXPECT_EQ(r.received, kReceived);
}

TEST(RequestHead, AValidTimeoutIsADeadlineAfterTheRequestWasRead) {
  HttpRequest r = ToHttpRequest(Post("250"), kReceived);
  ASSERT_TRUE(r.timeout_deadline.has_value());
  ASSERT_TRUE(r.timeout_deadline->ok());
  EXPECT_EQ(**r.timeout_deadline, kReceived + std::chrono::milliseconds(250));
}

TEST(RequestHead, AMalformedTimeoutIsKeptAsItsError) {
  for (const char* bad : {"", "0", "-5", "1.5", "12ms", "99999999999999999999999"}) {
    HttpRequest r = ToHttpRequest(Post(bad), kReceived);
    ASSERT_TRUE(r.timeout_deadline.has_value()) << bad;
    ASSERT_FALSE(r.timeout_deadline->ok()) << bad;
    EXPECT_EQ(r.timeout_deadline->status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.timeout_deadline->status().message().find("X-Request-Timeout-Ms"),
              std::string::npos);
  }
}

TEST(RequestHead, AHugeTimeoutSaturatesInsteadOfWrapping) {
  auto deadline = ParseRequestTimeout(std::to_string(INT64_MAX), kReceived);
  ASSERT_TRUE(deadline.ok());
  EXPECT_GT(*deadline, kReceived);
}

}  // namespace
}  // namespace inferd::http
