// `inferd topology --calibrate`'s measurement and its annotation, on the fake
// backend with an injected timer (the figures of real models are checked end
// to end in tests/e2e/test_topology_calibration.py).
#include "profile/store_calibration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "backend/fake/fake_backend.h"
#include "config/model_config.h"
#include "profile/calibration_annotation.h"

namespace inferd::profile {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kCalibratedConfig =
    "max_batch_size: 8\ninputs: [{name: x, datatype: FP32, shape: [16]}]\n";

class StoreCalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = fs::path(::testing::TempDir()) /
             ("calibration-" +
              std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(store_);
    fs::create_directories(store_);
  }
  void TearDown() override { fs::remove_all(store_); }

  config::ModelConfig AddModel(const std::string& name, const std::string& config,
                               std::vector<int> versions, const std::string& weights = "weights") {
    fs::create_directories(store_ / name);
    std::ofstream(store_ / name / "config.yaml") << config;
    for (int v : versions) {
      fs::create_directories(store_ / name / std::to_string(v));
      std::ofstream(store_ / name / std::to_string(v) / "model.pt") << weights;
    }
    auto c = config::LoadModelConfig((store_ / name / "config.yaml").string(), name);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? *c : config::ModelConfig();
  }

  // Times every call as `ms_of_batch` of the batch the fake model just ran.
  scheduler::CalibrationOptions FakeTimes(const std::string& model_path,
                                          std::map<int, double> ms_of_batch) {
    scheduler::CalibrationOptions o;
    o.timer = [this, model_path, ms_of_batch](const std::function<void()>& call) {
      call();
      auto model = backend_.LastModel(model_path);
      EXPECT_NE(model, nullptr);
      if (!model) return 1.0;
      const int batch = static_cast<int>(model->batch_sizes().back());
      timed_.push_back(batch);
      return ms_of_batch.at(batch);
    };
    return o;
  }
  std::string ModelPath(const std::string& name, int version) const {
    return (store_ / name / std::to_string(version) / "model.pt").string();
  }

  fs::path store_;
  backend::FakeBackend backend_;
  std::vector<int> timed_;
};

TEST_F(StoreCalibrationTest, CalibratesTheHighestVersionOnTheLadderWithTheSchedulersRule) {
  const auto config = AddModel("m", kCalibratedConfig, {1, 3, 2});
  // Per item: 1.0, 0.8, 0.78 (saves under 5% over 2: not chosen), 0.5.
  auto options = FakeTimes(ModelPath("m", 3), {{1, 1.0}, {2, 1.6}, {4, 3.12}, {8, 4.0}});
  auto r = CalibrateStoreModel(backend_, store_.string(), config, {2, {4, 5}, 2}, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->version, 3);
  EXPECT_EQ(r->executor.id, 2);
  const scheduler::BatchCalibration& c = r->calibration;
  ASSERT_TRUE(c.calibrated) << c.note;
  std::vector<int> batches;
  for (const auto& s : c.sizes) batches.push_back(s.batch);
  EXPECT_THAT(batches, ElementsAre(1, 2, 4, 8));
  EXPECT_THAT(c.chosen_sizes(), ElementsAre(1, 2, 8));
  EXPECT_EQ(c.max_batch, 8);
  EXPECT_DOUBLE_EQ(c.sizes[2].ms_per_item, 0.78);
  // The scheduler's note, ending with the clock it uses on a 2-thread executor.
  EXPECT_THAT(c.note, HasSubstr("timed rounds, wall time"));
  // Every size was warmed up twice before its timed rounds.
  EXPECT_THAT(std::vector<int>(timed_.begin(), timed_.begin() + 8),
              ElementsAre(1, 1, 2, 2, 4, 4, 8, 8));
}

TEST_F(StoreCalibrationTest, ALoadThatFailsAndAMissingVersionNameTheModel) {
  const auto broken = AddModel("broken", kCalibratedConfig, {1}, "fail: not TorchScript");
  auto r = CalibrateStoreModel(backend_, store_.string(), broken, {0, {}, 1});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("model 'broken': "));
  EXPECT_THAT(r.status().message(), HasSubstr("fake load failure"));

  const auto empty = AddModel("empty", kCalibratedConfig, {});
  r = CalibrateStoreModel(backend_, store_.string(), empty, {0, {}, 1});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("model 'empty': no version folder"));
}

TEST_F(StoreCalibrationTest, AModelWithoutBatchingLoadsButIsNotCalibrated) {
  const auto config =
      AddModel("one", "max_batch_size: 1\ninputs: [{name: x, datatype: FP32, shape: [4]}]\n", {1});
  auto r = CalibrateStoreModel(backend_, store_.string(), config, {0, {}, 1});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->calibration.calibrated);
  EXPECT_EQ(r->calibration.note, "max_batch_size 1: nothing to calibrate");
  EXPECT_EQ(backend_.loads(), 1u);
}

simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& json) {
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  return doc;
}

TEST_F(StoreCalibrationTest, TheAnnotationCarriesTheTableAndTheLimit) {
  StoreCalibration r;
  r.version = 2;
  r.executor = {1, {2, 3}, 2};
  r.calibration.sizes = {{1, 2.0, 0, false}, {2, 3.0, 0, false}, {4, 7.0, 0, false}};
  scheduler::ChooseBatchSizes(0.05, 0, &r.calibration);
  r.calibration.calibrated = true;
  r.calibration.note = "5 timed rounds, wall time";
  config::ModelConfig config;
  config.name = "m";
  config.max_batch_size = 4;
  const topology::ModelAnnotation a = CalibrationAnnotation(config, r);
  EXPECT_EQ(a.json_key, "batch_calibration");
  EXPECT_EQ(a.error, "");
  simdjson::dom::parser parser;
  auto doc = Parse(parser, a.json_value);
  EXPECT_EQ(int64_t(doc["version"]), 2);
  EXPECT_EQ(int64_t(doc["executor"]), 1);
  EXPECT_EQ(int64_t(doc["threads"]), 2);
  EXPECT_TRUE(bool(doc["calibrated"]));
  EXPECT_EQ(int64_t(doc["max_batch_size"]), 2);  // batch 4 costs 1.75 per item, more than 2's 1.5
  EXPECT_EQ(std::string_view(doc["note"]), "5 timed rounds, wall time");
  auto sizes = doc["sizes"].get_array();
  ASSERT_EQ(sizes.size(), 3u);
  EXPECT_EQ(int64_t(sizes.at(2)["batch_size"]), 4);
  EXPECT_DOUBLE_EQ(double(sizes.at(2)["latency_ms"]), 7.0);
  EXPECT_DOUBLE_EQ(double(sizes.at(2)["ms_per_item"]), 1.75);
  EXPECT_FALSE(bool(sizes.at(2)["chosen"]));
  EXPECT_TRUE(bool(sizes.at(1)["chosen"]));
  ASSERT_EQ(a.text.size(), 4u);
  EXPECT_THAT(a.text[0], HasSubstr("executor 1, 2 threads on cpus 2-3): up to 2"));
  EXPECT_EQ(a.text[2], "  batch 2: 3.00 ms, 1.500 ms per item, chosen");
  EXPECT_TRUE(doc["precision"].is_null());  // the backend had no choice (fp32)
}

// With a precision chosen at load, the server's "precision" object and its
// table after the batch sizes.
TEST_F(StoreCalibrationTest, TheAnnotationCarriesThePrecisionTable) {
  StoreCalibration r;
  r.version = 1;
  r.executor = {0, {}, 1};
  r.calibration.note = "max_batch_size is 1";
  r.precision.requested = "auto";
  r.precision.chosen = "int8";
  r.precision.samples = 8;
  r.precision.sample_source = "drawn for the declared shapes";
  r.precision.candidates = {{"fp32", true, 2.0, 3.0, 0, 0, 0, 0, "the reference"},
                            {"bf16", true, 0, 0, 0.5, 8, 5, 0.01, "refused: max error 0.5"},
                            {"int8", true, 1.0, 1.5, 0.02, 8, 8, 0.05, "chosen: 2.00x fp32's speed"}};
  config::ModelConfig config;
  config.name = "m";
  const topology::ModelAnnotation a = CalibrationAnnotation(config, r);
  simdjson::dom::parser parser;
  auto doc = Parse(parser, a.json_value);
  EXPECT_EQ(std::string_view(doc["precision"]["chosen"]), "int8");
  auto candidates = doc["precision"]["candidates"].get_array();
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(std::string_view(candidates.at(1)["verdict"]), "refused: max error 0.5");
  EXPECT_DOUBLE_EQ(double(candidates.at(1)["max_rel_error"]), 0.5);
  EXPECT_DOUBLE_EQ(double(candidates.at(1)["top1_agreement"]), 5.0 / 8);
  ASSERT_EQ(a.text.size(), 5u);
  EXPECT_EQ(a.text[1],
            "precision auto: torchscript int8 (8 samples, drawn for the declared shapes; served "
            "batch 1, timed at 1)");
  EXPECT_EQ(a.text[3],
            "  torchscript  bf16           - ms/item  max error 5.00e-01 (tolerance 1.0e-02)  "
            "top-1 5/8  refused: max error 0.5");
  EXPECT_EQ(a.text[2],
            "  torchscript  fp32       2.000 ms/item, 3.000 alone  max error 0.00e+00 (the "
            "reference)  top-1 0/0  the reference");
  EXPECT_THAT(a.text[4], HasSubstr("1.000 ms/item, 1.500 alone"));
  EXPECT_THAT(a.text[4], HasSubstr("chosen: 2.00x fp32's speed"));
}

TEST_F(StoreCalibrationTest, UncalibratedShowsTheConfigsLimitAndAFailureItsError) {
  config::ModelConfig config;
  config.name = "m";
  config.max_batch_size = 6;
  StoreCalibration r;
  r.version = 1;
  r.calibration.note = "calibrate: false in config.yaml";
  simdjson::dom::parser parser;
  auto a = CalibrationAnnotation(config, r);
  auto doc = Parse(parser, a.json_value);
  EXPECT_FALSE(bool(doc["calibrated"]));
  EXPECT_EQ(int64_t(doc["max_batch_size"]), 6);
  EXPECT_EQ(std::string_view(doc["reason"]), "calibrate: false in config.yaml");
  EXPECT_EQ(a.error, "");

  a = CalibrationAnnotation(config, InvalidArgument("model 'm': bad file"));
  EXPECT_EQ(a.error, "model 'm': bad file");
  auto failed = Parse(parser, a.json_value);
  EXPECT_FALSE(bool(failed["calibrated"]));
  EXPECT_EQ(std::string_view(failed["error"]), "model 'm': bad file");
}

}  // namespace
}  // namespace inferd::profile
