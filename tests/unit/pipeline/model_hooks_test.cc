#include "pipeline/model_hooks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "unit/pipeline/fixtures.h"

namespace inferd::pipeline {
namespace {

using testing::Fixture;

config::ModelConfig ImageModel() {
  config::ModelConfig c;
  c.name = "classifier";
  c.max_batch_size = 4;
  c.inputs.push_back({"input", DataType::kFp32, {3, 28, 28}, std::nullopt});
  c.outputs.push_back({"logits", DataType::kFp32, {3}, std::nullopt});
  c.preprocess.kind = config::PreprocessKind::kImage;
  c.preprocess.resize = 32;
  c.preprocess.center_crop = 28;
  c.preprocess.mean = {0.485f, 0.456f, 0.406f};
  c.preprocess.std = {0.229f, 0.224f, 0.225f};
  c.postprocess.kind = config::PostprocessKind::kTopk;
  c.postprocess.k = 2;
  c.postprocess.labels = "labels.txt";
  return c;
}

class ModelHooksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/model_hooks_test";
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/labels.txt") << "red\ngreen\nblue\n";
  }
  std::string dir_;
};

TEST_F(ModelHooksTest, ImageRequestBecomesABatchTensor) {
  auto hooks = MakeModelHooks(ImageModel(), dir_);
  ASSERT_TRUE(hooks.ok()) << hooks.status().ToString();
  ASSERT_TRUE(hooks->preprocess && hooks->postprocess);
  scheduler::InferenceRequest request;
  request.raw.push_back({"image/png", Fixture("scene_64x48.png")});
  request.raw.push_back({"", Fixture("scene_64x48.jpg")});
  ASSERT_TRUE(hooks->preprocess(request).ok());
  EXPECT_TRUE(request.raw.empty());
  ASSERT_EQ(request.inputs.size(), 1u);
  EXPECT_EQ(request.inputs[0].name, "input");
  EXPECT_EQ(request.inputs[0].tensor.shape(), (Shape{2, 3, 28, 28}));
  EXPECT_EQ(request.inputs[0].tensor.dtype(), DataType::kFp32);
}

// The same request through preprocess_into: the same bytes, written into the
// rows given, request.raw cleared; the same errors as preprocess (media type,
// item index). A variable-size image input has no rows to write into.
TEST_F(ModelHooksTest, PreprocessIntoWritesTheSameBytesIntoBatchRows) {
  auto hooks = MakeModelHooks(ImageModel(), dir_);
  ASSERT_TRUE(hooks.ok()) << hooks.status().ToString();
  ASSERT_TRUE(hooks->preprocess_into);
  scheduler::InferenceRequest a, b;
  for (auto* r : {&a, &b}) {
    r->raw.push_back({"image/png", Fixture("scene_64x48.png")});
    r->raw.push_back({"", Fixture("scene_64x48.jpg")});
  }
  ASSERT_TRUE(hooks->preprocess(a).ok());
  const size_t bytes = 2 * 3 * 28 * 28 * sizeof(float);
  std::vector<std::byte> rows(bytes);
  Status st = hooks->preprocess_into(b, rows.data(), bytes);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(b.raw.empty());
  EXPECT_TRUE(b.inputs.empty());
  EXPECT_EQ(std::memcmp(rows.data(), a.inputs[0].tensor.data(), bytes), 0);

  scheduler::InferenceRequest bad;
  bad.raw.push_back({"image/png", Fixture("scene_64x48.png")});
  bad.raw.push_back({"image/gif", "GIF89a"});
  st = hooks->preprocess_into(bad, rows.data(), bytes);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("item 1: ", 0), 0u) << st.message();

  config::ModelConfig variable = ImageModel();
  variable.inputs[0].dims = {3, -1, -1};
  variable.preprocess.center_crop = 0;
  auto no_rows = MakeModelHooks(variable, dir_);
  ASSERT_TRUE(no_rows.ok()) << no_rows.status().ToString();
  EXPECT_TRUE(no_rows->preprocess);
  EXPECT_FALSE(no_rows->preprocess_into);
}

TEST_F(ModelHooksTest, Base64JsonAndMultipartImages) {
  auto hooks = MakeModelHooks(ImageModel(), dir_);
  ASSERT_TRUE(hooks.ok());
  std::string png = Fixture("scene_64x48.png");
  scheduler::InferenceRequest plain;
  plain.raw.push_back({"image/png", png});
  ASSERT_TRUE(hooks->preprocess(plain).ok());

  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string b64;
  for (size_t i = 0; i < png.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(png[i]) << 16;
    if (i + 1 < png.size()) v |= static_cast<uint8_t>(png[i + 1]) << 8;
    if (i + 2 < png.size()) v |= static_cast<uint8_t>(png[i + 2]);
    b64 += kAlphabet[(v >> 18) & 63];
    b64 += kAlphabet[(v >> 12) & 63];
    b64 += i + 1 < png.size() ? kAlphabet[(v >> 6) & 63] : '=';
    b64 += i + 2 < png.size() ? kAlphabet[v & 63] : '=';
  }
  scheduler::InferenceRequest json;
  json.raw.push_back({"application/json", "{\"b64\": \"" + b64 + "\"}"});
  ASSERT_TRUE(hooks->preprocess(json).ok());

  scheduler::InferenceRequest multipart;
  multipart.raw.push_back(
      {"multipart/form-data; boundary=zz",
       "--zz\r\nContent-Disposition: form-data; name=\"data\"; filename=\"a.png\"\r\n"
       "Content-Type: image/png\r\n\r\n" +
           png + "\r\n--zz--\r\n"});
  ASSERT_TRUE(hooks->preprocess(multipart).ok());

  const Tensor& a = plain.inputs[0].tensor;
  for (const auto* r : {&json, &multipart}) {
    const Tensor& b = r->inputs[0].tensor;
    ASSERT_EQ(a.byte_size(), b.byte_size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.byte_size()), 0);
  }
}

TEST_F(ModelHooksTest, UnsupportedContentTypes) {
  auto hooks = MakeModelHooks(ImageModel(), dir_);
  ASSERT_TRUE(hooks.ok());
  for (const char* type : {"image/gif", "text/plain", "application/xml"}) {
    scheduler::InferenceRequest request;
    request.raw.push_back({type, Fixture("scene_64x48.png")});
    Status st = hooks->preprocess(request);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << type;
    EXPECT_NE(st.message().find(type), std::string::npos) << st.message();
  }
}

TEST_F(ModelHooksTest, BadItemNamesItsIndex) {
  auto hooks = MakeModelHooks(ImageModel(), dir_);
  ASSERT_TRUE(hooks.ok());
  scheduler::InferenceRequest request;
  request.raw.push_back({"image/png", Fixture("scene_64x48.png")});
  request.raw.push_back({"image/gif", "GIF89a"});
  Status st = hooks->preprocess(request);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("item 1: ", 0), 0u) << st.message();
}

TEST_F(ModelHooksTest, PostprocessHookFillsLabels) {
  auto hooks = MakeModelHooks(ImageModel(), dir_);
  ASSERT_TRUE(hooks.ok());
  scheduler::InferenceResponse response;
  Tensor logits = Tensor::Allocate(DataType::kFp32, {1, 3});
  logits.mutable_data_as<float>()[2] = 4;
  response.outputs.push_back({"logits", logits});
  ASSERT_TRUE(hooks->postprocess(response).ok());
  ASSERT_EQ(response.labels.size(), 1u);
  ASSERT_EQ(response.labels[0].size(), 2u);
  EXPECT_EQ(response.labels[0][0].label, "blue");
}

TEST_F(ModelHooksTest, NoKindsNoHooks) {
  config::ModelConfig c;
  c.inputs.push_back({"x", DataType::kFp32, {4}, std::nullopt});
  auto hooks = MakeModelHooks(c, dir_);
  ASSERT_TRUE(hooks.ok());
  EXPECT_FALSE(hooks->preprocess);
  EXPECT_FALSE(hooks->postprocess);
  c.postprocess.kind = config::PostprocessKind::kRaw;
  hooks = MakeModelHooks(c, dir_);
  ASSERT_TRUE(hooks.ok());
  EXPECT_FALSE(hooks->postprocess);
}

TEST_F(ModelHooksTest, ConfigErrorsAtCreation) {
  auto c = ImageModel();
  c.postprocess.labels = "nope.txt";
  auto hooks = MakeModelHooks(c, dir_);
  ASSERT_FALSE(hooks.ok());
  EXPECT_NE(hooks.status().message().find("nope.txt"), std::string::npos);
  c = ImageModel();
  c.inputs[0].dims = {3, 224, 224};
  hooks = MakeModelHooks(c, dir_);
  ASSERT_FALSE(hooks.ok());
  EXPECT_NE(hooks.status().message().find("28x28"), std::string::npos) << hooks.status().message();
  c = ImageModel();
  c.inputs.push_back(c.inputs[0]);
  EXPECT_FALSE(MakeModelHooks(c, dir_).ok());
}

}  // namespace
}  // namespace inferd::pipeline
