#include "bench/grpc_request.h"

#include <grpcpp/support/status.h>
#include <gtest/gtest.h>

#include "bench/grpc_connection.h"
#include "bench/step_result.h"
#include "grpc_predict_v2.pb.h"

namespace inferd::bench {
namespace {

BenchOptions GrpcOptions(RequestForm form) {
  BenchOptions o;
  o.protocol = Protocol::kGrpc;
  o.url = "grpc://127.0.0.1:8001";
  o.model = "m";
  o.version = "2";
  o.form = form;
  o.input = "x";
  return o;
}

TEST(GrpcRequest, V2BinaryBodyBecomesRawInputContents) {
  std::string head =
      R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}},)"
      R"({"name":"b","datatype":"INT8","shape":[1,1],"parameters":{"binary_data_size":1}}],)"
      R"("outputs":[{"name":"y"}]})";
  std::string body = head + std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8) + "\x09";
  auto bytes = PrepareGrpcRequest(GrpcOptions(RequestForm::kV2Binary), "f", body);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  inference::ModelInferRequest req;
  ASSERT_TRUE(req.ParseFromString(*bytes));
  EXPECT_EQ(req.model_name(), "m");
  EXPECT_EQ(req.model_version(), "2");
  ASSERT_EQ(req.inputs_size(), 2);
  EXPECT_EQ(req.inputs(0).datatype(), "FP32");
  EXPECT_EQ(req.inputs(0).shape(1), 2);
  ASSERT_EQ(req.raw_input_contents_size(), 2);
  EXPECT_EQ(req.raw_input_contents(0).size(), 8u);
  EXPECT_EQ(req.raw_input_contents(1), "\x09");
  ASSERT_EQ(req.outputs_size(), 1);
  EXPECT_EQ(req.outputs(0).name(), "y");
}

TEST(GrpcRequest, SizesMustAddUp) {
  std::string head =
      R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}]})";
  auto extra = PrepareGrpcRequest(GrpcOptions(RequestForm::kV2Binary), "f", head + "12345");
  EXPECT_EQ(extra.status().message(),
            "--input 'f': 1 bytes after the inputs' binary_data_size add up");
  auto short_body = PrepareGrpcRequest(GrpcOptions(RequestForm::kV2Binary), "f", head + "12");
  EXPECT_FALSE(short_body.ok());
}

TEST(GrpcRequest, RawFileIsOneBytesElement) {
  auto bytes = PrepareGrpcRequest(GrpcOptions(RequestForm::kRaw), "cat.jpg", "JPEG");
  ASSERT_TRUE(bytes.ok());
  inference::ModelInferRequest req;
  ASSERT_TRUE(req.ParseFromString(*bytes));
  EXPECT_EQ(req.inputs(0).datatype(), "BYTES");
  EXPECT_EQ(req.raw_input_contents(0), std::string("\x04\0\0\0JPEG", 8));
}

TEST(GrpcOptions, UrlAndFormMustSuitTheProtocol) {
  EXPECT_TRUE(ValidateOptions(GrpcOptions(RequestForm::kV2Binary)).ok());
  auto url = ParseUrl("grpc://10.0.0.1");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->scheme, "grpc");
  EXPECT_EQ(url->port, "8001");
  BenchOptions http_url = GrpcOptions(RequestForm::kV2Binary);
  http_url.url = "http://127.0.0.1:8001";
  EXPECT_FALSE(ValidateOptions(http_url).ok());
  EXPECT_FALSE(ValidateOptions(GrpcOptions(RequestForm::kV2Json)).ok());
}

TEST(GrpcConnection, StatusesAreReportedAsTheirHttpEquivalents) {
  EXPECT_EQ(SampleStatusFor(::grpc::Status::OK), 200);
  EXPECT_EQ(SampleStatusFor(::grpc::Status(::grpc::StatusCode::RESOURCE_EXHAUSTED, "")), 429);
  EXPECT_EQ(SampleStatusFor(::grpc::Status(::grpc::StatusCode::UNAVAILABLE, "")), 503);
  EXPECT_EQ(SampleStatusFor(::grpc::Status(::grpc::StatusCode::DEADLINE_EXCEEDED, "")), kTimeout);
  EXPECT_EQ(SampleStatusFor(::grpc::Status(::grpc::StatusCode::NOT_FOUND, "")), 404);
}

}  // namespace
}  // namespace inferd::bench
