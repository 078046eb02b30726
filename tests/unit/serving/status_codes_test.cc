#include "serving/status_codes.h"

#include <gtest/gtest.h>

namespace inferd::serving {
namespace {

TEST(StatusCodes, HttpStatusForEveryCode) {
  EXPECT_EQ(HttpStatusFor(StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kPayloadTooLarge), 413);
  EXPECT_EQ(HttpStatusFor(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInternal), 500);
  EXPECT_EQ(HttpStatusFor(StatusCode::kCancelled), 499);
}

TEST(StatusCodes, GrpcCodeForEveryCode) {
  // The canonical numbers of google.rpc.Code.
  EXPECT_EQ(static_cast<int>(GrpcCodeFor(StatusCode::kOk)), 0);
  EXPECT_EQ(static_cast<int>(GrpcCodeFor(StatusCode::kCancelled)), 1);
  EXPECT_EQ(static_cast<int>(GrpcCodeFor(StatusCode::kInvalidArgument)), 3);
  EXPECT_EQ(static_cast<int>(GrpcCodeFor(StatusCode::kDeadlineExceeded)), 4);
  EXPECT_EQ(static_cast<int>(GrpcCodeFor(StatusCode::kNotFound)), 5);
  EXPECT_EQ(static_cast<int>(GrpcCodeFor(StatusCode::kResourceExhausted)), 8);
  EXPECT_EQ(static_cast<int>(GrpcCodeFor(StatusCode::kFailedPrecondition)), 9);
  EXPECT_EQ(static_cast<int>(GrpcCodeFor(StatusCode::kInternal)), 13);
  EXPECT_EQ(static_cast<int>(GrpcCodeFor(StatusCode::kUnavailable)), 14);
  // An oversized payload is the client's error, not a full queue to retry.
  EXPECT_EQ(GrpcCodeFor(StatusCode::kPayloadTooLarge), GrpcCode::kInvalidArgument);
}

}  // namespace
}  // namespace inferd::serving
