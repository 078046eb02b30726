// Config integers are read with range checks: a value that does not fit the
// field is an error naming the key and the range, never silently truncated
// (2^32 + 4 used to become a max_batch_size of 4).
#include <gtest/gtest.h>

#include "config/model_config.h"

namespace inferd::config {
namespace {

const std::string kInputs = "inputs: [{name: x, datatype: FP32, shape: [2]}]\n";

void ExpectRangeError(const std::string& yaml, const std::string& says) {
  auto c = ParseModelConfig(yaml, "m/config.yaml", "m");
  ASSERT_FALSE(c.ok()) << yaml;
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(says), std::string::npos) << c.status().message();
}

TEST(ConfigRangesTest, IntegersPastTheirFieldAreErrorsNotTruncated) {
  ExpectRangeError(kInputs + "max_batch_size: 4294967300",
                   "m/config.yaml: max_batch_size: expected an integer from 1 to 2147483647, got "
                   "'4294967300'");
  ExpectRangeError(kInputs + "max_queue_size: 2147483648",
                   "max_queue_size: expected an integer from 1");
  ExpectRangeError(kInputs + "max_batch_size: 99999999999999999999", "max_batch_size: expected");
  ExpectRangeError(kInputs + "instances: {count: 4294967297, threads: 1}", "instances");
  ExpectRangeError(kInputs + "postprocess: {kind: topk, k: 4294967296}", "postprocess.k");
  ExpectRangeError(kInputs + "preprocess: {kind: text, max_length: -4294967295}",
                   "preprocess.max_length");
}

TEST(ConfigRangesTest, TimesAndSizesHaveUpperBounds) {
  ExpectRangeError(kInputs + "request_timeout_ms: 9223372036854775807",
                   "request_timeout_ms: expected an integer from 1 to 86400000");
  ExpectRangeError(kInputs + "dynamic_batching: {max_queue_delay_us: 60000001}",
                   "max_queue_delay_us: expected an integer from 0 to 60000000");
  ExpectRangeError(kInputs + "preprocess: {kind: image, resize: 65536}",
                   "preprocess.resize: expected an integer from 0 to 65535");
  ExpectRangeError("inputs: [{name: x, datatype: FP32, shape: [1048576, 1048577]}]",
                   "inputs[0].shape: expected dimensions whose product is at most 2^40");
  auto ok = ParseModelConfig(kInputs + "max_batch_size: 2147483647\nrequest_timeout_ms: 86400000\n",
                             "m/config.yaml", "m");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->max_batch_size, 2147483647);
}

}  // namespace
}  // namespace inferd::config
