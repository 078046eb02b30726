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
  repository::VersionStatus v1, v2;
  v1.version = 1;
  v1.state = ModelState::kReady;
  v1.resident = true;
  v1.footprint.bytes = 4096;
  v1.footprint.measured = true;
  v2.version = 2;
  v2.error = "model.pt: bad magic";
  v2.footprint.bytes = 2048;
  s.versions = {v1, v2};
  s.resident_bytes = 4096;
  return s;
}

TEST(ModelMetadata, V2ShapesCarryTheBatchDim) {
  auto body = WriteV2ModelMetadata(Echo(), std::nullopt);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(*body,
            R"({"name":"echo","versions":["1","2"],"platform":"pytorch_torchscript",)"
            R"("max_batch_size":4,"inputs":[{"name":"x","datatype":"FP32","shape":[-1,3,-1]}],)"
            R"("outputs":[{"name":"y","datatype":"INT64","shape":[-1]}],"state":"READY",)"
            R"("batch_calibration":null,"precision":null,"candidates":[]})");
}

// The model files of the version shown: the one served and the candidates
// `inferd optimize` wrote beside it (repository/version_files.h).
TEST(ModelMetadata, TheCandidatesOfTheVersionShown) {
  ModelStatus s = Echo();
  s.versions[0].files = {{"model.pt", "torchscript", 1000, true},
                         {"model.onnx", "onnx", 900, false},
                         {"model.int8.onnx", "onnx_int8", 300, false}};
  auto v1 = WriteV2ModelMetadata(s, std::nullopt);
  ASSERT_TRUE(v1.ok());
  EXPECT_NE(v1->find(R"("candidates":[{"file":"model.pt","kind":"torchscript","bytes":1000,)"
                     R"("served":true},{"file":"model.onnx","kind":"onnx","bytes":900,)"
                     R"("served":false},{"file":"model.int8.onnx","kind":"onnx_int8",)"
                     R"("bytes":300,"served":false}]})"),
            std::string::npos)
      << *v1;
  auto v2 = WriteV2ModelMetadata(s, 2);
  ASSERT_TRUE(v2.ok());
  EXPECT_NE(v2->find(R"("candidates":[]})"), std::string::npos) << *v2;
}

// The precision the backend chose for the version shown, with every candidate
// (backend/precision_report.h); null for a version not resident.
TEST(ModelMetadata, ThePrecisionTableOfTheVersionShown) {
  ModelStatus s = Echo();
  backend::PrecisionReport p;
  p.requested = "auto";
  p.chosen = "fp32";
  p.samples = 8;
  p.sample_source = "drawn for the declared shapes";
  p.candidates = {{"fp32", true, 0.5, 0.75, 0, 0, 0, 0, "chosen: no kept candidate saves 5%"},
                  {"bf16", true, 0, 0, 1.5, 4, 1, 0.01, "refused: max error 1.5"},
                  {"int8", false, 0, 0, 0, 0, 0, 0.05, "not built: no VNNI"}};
  s.versions[0].precision = p;
  auto v2 = WriteV2ModelMetadata(s, std::nullopt);
  ASSERT_TRUE(v2.ok());
  const std::string table =
      R"("precision":{"requested":"auto","chosen":"fp32","runtime":"torchscript","file":"",)"
      R"("samples":8,"sample_source":"drawn for the declared shapes","served_batch":1,)"
      R"("timed_batch":1,"candidates":[)"
      R"({"runtime":"torchscript","precision":"fp32","file":"","built":true,"ms_per_item":0.5,)"
      R"("ms_alone":0.75,"ms_served":0,"max_rel_error":0,)"
      R"("top1_agreement":null,"top1_agreed":0,"top1_checked":0,"tolerance":0,)"
      R"("verdict":"chosen: no kept candidate saves 5%"},)"
      R"({"runtime":"torchscript","precision":"bf16","file":"","built":true,"ms_per_item":0,)"
      R"("ms_alone":0,"ms_served":0,"max_rel_error":1.5,)"
      R"("top1_agreement":0.25,"top1_agreed":1,"top1_checked":4,"tolerance":0.01,)"
      R"("verdict":"refused: max error 1.5"},)"
      R"({"runtime":"torchscript","precision":"int8","file":"","built":false,"ms_per_item":0,)"
      R"("ms_alone":0,"ms_served":0,"max_rel_error":0,)"
      R"("top1_agreement":null,"top1_agreed":0,"top1_checked":0,"tolerance":0.05,)"
      R"("verdict":"not built: no VNNI"}]},)";
  EXPECT_NE(v2->find(table), std::string::npos) << *v2;
  v2 = WriteV2ModelMetadata(s, 2);
  ASSERT_TRUE(v2.ok());
  EXPECT_NE(v2->find(R"("precision":null,)"), std::string::npos) << *v2;
}

TEST(ModelMetadata, TheCalibrationTableOfTheVersionShown) {
  ModelStatus s = Echo();
  scheduler::BatchCalibration c;
  c.calibrated = true;
  c.note = "5 timed rounds";
  c.sizes = {{1, 3, 3, true}, {2, 5, 2.5, true}, {4, 12, 3, false}};
  c.max_batch = 2;
  c.seconds = 0.5;
  s.versions[0].calibration = c;
  const std::string table =
      R"("batch_calibration":{"calibrated":true,"max_batch_size":2,"seconds":0.5,)"
      R"("note":"5 timed rounds","sizes":[{"batch_size":1,"latency_ms":3,"ms_per_item":3,)"
      R"("chosen":true},{"batch_size":2,"latency_ms":5,"ms_per_item":2.5,"chosen":true},)"
      R"({"batch_size":4,"latency_ms":12,"ms_per_item":3,"chosen":false}]})";
  auto v2 = WriteV2ModelMetadata(s, std::nullopt);
  ASSERT_TRUE(v2.ok());
  EXPECT_NE(v2->find(table), std::string::npos) << *v2;
  auto described = WriteTorchServeDescribe(s, std::nullopt, false);
  ASSERT_TRUE(described.ok());
  EXPECT_NE(described->find(table), std::string::npos) << *described;
  // Not calibrated: the reason, and the config's max_batch_size is the limit.
  scheduler::BatchCalibration off;
  off.note = "calibrate: false in config.yaml";
  s.versions[0].calibration = off;
  v2 = WriteV2ModelMetadata(s, std::nullopt);
  ASSERT_TRUE(v2.ok());
  EXPECT_NE(v2->find(R"("batch_calibration":{"calibrated":false,"max_batch_size":4,"seconds":0,)"
                     R"("reason":"calibrate: false in config.yaml","sizes":[]})"),
            std::string::npos)
      << *v2;
  // A version not resident has no table.
  v2 = WriteV2ModelMetadata(s, 2);
  EXPECT_NE(v2->find(R"("batch_calibration":null)"), std::string::npos) << *v2;
}

TEST(ModelMetadata, OneVersionShowsItsStateAndError) {
  auto body = WriteV2ModelMetadata(Echo(), 2);
  ASSERT_TRUE(body.ok());
  EXPECT_NE(body->find(R"("versions":["2"])"), std::string::npos);
  EXPECT_NE(body->find(R"("state":"UNAVAILABLE","error":"model.pt: bad magic")"), std::string::npos)
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
  const std::string footprint =
      R"("weight_bytes":0,"rss_growth_bytes":0,"peak_growth_bytes":0,"file_bytes":0,"load_ms":0,)"
      R"("load_wait_ms":0,)";
  EXPECT_EQ(
      WriteV2RepositoryIndex(models, false),
      R"([{"name":"echo","version":"1","state":"READY","reason":"","bytes":4096,)"
      R"("footprint":{"bytes":4096,)" +
          footprint +
          R"("measured":true},)"
          R"("load":"eager","pinned":false,"last_used":null},)"
          R"({"name":"echo","version":"2","state":"UNAVAILABLE","reason":"model.pt: bad magic",)"
          R"("bytes":0,"footprint":{"bytes":2048,)" +
          footprint +
          R"("measured":false},)"
          R"("load":"eager","pinned":false,"last_used":null}])");
  const std::string ready = WriteV2RepositoryIndex(models, true);
  EXPECT_EQ(ready.find("\"version\":\"2\""), std::string::npos) << ready;
  EXPECT_NE(ready.find(R"({"name":"echo","version":"1","state":"READY")"), std::string::npos);
}

TEST(ModelMetadata, LastUseIsAnIsoTime) {
  ModelStatus s = Echo();
  s.last_used = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764583200123));
  const std::string index = WriteV2RepositoryIndex({s}, true);
  EXPECT_NE(index.find(R"("last_used":"2025-12-01T10:00:00.123Z")"), std::string::npos) << index;
  const std::string list = WriteTorchServeModelList({s});
  EXPECT_NE(list.find(R"("lastUsed":"2025-12-01T10:00:00.123Z")"), std::string::npos) << list;
}

TEST(ModelMetadata, TorchServeListAndDescribe) {
  EXPECT_EQ(WriteTorchServeModelList({Echo()}),
            R"({"models":[{"modelName":"echo","modelUrl":"echo","state":"UNAVAILABLE",)"
            R"("load":"eager","pinned":false,"residentBytes":4096,"footprintBytes":6144,)"
            R"("inFlight":0,"lastUsed":null}]})");
  auto def = WriteTorchServeDescribe(Echo(), std::nullopt, false);
  ASSERT_TRUE(def.ok());
  EXPECT_NE(def->find(R"("modelVersion":"1")"), std::string::npos) << *def;  // highest ready
  EXPECT_EQ(def->find(R"("modelVersion":"2")"), std::string::npos);
  auto all = WriteTorchServeDescribe(Echo(), std::nullopt, true);
  EXPECT_NE(all->find(R"("modelVersion":"2")"), std::string::npos);
  EXPECT_NE(all->find(R"("status":"UNAVAILABLE","error":"model.pt: bad magic")"),
            std::string::npos);
  EXPECT_FALSE(WriteTorchServeDescribe(Echo(), 7, false).ok());
}

// A quarantined version shows its state and reason in every view.
TEST(ModelMetadata, AQuarantinedVersionShowsItsReason) {
  ModelStatus s = Echo();
  s.versions.pop_back();
  s.versions[0].state = ModelState::kQuarantined;
  s.versions[0].resident = false;
  s.versions[0].reason = "forward given up after 61000 ms";
  s.state = ModelState::kQuarantined;
  s.reason = s.versions[0].reason;
  auto v2 = WriteV2ModelMetadata(s, std::nullopt);
  ASSERT_TRUE(v2.ok());
  EXPECT_NE(v2->find(R"("state":"QUARANTINED","reason":"forward given up after 61000 ms")"),
            std::string::npos)
      << *v2;
  const std::string index = WriteV2RepositoryIndex({s}, false);
  EXPECT_NE(index.find(R"("state":"QUARANTINED","reason":"forward given up after 61000 ms")"),
            std::string::npos)
      << index;
  EXPECT_EQ(WriteV2RepositoryIndex({s}, true), "[]") << "not ready";
  const std::string list = WriteTorchServeModelList({s});
  EXPECT_NE(list.find(R"("state":"QUARANTINED","reason":"forward given up after 61000 ms")"),
            std::string::npos)
      << list;
  auto describe = WriteTorchServeDescribe(s, std::nullopt, false);
  ASSERT_TRUE(describe.ok());
  EXPECT_NE(describe->find(R"("status":"QUARANTINED","reason":"forward given up after 61000 ms")"),
            std::string::npos)
      << *describe;
}

TEST(ModelNameFromUrl, ReducesUrlsAndArchivesToAName) {
  EXPECT_EQ(ModelNameFromUrl("digits"), "digits");
  EXPECT_EQ(ModelNameFromUrl("resnet18.mar"), "resnet18");
  EXPECT_EQ(ModelNameFromUrl("https://example.com/models/resnet18.mar?x=1"), "resnet18");
  EXPECT_EQ(ModelNameFromUrl("store/mobilenet/"), "mobilenet");
}

}  // namespace
}  // namespace inferd::http
