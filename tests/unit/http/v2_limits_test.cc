// Issue 9's classes in the v2 codec: sizes added without overflow checks,
// shapes whose element count overflows (behind a 0 dim too), numbers out of
// range (priority, timeout, INT64), non-finite floats. Each is a 400 that says
// what was wrong, never a crash, a wrapped size or a 500.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstring>

#include "http/json_body.h"
#include "http/v2_codec.h"

namespace inferd::http {
namespace {

std::shared_ptr<std::string> SharedBody(std::string text) {
  auto body = std::make_shared<std::string>(std::move(text));
  ReservePadding(*body);
  return body;
}

Status ParseStatus(const std::string& json, std::optional<std::string> header = std::nullopt,
                   const std::string& binary = "") {
  auto r = ParseV2InferRequest(SharedBody(json + binary), header);
  return r.ok() ? Status::Ok() : r.status();
}

void ExpectBadRequest(const Status& st, const std::string& says) {
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(says), std::string::npos) << st.message();
}

// Two binary_data_size values whose sum wraps round to the 8 bytes that follow
// the JSON: the old code summed them into a size_t and then read 2^64 bytes.
TEST(V2Limits, BinarySizesThatWrapRoundAreRefused) {
  const std::string json =
      R"({"inputs":[)"
      R"({"name":"a","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":18446744073709551615}},)"
      R"({"name":"b","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":9}}]})";
  const std::string binary(8, '\0');
  ExpectBadRequest(ParseStatus(json, std::to_string(json.size()), binary),
                   "input 'a': binary_data_size 18446744073709551615 is more than the 8 bytes");
}

TEST(V2Limits, ShapesPastTheElementLimitAreRefusedEvenBehindAZero) {
  ExpectBadRequest(
      ParseStatus(R"({"inputs":[{"name":"x","shape":[0,4611686018427387904,4],"datatype":"FP32","data":[]}]})"),
      "input 'x': shape [0,4611686018427387904,4] is too large (more than 2^40 elements in its "
      "non-zero dimensions)");
  ExpectBadRequest(
      ParseStatus(R"({"inputs":[{"name":"x","shape":[4294967296,4294967296],"datatype":"INT8","data":[]}]})"),
      "is too large");
  // A zero dim with small others is fine: an empty tensor.
  auto empty = ParseV2InferRequest(
      SharedBody(R"({"inputs":[{"name":"x","shape":[1,0,3],"datatype":"FP32","data":[]}]})"),
      std::nullopt);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->inputs[0].tensor.byte_size(), 0u);
}

TEST(V2Limits, PriorityMustBeANonNegativeIntegerInRange) {
  const std::string input = R"("inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}])";
  for (const char* bad : {"-1", "1000001", "18446744073709551615", "1.5", "\"2\"", "true"}) {
    ExpectBadRequest(ParseStatus(std::string(R"({"parameters":{"priority":)") + bad + "}," +
                                 input + "}"),
                     "parameters.priority: expected an integer from 0 to 1000000, got");
  }
  auto ok = ParseV2InferRequest(
      SharedBody(std::string(R"({"parameters":{"priority":1000000,"timeout":0},)") + input + "}"),
      std::nullopt);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->priority, 1000000);
}

TEST(V2Limits, TimeoutMustBeANonNegativeInteger) {
  const std::string input = R"("inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}])";
  for (const char* bad : {"-5", "9223372036854775808", "0.5"}) {
    ExpectBadRequest(ParseStatus(std::string(R"({"parameters":{"timeout":)") + bad + "}," +
                                 input + "}"),
                     "parameters.timeout: expected an integer from 0 to 9223372036854775807");
  }
  auto huge = ParseV2InferRequest(
      SharedBody(std::string(R"({"parameters":{"timeout":9223372036854775807},)") + input + "}"),
      std::nullopt);
  ASSERT_TRUE(huge.ok());
  // The deadline saturates instead of wrapping into the past.
  const TimePoint now = Clock::Real()->Now();
  EXPECT_EQ(DeadlineAfter(now, std::chrono::microseconds(huge->timeout_us)), TimePoint::max());
  EXPECT_EQ(DeadlineAfter(now, std::chrono::microseconds(-1)), now);
  EXPECT_EQ(DeadlineAfter(now, std::chrono::microseconds(5)), now + std::chrono::microseconds(5));
}

// 9223372036854775807.0 reads as the double 2^63, one past INT64's range:
// converting it was undefined behaviour (x86 gave INT64_MIN).
TEST(V2Limits, Int64OutOfRangeIsABadRequest) {
  for (const char* bad : {"9223372036854775808", "9223372036854775807.0", "9.3e18", "-9.3e18",
                          "1e300", "18446744073709551616"}) {
    auto st = ParseStatus(std::string(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT64","data":[)") +
                          bad + "]}]}");
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad << ": " << st.ToString();
  }
  auto edge = ParseV2InferRequest(
      SharedBody(
          R"({"inputs":[{"name":"x","shape":[3],"datatype":"INT64","data":[9223372036854775807,-9223372036854775808,-9.2e18]}]})"),
      std::nullopt);
  ASSERT_TRUE(edge.ok()) << edge.status().ToString();
  const int64_t* v = edge->inputs[0].tensor.data_as<int64_t>();
  EXPECT_EQ(v[0], INT64_MAX);
  EXPECT_EQ(v[1], INT64_MIN);
  EXPECT_EQ(v[2], -9200000000000000000);
}

// NaN and infinities leave as strings (valid JSON) and come back in as such.
TEST(V2Limits, NonFiniteFloatsRoundTripAsStrings) {
  auto r = ParseV2InferRequest(
      SharedBody(
          R"({"inputs":[{"name":"x","shape":[4],"datatype":"FP32","data":["NaN","Infinity","-Infinity",1.5]},
                         {"name":"d","shape":[1],"datatype":"FP64","data":["-Infinity"]}]})"),
      std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const float* x = r->inputs[0].tensor.data_as<float>();
  EXPECT_TRUE(std::isnan(x[0]));
  EXPECT_EQ(x[1], INFINITY);
  EXPECT_EQ(x[2], -INFINITY);
  scheduler::InferenceResponse response;
  response.outputs = r->inputs;
  auto written = WriteV2InferResponse(response, V2ResponseContext{"m", 1, "", {}, false});
  ASSERT_TRUE(written.ok());
  EXPECT_NE(written->body.find(R"("data":["NaN","Infinity","-Infinity",1.5])"), std::string::npos)
      << written->body;
  simdjson::dom::parser parser;
  EXPECT_FALSE(parser.parse(written->body).error()) << written->body;
  ExpectBadRequest(
      ParseStatus(R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":["nan"]}]})"),
      R"(element 0: expected a number (or "NaN", "Infinity", "-Infinity") for FP32, got "nan")");
  ExpectBadRequest(
      ParseStatus(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":["NaN"]}]})"),
      "element 0: expected an integer");
}

}  // namespace
}  // namespace inferd::http
