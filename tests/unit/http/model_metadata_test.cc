#include "http/model_metadata.h"

#include <gtest/gtest.h>

#include "http/management_routes.h"

namespace inferd::http {
namespace {

using repository::ModelState;
using repository::ModelStatus;

ModelStatus Echo() {
  ModelStatus s;
  s.name = "echo";
  config::ModelConfig c;
  c.name = "echo";
  c.max_batch_size = 4;
  c.inputs = {{"x", DataType::kFp32, {3, -1}, std::nullopt}};
  c.outputs = {{"y", DataType::kInt64, {}, std::nullopt}};
  s.config = c;
  s.versions = {{1, ModelState::kReady, ""}, {2, ModelState::kFailed, "model.pt: bad magic"}};
  return s;
}

TEST(ModelMetadata, V2ShapesCarryTheBatchDim) {
  auto body = WriteV2ModelMetadata(Echo(), std::nullopt);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(*body,
            R"({"name":"echo","versions":["1","2"],"platform":"pytorch_torchscript",)"
            R"("max_batch_size":4,"inputs":[{"name":"x","datatype":"FP32","shape":[-1,3,-1]}],)"
            R"("outputs":[{"name":"y","datatype":"INT64","shape":[-1]}],"state":"READY"})");
}

TEST(ModelMetadata, OneVersionShowsItsStateAndError) {
  auto body = WriteV2ModelMetadata(Echo(), 2);
  ASSERT_TRUE(body.ok());
  EXPECT_NE(body->find(R"("versions":["2"])"), std::string::npos);
  EXPECT_NE(body->find(R"("state":"FAILED","error":"model.pt: bad magic")"), std::string::npos)
      << *body;
  auto missing = WriteV2ModelMetadata(Echo(), 5);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "model 'echo' has no version 5; versions: 1, 2");
}

TEST(ModelMetadata, InvalidConfigStillDescribesTheModel) {
  ModelStatus s;
  s.name = "bad";
  s.error = "bad/config.yaml: max_batch_size: expected an integer >= 1, got '-3'";
  auto body = WriteV2ModelMetadata(s, std::nullopt);
  ASSERT_TRUE(body.ok());
  EXPECT_NE(body->find(R"("inputs":[],"outputs":[])"), std::string::npos);
  EXPECT_NE(body->find("max_batch_size: expected an integer"), std::string::npos);
}

TEST(ModelMetadata, RepositoryIndex) {
  std::vector<ModelStatus> models = {Echo()};
  EXPECT_EQ(WriteV2RepositoryIndex(models, false),
            R"([{"name":"echo","version":"1","state":"READY","reason":""},)"
            R"({"name":"echo","version":"2","state":"FAILED","reason":"model.pt: bad magic"}])");
  EXPECT_EQ(WriteV2RepositoryIndex(models, true),
            R"([{"name":"echo","version":"1","state":"READY","reason":""}])");
}

TEST(ModelMetadata, TorchServeListAndDescribe) {
  EXPECT_EQ(WriteTorchServeModelList({Echo()}),
            R"({"models":[{"modelName":"echo","modelUrl":"echo"}]})");
  auto def = WriteTorchServeDescribe(Echo(), std::nullopt, false);
  ASSERT_TRUE(def.ok());
  EXPECT_NE(def->find(R"("modelVersion":"1")"), std::string::npos) << *def;  // highest ready
  EXPECT_EQ(def->find(R"("modelVersion":"2")"), std::string::npos);
  auto all = WriteTorchServeDescribe(Echo(), std::nullopt, true);
  EXPECT_NE(all->find(R"("modelVersion":"2")"), std::string::npos);
  EXPECT_NE(all->find(R"("status":"FAILED","error":"model.pt: bad magic")"), std::string::npos);
  EXPECT_FALSE(WriteTorchServeDescribe(Echo(), 7, false).ok());
}

TEST(ModelNameFromUrl, ReducesUrlsAndArchivesToAName) {
  EXPECT_EQ(ModelNameFromUrl("digits"), "digits");
  EXPECT_EQ(ModelNameFromUrl("resnet18.mar"), "resnet18");
  EXPECT_EQ(ModelNameFromUrl("https://example.com/models/resnet18.mar?x=1"), "resnet18");
  EXPECT_EQ(ModelNameFromUrl("store/mobilenet/"), "mobilenet");
}

}  // namespace
}  // namespace inferd::http
