#include "http/status_map.h"

#include <gtest/gtest.h>

namespace inferd::http {
namespace {

// The code -> HTTP status table is serving::HttpStatusFor, re-exported here and
// tested in tests/unit/serving/status_codes_test.cc; this file tests what http adds.
TEST(StatusMap, ErrorResponseIsJsonWithTheMessage) {
  HttpResponse r = ErrorResponse(InvalidArgument("input 'x': expected [3], got [4]"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, R"({"error":"input 'x': expected [3], got [4]"})");
  EXPECT_TRUE(r.headers.empty());
}

TEST(StatusMap, ErrorJsonEscapes) { EXPECT_EQ(ErrorJson("bad \"x\""), R"({"error":"bad \"x\""})"); }

TEST(StatusMap, QueueFullCarriesRetryAfter) {
  HttpResponse r = ErrorResponse(ResourceExhausted("queue full"));
  EXPECT_EQ(r.status, 429);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].first, "Retry-After");
  EXPECT_EQ(r.headers[0].second, "1");
}

}  // namespace
}  // namespace inferd::http
