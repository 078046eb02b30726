#include "http/v2_codec.h"

#include <gtest/gtest.h>

#include <cstring>

#include "http/json_body.h"

namespace inferd::http {
namespace {

std::shared_ptr<std::string> Body(std::string text) {
  auto body = std::make_shared<std::string>(std::move(text));
  ReservePadding(*body);
  return body;
}

StatusOr<V2InferRequest> Parse(std::string text) {
  return ParseV2InferRequest(Body(std::move(text)), std::nullopt);
}

std::string ErrorOf(std::string text) {
  auto r = Parse(std::move(text));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.ok() ? "" : r.status().message();
}

template <typename T>
std::string Raw(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

TEST(V2Parse, ParsesJsonInputsOutputsAndParameters) {
  auto r = Parse(R"({"id":"r1","parameters":{"binary_data_output":true,"priority":2},
    "inputs":[{"name":"a","shape":[1,2],"datatype":"FP32","data":[[1.5,2]]},
              {"name":"b","shape":[1],"datatype":"BYTES","data":["hi"]}],
    "outputs":[{"name":"y","parameters":{"binary_data":false}},{"name":"z"}]})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->id, "r1");
  EXPECT_TRUE(r->binary_data_output);
  EXPECT_EQ(r->priority, 2);
  ASSERT_EQ(r->inputs.size(), 2u);
  EXPECT_EQ(r->inputs[0].name, "a");
  EXPECT_EQ(r->inputs[0].tensor.shape(), (Shape{1, 2}));
  EXPECT_EQ(r->inputs[0].tensor.data_as<float>()[1], 2.0f);
  EXPECT_EQ(r->inputs[1].tensor.dtype(), DataType::kBytes);
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(r->outputs[1].name, "z");
  EXPECT_FALSE(r->outputs[0].binary);
}

TEST(V2Parse, EveryDatatypeParses) {
  for (const char* dtype :
       {"BOOL", "UINT8", "INT8", "INT16", "INT32", "INT64", "FP16", "BF16", "FP32", "FP64"}) {
    auto r = Parse(std::string(R"({"inputs":[{"name":"x","shape":[2],"datatype":")") + dtype +
                   R"(","data":[1,0]}]})");
    ASSERT_TRUE(r.ok()) << dtype << ": " << r.status().ToString();
    EXPECT_EQ(DataTypeName(r->inputs[0].tensor.dtype()), dtype);
    EXPECT_EQ(r->inputs[0].tensor.byte_size(), 2 * DataTypeSize(*ParseDataType(dtype)));
  }
}

TEST(V2Parse, ClearErrors) {
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[1,2,3]}]})"),
            "input 'x': shape [2,2] needs 4 elements, data has 3");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","shape":[1],"datatype":"FLOAT","data":[1]}]})"),
            "input 'x': unknown datatype 'FLOAT'; expected one of BOOL, UINT8, INT8, INT16, "
            "INT32, INT64, FP16, BF16, FP32, FP64, BYTES");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"shape":[1],"datatype":"FP32","data":[1]}]})"),
            "inputs[0]: missing 'name' (a string)");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","datatype":"FP32","data":[1]}]})"),
            "input 'x': missing 'shape'");
  EXPECT_NE(ErrorOf(R"({"inputs":[{"name":"x","shape":[1],"data":[1]}]})")
                .find("input 'x': missing 'datatype'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32"}]})")
                .find("input 'x': missing 'data'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"inputs":[{"name":"x","shape":[-1],"datatype":"FP32","data":[]}]})")
                .find("non-negative integers"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(
          R"({"inputs":[{"name":"x","shape":[1099511627776,1048576],"datatype":"FP32","data":[]}]})")
          .find("is too large (more than 2^40 elements)"),
      std::string::npos);
  EXPECT_EQ(
      ErrorOf(R"({"inputs":[{"name":"x","shape":[1000000000000],"datatype":"FP32","data":[1]}]})"),
      "input 'x': shape [1000000000000] needs 1000000000000 elements, data has 1");
  EXPECT_EQ(ErrorOf(R"({"outputs":[]})"), "request: missing 'inputs' (a list)");
  EXPECT_EQ(ErrorOf(R"({"inputs":[]})"), "request: 'inputs' is empty");
  EXPECT_EQ(ErrorOf("[1]"), "request: expected a JSON object, got a list");
  EXPECT_EQ(ErrorOf(R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]},
                                   {"name":"x","shape":[1],"datatype":"FP32","data":[1]}]})"),
            "input 'x' appears more than once");
  EXPECT_NE(ErrorOf(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT8","data":[1000]}]})")
                .find("input 'x': element 0: expected an integer in [-128, 127] for INT8"),
            std::string::npos);
}

TEST(V2Parse, LargeDocumentsGetTheirOwnParser) {
  const size_t n = (kLargeJsonBytes / 2) + 1000;  // "0," per element: past the threshold
  std::string data;
  data.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) data += i + 1 < n ? "0," : "1";
  std::string text = R"({"inputs":[{"name":"x","shape":[1,)" + std::to_string(n) +
                     R"(],"datatype":"INT8","data":[)" + data + "]}]}";
  ASSERT_GE(text.size(), kLargeJsonBytes);
  auto r = Parse(text);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->inputs[0].tensor.byte_size(), n);
  EXPECT_EQ(r->inputs[0].tensor.data_as<int8_t>()[n - 1], 1);
  // The thread's small-document parser still works afterwards.
  EXPECT_TRUE(Parse(R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT8","data":[2]}]})").ok());
}

TEST(V2Parse, MalformedJsonSaysSo) {
  std::string msg = ErrorOf(R"({"inputs":[{"name":"x",)");
  EXPECT_EQ(msg.rfind("malformed JSON in request body: ", 0), 0u) << msg;
  EXPECT_EQ(ErrorOf(""), "malformed JSON in request body: the body is empty");
}

TEST(V2Binary, BorrowsAlignedInputsFromTheBody) {
  std::string json =
      R"({"inputs":[{"name":"a","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}},)"
      R"({"name":"b","shape":[1],"datatype":"INT64","data":[7]},)"
      R"({"name":"c","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":7}}]})";
  while (json.size() % 8) json += ' ';  // JSON whitespace: the binary part starts aligned
  std::string bytes_elem("\x03\0\0\0abc", 7);
  auto body = Body(json + Raw<float>({1.5f, -2.0f}) + bytes_elem);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(body->data()) % 8, 0u);
  auto r = ParseV2InferRequest(body, std::to_string(json.size()));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& a = r->inputs[0].tensor;
  EXPECT_EQ(reinterpret_cast<const char*>(a.data()), body->data() + json.size());  // no copy
  EXPECT_EQ(a.data_as<float>()[1], -2.0f);
  EXPECT_EQ(r->inputs[1].tensor.data_as<int64_t>()[0], 7);
  EXPECT_EQ(r->inputs[2].tensor.byte_size(), 7u);
}

TEST(V2Binary, CopiesMisalignedInputs) {
  std::string json =
      R"({"inputs":[{"name":"a","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}}]})";
  while (json.size() % 4 != 1) json += ' ';
  auto body = Body(json + Raw<float>({1.5f, -2.0f}));
  auto r = ParseV2InferRequest(body, std::to_string(json.size()));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& a = r->inputs[0].tensor;
  EXPECT_NE(reinterpret_cast<const char*>(a.data()), body->data() + json.size());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % alignof(float), 0u);
  EXPECT_EQ(a.data_as<float>()[0], 1.5f);
  EXPECT_EQ(a.data_as<float>()[1], -2.0f);
}

TEST(V2Binary, SizesThatDontAddUp) {
  std::string json =
      R"({"inputs":[{"name":"a","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}}]})";
  auto extra = ParseV2InferRequest(Body(json + Raw<float>({1, 2, 3})), std::to_string(json.size()));
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.status().message(),
            "binary tensor data: the inputs' binary_data_size add up to 8 bytes but 12 bytes "
            "follow the JSON header (Inference-Header-Content-Length " +
                std::to_string(json.size()) + ")");
  std::string json3 =
      R"({"inputs":[{"name":"a","shape":[3],"datatype":"FP32","parameters":{"binary_data_size":8}}]})";
  auto wrong = ParseV2InferRequest(Body(json3 + Raw<float>({1, 2})), std::to_string(json3.size()));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(),
            "input 'a': binary_data_size is 8 bytes but shape [3] of FP32 needs 12");
  auto no_header = ParseV2InferRequest(Body(json), std::nullopt);
  EXPECT_NE(no_header.status().message().find("no Inference-Header-Content-Length"),
            std::string::npos);
  auto bad_header = ParseV2InferRequest(Body(json), std::string("99999"));
  EXPECT_NE(bad_header.status().message().find("Inference-Header-Content-Length: expected an "
                                               "integer <= the body size"),
            std::string::npos);
  EXPECT_FALSE(ParseV2InferRequest(Body(json), std::string("12x")).ok());
  std::string jsonb =
      R"({"inputs":[{"name":"s","shape":[2],"datatype":"BYTES","parameters":{"binary_data_size":6}}]})";
  auto bytes = ParseV2InferRequest(Body(jsonb + std::string("\x02\0\0\0ab", 6)),
                                   std::to_string(jsonb.size()));
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().message(), "input 's': expected 2 BYTES elements, got 1");
}

scheduler::InferenceResponse TwoOutputs() {
  scheduler::InferenceResponse resp;
  Tensor y = Tensor::Allocate(DataType::kFp32, {2, 2});
  float* p = y.mutable_data_as<float>();
  p[0] = 0.1f;
  p[1] = -1;
  p[2] = 3.5f;
  p[3] = 1e-8f;
  Tensor z = Tensor::Allocate(DataType::kInt64, {2});
  z.mutable_data_as<int64_t>()[0] = 4;
  z.mutable_data_as<int64_t>()[1] = -9;
  resp.outputs = {{"y", y}, {"z", z}};
  return resp;
}

TEST(V2Response, WritesJsonOutputs) {
  V2ResponseContext ctx{"m", 3, "r1", {}, false};
  auto r = WriteV2InferResponse(TwoOutputs(), ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content_type, "application/json");
  EXPECT_TRUE(r->headers.empty());
  EXPECT_EQ(r->body, R"({"model_name":"m","model_version":"3","id":"r1","outputs":[)"
                     R"({"name":"y","datatype":"FP32","shape":[2,2],"data":[0.1,-1,3.5,1e-08]},)"
                     R"({"name":"z","datatype":"INT64","shape":[2],"data":[4,-9]}]})");
}

TEST(V2Response, RequestedBinaryOutputFollowsTheJson) {
  V2ResponseContext ctx{"m", 1, "", {{"z", true}}, false};
  auto r = WriteV2InferResponse(TwoOutputs(), ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content_type, "application/octet-stream");
  ASSERT_EQ(r->headers.size(), 1u);
  EXPECT_EQ(r->headers[0].first, "Inference-Header-Content-Length");
  size_t json_size = std::stoul(r->headers[0].second);
  std::string json = r->body.substr(0, json_size);
  EXPECT_EQ(json, R"({"model_name":"m","model_version":"1","outputs":[{"name":"z","datatype":)"
                  R"("INT64","shape":[2],"parameters":{"binary_data_size":16}}]})");
  ASSERT_EQ(r->body.size(), json_size + 16);
  int64_t z[2];
  std::memcpy(z, r->body.data() + json_size, 16);
  EXPECT_EQ(z[0], 4);
  EXPECT_EQ(z[1], -9);
}

TEST(V2Response, BinaryDataOutputMakesAllBinaryAndRoundtripsAsARequest) {
  V2ResponseContext ctx{"m", 1, "", {}, true};
  auto r = WriteV2InferResponse(TwoOutputs(), ctx);
  ASSERT_TRUE(r.ok());
  // The response's framing is the request's: parse it back as one.
  std::string text = r->body;
  size_t json_size = std::stoul(r->headers[0].second);
  std::string json = text.substr(0, json_size);
  std::string as_request = json;
  as_request.replace(as_request.find("\"outputs\""), 9, "\"inputs\"");
  auto back = ParseV2InferRequest(Body(as_request + text.substr(json_size)),
                                  std::to_string(as_request.size()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->inputs[0].tensor.shape(), (Shape{2, 2}));
  EXPECT_EQ(back->inputs[0].tensor.data_as<float>()[3], 1e-8f);
  EXPECT_EQ(back->inputs[1].tensor.data_as<int64_t>()[1], -9);
}

TEST(V2Response, UnknownRequestedOutputIsAnError) {
  V2ResponseContext ctx{"m", 1, "", {{"nope", false}}, false};
  auto r = WriteV2InferResponse(TwoOutputs(), ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "unknown output 'nope'; model 'm' has outputs: y, z");
}

TEST(V2Response, LabelsBecomeTensors) {
  scheduler::InferenceResponse resp;
  resp.labels = {{{"cat", 0.75f}, {"dog", 0.25f}}, {{"cow", 1.0f}}};
  auto tensors = V2OutputTensors(resp);
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0].name, "labels");
  EXPECT_EQ(tensors[0].tensor.shape(), (Shape{2, 2}));
  EXPECT_EQ(tensors[1].name, "scores");
  EXPECT_EQ(tensors[1].tensor.data_as<float>()[1], 0.25f);
  EXPECT_EQ(tensors[1].tensor.data_as<float>()[3], 0.0f);  // padding
  V2ResponseContext ctx{"m", 1, "", {{"labels", false}}, false};
  auto r = WriteV2InferResponse(resp, ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->body.find(R"("data":["cat","dog","cow",""])"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace inferd::http
