#include "grpc/infer_codec.h"

#include <gtest/gtest.h>

#include <cstring>

#include "serving/bytes_elements.h"

namespace inferd::grpc {
namespace {

using inference::ModelInferRequest;
using inference::ModelInferResponse;

template <typename T>
std::string Raw(std::vector<T> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

std::shared_ptr<ModelInferRequest> Request() { return std::make_shared<ModelInferRequest>(); }

ModelInferRequest::InferInputTensor* AddInput(ModelInferRequest& r, const std::string& name,
                                              const std::string& datatype, Shape shape) {
  auto* in = r.add_inputs();
  in->set_name(name);
  in->set_datatype(datatype);
  for (int64_t d : shape) in->add_shape(d);
  return in;
}

std::string Parse(const std::shared_ptr<ModelInferRequest>& r) {
  auto parsed = ParseModelInferRequest(r);
  return parsed.ok() ? "ok" : parsed.status().message();
}

TEST(ParseModelInferRequest, RawInputsAreBorrowedWhenAligned) {
  auto r = Request();
  r->set_id("r7");
  AddInput(*r, "x", "FP32", {2, 2});
  r->add_raw_input_contents(Raw<float>({1, 2, 3, 4}));
  auto parsed = ParseModelInferRequest(r);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->id, "r7");
  ASSERT_EQ(parsed->inputs.size(), 1u);
  const Tensor& t = parsed->inputs[0].tensor;
  EXPECT_EQ(t.shape(), (Shape{2, 2}));
  EXPECT_EQ(t.data_as<float>()[3], 4.0f);
  // No copy: the tensor points into the request message.
  EXPECT_EQ(reinterpret_cast<const char*>(t.data()), r->raw_input_contents(0).data());
  // Raw in, raw out.
  EXPECT_TRUE(parsed->binary_data_output);
}

TEST(ParseModelInferRequest, TypedContentsOfEachDatatype) {
  auto r = Request();
  AddInput(*r, "b", "BOOL", {1, 2})->mutable_contents()->add_bool_contents(true);
  r->mutable_inputs(0)->mutable_contents()->add_bool_contents(false);
  AddInput(*r, "i8", "INT8", {1, 1})->mutable_contents()->add_int_contents(-128);
  AddInput(*r, "u8", "UINT8", {1, 1})->mutable_contents()->add_uint_contents(255);
  AddInput(*r, "i64", "INT64", {1, 1})->mutable_contents()->add_int64_contents(-(int64_t{1} << 62));
  AddInput(*r, "f64", "FP64", {1, 1})->mutable_contents()->add_fp64_contents(0.1);
  auto* s = AddInput(*r, "s", "BYTES", {1, 2})->mutable_contents();
  s->add_bytes_contents("ab");
  s->add_bytes_contents("");
  auto parsed = ParseModelInferRequest(r);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_FALSE(parsed->binary_data_output);
  const auto& in = parsed->inputs;
  EXPECT_EQ(in[0].tensor.data_as<bool>()[0], true);
  EXPECT_EQ(in[0].tensor.data_as<bool>()[1], false);
  EXPECT_EQ(in[1].tensor.data_as<int8_t>()[0], -128);
  EXPECT_EQ(in[2].tensor.data_as<uint8_t>()[0], 255);
  EXPECT_EQ(in[3].tensor.data_as<int64_t>()[0], -(int64_t{1} << 62));
  EXPECT_EQ(in[4].tensor.data_as<double>()[0], 0.1);
  auto strings = serving::SplitBytesElements(in[5].tensor.data(), in[5].tensor.byte_size(), 2, "");
  ASSERT_TRUE(strings.ok());
  EXPECT_EQ((*strings)[0], "ab");
}

TEST(ParseModelInferRequest, ParametersAndRequestedOutputs) {
  auto r = Request();
  AddInput(*r, "x", "FP32", {1, 1})->mutable_contents()->add_fp32_contents(1);
  (*r->mutable_parameters())["priority"].set_int64_param(2);
  (*r->mutable_parameters())["timeout"].set_int64_param(1500);
  auto* out = r->add_outputs();
  out->set_name("y");
  (*out->mutable_parameters())["binary_data"].set_bool_param(true);
  auto parsed = ParseModelInferRequest(r);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->priority, 2);
  EXPECT_EQ(parsed->timeout_us, 1500);
  ASSERT_EQ(parsed->outputs.size(), 1u);
  EXPECT_TRUE(parsed->outputs[0].binary);
  (*r->mutable_parameters())["timeout"].set_string_param("soon");
  EXPECT_EQ(Parse(r), "request: parameters.timeout must be an int64_param");
}

TEST(ParseModelInferRequest, ErrorsNameWhatWasWrong) {
  auto empty = Request();
  EXPECT_EQ(Parse(empty), "request: 'inputs' is empty");

  auto dtype = Request();
  AddInput(*dtype, "x", "FP128", {1});
  EXPECT_NE(Parse(dtype).find("input 'x': unknown datatype 'FP128'; expected one of BOOL"),
            std::string::npos);

  auto twice = Request();
  AddInput(*twice, "x", "FP32", {1})->mutable_contents()->add_fp32_contents(1);
  AddInput(*twice, "x", "FP32", {1})->mutable_contents()->add_fp32_contents(1);
  EXPECT_EQ(Parse(twice), "input 'x' appears more than once");

  auto negative = Request();
  AddInput(*negative, "x", "FP32", {1, -2});
  EXPECT_EQ(Parse(negative), "input 'x': 'shape' must hold non-negative integers, got [1,-2]");

  auto range = Request();
  AddInput(*range, "x", "INT8", {1, 2})->mutable_contents()->add_int_contents(1);
  range->mutable_inputs(0)->mutable_contents()->add_int_contents(300);
  EXPECT_EQ(Parse(range),
            "input 'x': element 1: expected an integer in [-128, 127] for INT8, got 300");

  auto count = Request();
  AddInput(*count, "x", "FP32", {1, 3})->mutable_contents()->add_fp32_contents(1);
  EXPECT_EQ(Parse(count),
            "input 'x': expected 3 elements in fp32_contents for FP32 shape [1,3], got 1");

  auto field = Request();
  AddInput(*field, "x", "FP32", {1})->mutable_contents()->add_int_contents(1);
  EXPECT_EQ(Parse(field),
            "input 'x': expected 1 elements in fp32_contents for FP32 shape [1], got 0 (elements "
            "found in int_contents)");

  auto half = Request();
  AddInput(*half, "x", "FP16", {1});
  EXPECT_EQ(Parse(half),
            "input 'x': FP16 has no typed contents field; send it in raw_input_contents");

  auto size = Request();
  AddInput(*size, "x", "FP32", {1, 4});
  size->add_raw_input_contents(Raw<float>({1, 2, 3}));
  EXPECT_EQ(Parse(size),
            "input 'x': raw_input_contents[0] is 12 bytes but shape [1,4] of FP32 needs 16");

  auto fewer = Request();
  AddInput(*fewer, "a", "FP32", {1});
  AddInput(*fewer, "b", "FP32", {1});
  fewer->add_raw_input_contents(Raw<float>({1}));
  EXPECT_EQ(Parse(fewer),
            "request: 2 inputs but 1 raw_input_contents; send one per input, in order");

  auto mixed = Request();
  AddInput(*mixed, "x", "FP32", {1})->mutable_contents()->add_fp32_contents(1);
  mixed->add_raw_input_contents(Raw<float>({1}));
  EXPECT_EQ(Parse(mixed),
            "input 'x': has typed contents but the request uses raw_input_contents; send one or "
            "the other for every input");

  auto bytes = Request();
  AddInput(*bytes, "s", "BYTES", {2});
  bytes->add_raw_input_contents(std::string("\x02\0\0\0ab", 6));
  EXPECT_EQ(Parse(bytes), "input 's': expected 2 BYTES elements, got 1");
}

scheduler::InferenceResponse Outputs() {
  scheduler::InferenceResponse resp;
  Tensor y = Tensor::Allocate(DataType::kFp32, {1, 2});
  y.mutable_data_as<float>()[0] = 0.5f;
  y.mutable_data_as<float>()[1] = -1.0f;
  Tensor h = Tensor::Allocate(DataType::kFp16, {1});
  resp.outputs = {{"y", y}, {"h", h}};
  return resp;
}

// Issue 9's classes, the same over gRPC as over REST: the shape guard does
// not stop at a 0 dim, priority is Triton's unsigned level, timeout >= 0.
TEST(ParseModelInferRequest, ShapesAndNumbersOutOfRangeAreRefused) {
  auto huge = Request();
  AddInput(*huge, "x", "FP32", {0, int64_t{1} << 62, 4});
  EXPECT_EQ(Parse(huge),
            "input 'x': shape [0,4611686018427387904,4] is too large (more than 2^40 elements in "
            "its non-zero dimensions)");
  for (int64_t bad : {int64_t{-1}, int64_t{1000001}, int64_t{1} << 40}) {
    auto r = Request();
    AddInput(*r, "x", "FP32", {1})->mutable_contents()->add_fp32_contents(1);
    (*r->mutable_parameters())["priority"].set_int64_param(bad);
    EXPECT_EQ(Parse(r), "parameters.priority: expected an integer from 0 to 1000000, got " +
                            std::to_string(bad));
  }
  auto timeout = Request();
  AddInput(*timeout, "x", "FP32", {1})->mutable_contents()->add_fp32_contents(1);
  (*timeout->mutable_parameters())["timeout"].set_int64_param(-5);
  EXPECT_EQ(Parse(timeout),
            "parameters.timeout: expected an integer from 0 to 9223372036854775807, got -5");
}

TEST(WriteModelInferResponse, TypedWhenEveryOutputHasAField) {
  ModelInferResponse out;
  serving::V2ResponseContext ctx{"m", 3, "r1", {{"y", false}}, false};
  ASSERT_TRUE(WriteModelInferResponse(Outputs(), ctx, &out).ok());
  EXPECT_EQ(out.model_name(), "m");
  EXPECT_EQ(out.model_version(), "3");
  EXPECT_EQ(out.id(), "r1");
  ASSERT_EQ(out.outputs_size(), 1);
  EXPECT_EQ(out.outputs(0).datatype(), "FP32");
  EXPECT_EQ(out.outputs(0).shape_size(), 2);
  EXPECT_EQ(out.raw_output_contents_size(), 0);
  ASSERT_EQ(out.outputs(0).contents().fp32_contents_size(), 2);
  EXPECT_EQ(out.outputs(0).contents().fp32_contents(1), -1.0f);
}

TEST(WriteModelInferResponse, AllRawWhenAnOutputHasNoField) {
  ModelInferResponse out;
  serving::V2ResponseContext ctx{"m", 1, "", {}, false};  // every output: y and FP16 h
  ASSERT_TRUE(WriteModelInferResponse(Outputs(), ctx, &out).ok());
  ASSERT_EQ(out.raw_output_contents_size(), 2);
  EXPECT_FALSE(out.outputs(0).has_contents());
  float y[2];
  ASSERT_EQ(out.raw_output_contents(0).size(), sizeof(y));
  std::memcpy(y, out.raw_output_contents(0).data(), sizeof(y));
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(out.raw_output_contents(1).size(), 2u);
}

TEST(WriteModelInferResponse, LabelsAsBytesContents) {
  scheduler::InferenceResponse resp;
  resp.labels = {{{"cat", 0.75f}, {"dog", 0.25f}}};
  ModelInferResponse out;
  serving::V2ResponseContext ctx{"m", 1, "", {{"labels", false}, {"scores", false}}, false};
  ASSERT_TRUE(WriteModelInferResponse(resp, ctx, &out).ok());
  ASSERT_EQ(out.outputs_size(), 2);
  EXPECT_EQ(out.outputs(0).datatype(), "BYTES");
  ASSERT_EQ(out.outputs(0).contents().bytes_contents_size(), 2);
  EXPECT_EQ(out.outputs(0).contents().bytes_contents(1), "dog");
  EXPECT_EQ(out.outputs(1).contents().fp32_contents(0), 0.75f);
}

TEST(WriteModelInferResponse, UnknownOutputNamesTheKnownOnes) {
  ModelInferResponse out;
  serving::V2ResponseContext ctx{"m", 1, "", {{"nope", false}}, false};
  Status st = WriteModelInferResponse(Outputs(), ctx, &out);
  EXPECT_EQ(st.message(), "unknown output 'nope'; model 'm' has outputs: y, h");
}

}  // namespace
}  // namespace inferd::grpc
