// The precision guard (precision_choice.h) and its graph passes
// (precision_passes.h) on the test store's precision models
// (tools/make_precision_models.py).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "backend/torch/precision_choice.h"
#include "backend/torch/precision_passes.h"
#include "backend/torch/torch_model.h"
#include "unit/backend_torch/test_models.h"

namespace inferd::backend {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::LoadOrDie;
using testing::MakeTensor;
using testing::TestLoadOptions;
using testing::TestStore;
using testing::Values;

std::shared_ptr<Model> LoadAs(const std::string& model, const std::string& precision) {
  LoadOptions options = TestLoadOptions(model);
  options.config.precision = config::ParseChoice<config::Precision>(precision).value();
  return LoadOrDie(options);
}

PrecisionReport ReportOf(const std::shared_ptr<Model>& model) {
  return model->execution_report().precision;
}

const PrecisionTrial* Find(const PrecisionReport& r, const std::string& precision) {
  for (const PrecisionTrial& t : r.candidates) {
    if (t.precision == precision) return &t;
  }
  return nullptr;
}

Tensor RuinInputs() {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(4 * 16);
  for (float& x : v) x = dist(rng);
  return MakeTensor(DataType::kFp32, {4, 16}, v);
}

Tensor TokenIds() {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int64_t> dist(0, 49);
  std::vector<int64_t> v(4 * 16);
  for (int64_t& x : v) x = dist(rng);
  return MakeTensor(DataType::kInt64, {4, 16}, v);
}

// max |a - b| / max |b|.
double RelativeError(const Tensor& a, const Tensor& b) {
  std::vector<float> x = Values<float>(a), y = Values<float>(b);
  EXPECT_EQ(x.size(), y.size());
  double diff = 0, scale = 1e-12;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(x[i] - y[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(y[i])));
  }
  return diff / scale;
}

Tensor Output(Model& model, const std::string& input, const Tensor& t) {
  auto out = model.Execute({{input, t}});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return Tensor();
  EXPECT_EQ((*out)[0].tensor.dtype(), DataType::kFp32);
  return (*out)[0].tensor;
}

TEST(PrecisionTest, AutoRefusesWhatReducedPrecisionRuinsAndStaysExact) {
  SKIP_WITHOUT_TEST_STORE();
  auto fp32 = LoadAs("precision_ruin", "fp32");
  auto automatic = LoadAs("precision_ruin", "auto");
  ASSERT_NE(fp32, nullptr);
  ASSERT_NE(automatic, nullptr);
  const PrecisionReport r = ReportOf(automatic);
  EXPECT_EQ(r.requested, "auto");
  EXPECT_EQ(r.chosen, "fp32");
  EXPECT_EQ(r.samples, kDrawnSamples);
  ASSERT_EQ(r.candidates.size(), 3u);
  EXPECT_GT(r.candidates[0].ms_per_item, 0);
  for (const char* precision : {"bf16", "int8"}) {
    const PrecisionTrial* t = Find(r, precision);
    ASSERT_NE(t, nullptr) << precision;
    if (!t->built) continue;  // not on this CPU (the verdict says why)
    EXPECT_THAT(t->verdict, StartsWith("refused")) << precision;
    EXPECT_GT(t->max_relative_error, 0.1) << precision << " should ruin this model";
  }
  if (PrecisionFeatures().bf16) {
    EXPECT_TRUE(Find(r, "bf16")->built);
  }
  const Tensor x = RuinInputs();
  EXPECT_LE(RelativeError(Output(*automatic, "x", x), Output(*fp32, "x", x)), 1e-3);
}

TEST(PrecisionTest, ExplicitBf16ThatIsRefusedFailsTheLoad) {
  SKIP_WITHOUT_TEST_STORE();
  auto backend = TorchBackend::Create();
  ASSERT_TRUE(backend.ok());
  auto model = (*backend)->Load(TestLoadOptions("precision_ruin_bf16"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(model.status().message(), HasSubstr("precision bf16 is refused: max error"));
  EXPECT_THAT(model.status().message(), HasSubstr("use precision: fp32 or auto"));
}

TEST(PrecisionTest, Bf16TransformerEncoderServesCloseToFp32) {
  SKIP_WITHOUT_TEST_STORE();
  auto fp32 = LoadAs("tiny_encoder", "fp32");
  auto bf16 = LoadOrDie(TestLoadOptions("tiny_encoder_bf16"));
  ASSERT_NE(fp32, nullptr);
  ASSERT_NE(bf16, nullptr);
  EXPECT_EQ(ReportOf(bf16).chosen, "bf16");
  const Tensor ids = TokenIds();
  const double error = RelativeError(Output(*bf16, "ids", ids), Output(*fp32, "ids", ids));
  EXPECT_LE(error, kBf16Tolerance);
  EXPECT_GT(error, 0) << "bf16 gave fp32's exact answer: was it applied?";
}

// precision_tolerance replaces each candidate's default: bf16, kept on the
// encoder at 1e-2 (above), is refused at 1e-6 with the tolerance named.
TEST(PrecisionTest, ATightToleranceRefusesWhatTheDefaultKeeps) {
  SKIP_WITHOUT_TEST_STORE();
  LoadOptions options = TestLoadOptions("tiny_encoder_bf16");
  ASSERT_EQ(options.config.precision, config::Precision::kBf16);
  ASSERT_FALSE(options.config.precision_tolerance.has_value());
  auto kept = LoadOrDie(options);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(ReportOf(kept).candidates.back().tolerance, kBf16Tolerance);
  EXPECT_GT(ReportOf(kept).candidates.back().max_relative_error, 1e-6);

  options.config.precision_tolerance = 1e-6;
  auto backend = TorchBackend::Create();
  ASSERT_TRUE(backend.ok());
  auto refused = (*backend)->Load(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("precision bf16 is refused: max error"));
  EXPECT_THAT(refused.status().message(), HasSubstr("above the tolerance 1e-06"));
}

// The report reaches the backend interface (ExecutionReport::precision), which
// the repository shows in GET /v2/models/{m}; fp32 has no report.
TEST(PrecisionTest, TheReportIsPartOfTheExecutionReport) {
  SKIP_WITHOUT_TEST_STORE();
  auto bf16 = LoadOrDie(TestLoadOptions("tiny_encoder_bf16"));
  ASSERT_NE(bf16, nullptr);
  const PrecisionReport r = bf16->execution_report().precision;
  EXPECT_EQ(r.requested, "bf16");
  EXPECT_EQ(r.chosen, "bf16");
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.candidates[0].precision, "fp32");
  EXPECT_EQ(r.candidates[1].precision, "bf16");
  auto fp32 = LoadAs("tiny_encoder", "fp32");
  ASSERT_NE(fp32, nullptr);
  EXPECT_TRUE(fp32->execution_report().precision.requested.empty());
  EXPECT_TRUE(fp32->execution_report().precision.candidates.empty());
}

TEST(PrecisionTest, Int8TransformerEncoderIsQuantizedAndServesCloseToFp32) {
  SKIP_WITHOUT_TEST_STORE();
  if (!PrecisionFeatures().int8_engine) GTEST_SKIP() << "no oneDNN quantized engine";
  auto fp32 = LoadAs("tiny_encoder", "fp32");
  auto int8 = LoadOrDie(TestLoadOptions("tiny_encoder_int8"));
  ASSERT_NE(fp32, nullptr);
  ASSERT_NE(int8, nullptr);
  const PrecisionReport r = ReportOf(int8);
  EXPECT_EQ(r.chosen, "int8");
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_LE(r.candidates[1].max_relative_error, kInt8Tolerance);
  const Tensor ids = TokenIds();
  const double error = RelativeError(Output(*int8, "ids", ids), Output(*fp32, "ids", ids));
  EXPECT_LE(error, kInt8Tolerance);
  EXPECT_GT(error, 0) << "int8 gave fp32's exact answer: was it applied?";
}

TEST(PrecisionTest, AutoOnTheEncoderMeasuresEveryCandidateAndServesTheChoice) {
  SKIP_WITHOUT_TEST_STORE();
  auto fp32 = LoadAs("tiny_encoder", "fp32");
  auto automatic = LoadOrDie(TestLoadOptions("tiny_encoder"));
  ASSERT_NE(fp32, nullptr);
  ASSERT_NE(automatic, nullptr);
  const PrecisionReport r = ReportOf(automatic);
  ASSERT_EQ(r.candidates.size(), 3u);
  EXPECT_EQ(r.sample_source, "drawn for the declared shapes");
  const PrecisionTrial* chosen = Find(r, r.chosen);
  ASSERT_NE(chosen, nullptr);
  EXPECT_THAT(chosen->verdict, StartsWith("chosen"));
  for (const PrecisionTrial& t : r.candidates) {
    if (t.built) {
      EXPECT_GT(t.ms_per_item, 0) << t.precision << ": " << t.verdict;
      EXPECT_GT(t.ms_alone, 0) << t.precision << ": " << t.verdict;
    }
  }
  const Tensor ids = TokenIds();
  const double error = RelativeError(Output(*automatic, "ids", ids), Output(*fp32, "ids", ids));
  EXPECT_LE(error, r.chosen == "fp32" ? 0 : chosen->tolerance) << r.chosen;
}

// A store of one model (precision_ruin's file) with a samples/ folder.
class SamplesFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (TestStore().empty()) GTEST_SKIP() << "INFERD_TEST_STORE is not set";
    dir_ = std::filesystem::temp_directory_path() /
           ("inferd-precision-samples-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "m" / "1");
    std::filesystem::create_directories(dir_ / "m" / "samples");
    std::filesystem::copy_file(TestStore() + "/precision_ruin/1/model.pt", dir_ / "m/1/model.pt");
    options_ = TestLoadOptions("precision_ruin");
    options_.model_path = (dir_ / "m/1/model.pt").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::vector<char>& bytes) {
    std::ofstream(dir_ / "m/samples" / name, std::ios::binary).write(bytes.data(), bytes.size());
  }
  std::filesystem::path dir_;
  LoadOptions options_;
};

TEST_F(SamplesFolderTest, EverySampleRunsAndAMalformedOneFailsTheLoad) {
  Write("a.pt", ::torch::jit::pickle_save(at::randn({3, 16})));  // a batch of 3
  Write("b.pt", ::torch::jit::pickle_save(at::randn({16})));     // one item
  auto model = LoadOrDie(options_);
  ASSERT_NE(model, nullptr);
  const PrecisionReport r = ReportOf(model);
  EXPECT_EQ(r.samples, 4);
  EXPECT_EQ(r.sample_source, "samples/ (2 files)");
  EXPECT_EQ(r.chosen, "fp32");

  Write("c.pt", ::torch::jit::pickle_save(at::zeros({2, 15})));
  auto backend = TorchBackend::Create();
  ASSERT_TRUE(backend.ok());
  auto refused = (*backend)->Load(options_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("samples/c.pt: input 'x' has shape [2, 15]"));
}

TEST(PrecisionPassesTest, FastPathsGoAndEveryLinearIsQuantized) {
  SKIP_WITHOUT_TEST_STORE();
  if (!PrecisionFeatures().int8_engine) GTEST_SKIP() << "no oneDNN quantized engine";
  ::torch::jit::Module m = ::torch::jit::load(TestStore() + "/tiny_encoder/1/model.pt");
  m.eval();
  ::torch::jit::Module frozen = ::torch::jit::freeze(m);
  EXPECT_EQ(TurnOffTransformerFastPaths(frozen), 4);  // 2 layers x (layer, attention)
  EXPECT_EQ(TurnOffTransformerFastPaths(frozen), 0);  // gone, with their branches
  const LinearCensus census = CountConstantLinears(frozen);
  EXPECT_GT(census.linears, 4);  // the layers' own linears, and the head
  auto quantized = QuantizeLinearsDynamic(frozen);
  ASSERT_TRUE(quantized.ok()) << quantized.status().ToString();
  EXPECT_EQ(*quantized, census.linears);
  EXPECT_EQ(CountConstantLinears(frozen).linears, 0);
  c10::InferenceMode guard;
  at::Tensor out = frozen.forward({at::randint(0, 50, {2, 16})}).toTensor();
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 4}));
}

}  // namespace
}  // namespace inferd::backend
