// The example models of examples/model-store through the torch backend, against
// PyTorch's own outputs (written by tools/make_models.py --store DIR).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include "unit/backend_torch/test_models.h"

namespace inferd::backend {
namespace {

using testing::LoadOrDie;
using testing::Values;

// $INFERD_EXAMPLE_STORE, else the source tree's examples/model-store (found
// from this file's path), which `make models` fills.
std::string ModelStore() {
  if (const char* dir = std::getenv("INFERD_EXAMPLE_STORE")) return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path() /
         "examples" / "model-store";
}

bool ModelStoreBuilt() {
  for (const char* model : {"digits_cnn", "resnet18", "mobilenet_v3_small"}) {
    if (!std::filesystem::exists(ModelStore() + "/" + model + "/1/model.pt")) return false;
  }
  return std::filesystem::exists(ModelStore() + "/resnet18/reference_output.f32");
}

#define SKIP_WITHOUT_MODEL_STORE()                                                   \
  if (!ModelStoreBuilt())                                                            \
  GTEST_SKIP() << "no example models in " << ModelStore()                            \
               << ": run `make models` (or /usr/bin/python3 tools/make_models.py "    \
                  "--store DIR and set INFERD_EXAMPLE_STORE=DIR)"

LoadOptions ExampleLoadOptions(const std::string& model, const std::string& precision) {
  const std::string dir = ModelStore() + "/" + model;
  auto config = config::LoadModelConfig(dir + "/config.yaml", model);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  LoadOptions options{dir + "/1/model.pt", config.ok() ? *config : config::ModelConfig{}};
  options.config.precision = config::ParseChoice<config::Precision>(precision).value();
  return options;
}

std::vector<float> ReadFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  in.seekg(0, std::ios::end);
  std::vector<float> values(static_cast<size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(values.data()), values.size() * sizeof(float));
  return values;
}

struct Comparison {
  double max_abs_diff = 0;
  bool same_argmax = false;
};

Comparison RunReference(const std::string& model, const std::string& precision) {
  auto loaded = LoadOrDie(ExampleLoadOptions(model, precision));
  EXPECT_NE(loaded, nullptr);
  if (loaded == nullptr) return {};
  const std::string dir = ModelStore() + "/" + model;
  std::vector<float> input = ReadFloats(dir + "/reference_input.f32");
  std::vector<float> expected = ReadFloats(dir + "/reference_output.f32");
  EXPECT_EQ(input.size(), 3u * 224 * 224);
  auto out = loaded->Execute(
      {{"input", testing::MakeTensor(DataType::kFp32, {1, 3, 224, 224}, input)}});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].name, "logits");
  EXPECT_EQ((*out)[0].tensor.shape(), (Shape{1, 1000}));
  std::vector<float> got = Values<float>((*out)[0].tensor);
  EXPECT_EQ(got.size(), expected.size());
  Comparison c;
  for (size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
    c.max_abs_diff = std::max(c.max_abs_diff, static_cast<double>(std::fabs(got[i] - expected[i])));
  }
  c.same_argmax = std::max_element(got.begin(), got.end()) - got.begin() ==
                  std::max_element(expected.begin(), expected.end()) - expected.begin();
  return c;
}

TEST(ExampleStoreTest, ImageNetModelsMatchPyTorch) {
  SKIP_WITHOUT_MODEL_STORE();
  for (const char* model : {"resnet18", "mobilenet_v3_small"}) {
    Comparison fp32 = RunReference(model, "fp32");
    EXPECT_LT(fp32.max_abs_diff, 1e-3) << model;
    EXPECT_TRUE(fp32.same_argmax) << model;
  }
  // Logits have a standard deviation of about 1 (see tools/models_example.py).
  Comparison bf16 = RunReference("resnet18", "bf16");
  EXPECT_LT(bf16.max_abs_diff, 0.5) << "resnet18 in bf16";
  EXPECT_GT(bf16.max_abs_diff, 0) << "resnet18: bf16 gave fp32's exact answer";
}

// The precision guard (backend/torch/precision_choice.h) measures bf16 on this
// random-weight MobileNetV3 at 0.2-0.3 of the largest logit off fp32 (in a
// Python check top-1 agreed on 6 of 8 images, autocast no better), so an
// explicit precision: bf16 is refused at load instead of served.
TEST(ExampleStoreTest, Bf16MobileNetV3IsRefusedByTheGuard) {
  SKIP_WITHOUT_MODEL_STORE();
  auto backend = TorchBackend::Create();
  ASSERT_TRUE(backend.ok());
  auto model = (*backend)->Load(ExampleLoadOptions("mobilenet_v3_small", "bf16"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(model.status().message(), ::testing::HasSubstr("precision bf16 is refused"));
}

TEST(ExampleStoreTest, DigitsCnnReachesItsTrainingAccuracyOnTheHeldOutSet) {
  SKIP_WITHOUT_MODEL_STORE();
  simdjson::ondemand::parser parser;
  auto json = simdjson::padded_string::load(ModelStore() + "/digits_cnn/test_set.json");
  ASSERT_EQ(json.error(), simdjson::SUCCESS);
  simdjson::ondemand::document doc = parser.iterate(json.value());
  std::vector<float> pixels;
  for (auto image : doc["images"].get_array()) {
    for (auto v : image.get_array()) pixels.push_back(static_cast<float>(int64_t(v)) / 255.f);
  }
  std::vector<int64_t> labels, predictions;
  for (auto v : doc["labels"].get_array()) labels.push_back(int64_t(v));
  for (auto v : doc["predictions"].get_array()) predictions.push_back(int64_t(v));
  const double python_accuracy = double(doc["test_accuracy"]);
  const int64_t n = static_cast<int64_t>(labels.size());
  ASSERT_EQ(pixels.size(), static_cast<size_t>(n * 64));

  auto model = LoadOrDie(ExampleLoadOptions("digits_cnn", "fp32"));
  ASSERT_NE(model, nullptr);
  auto out = model->Execute({{"image", testing::MakeTensor(DataType::kFp32, {n, 1, 8, 8}, pixels)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> logits = Values<float>((*out)[0].tensor);
  ASSERT_EQ(logits.size(), static_cast<size_t>(n * 10));
  int correct = 0, same_as_python = 0;
  for (int64_t i = 0; i < n; ++i) {
    auto row = logits.begin() + i * 10;
    const int64_t predicted = std::max_element(row, row + 10) - row;
    correct += predicted == labels[i];
    same_as_python += predicted == predictions[i];
  }
  EXPECT_EQ(same_as_python, n);
  EXPECT_NEAR(static_cast<double>(correct) / n, python_accuracy, 1e-6);
  EXPECT_GT(python_accuracy, 0.95);
}

}  // namespace
}  // namespace inferd::backend
