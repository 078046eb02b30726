#include "config/model_config.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace inferd::config {
namespace {

StatusOr<ModelConfig> Parse(const std::string& yaml) { return ParseModelConfig(yaml, "m/config.yaml", "m"); }

TEST(ModelConfigTest, ParsesFullExample) {
  auto c = Parse(R"(
backend: torchscript
max_batch_size: 8
dynamic_batching: {max_queue_delay_us: 2000, preferred_batch_sizes: [4, 8]}
max_queue_size: 64
request_timeout_ms: 1500
instances: {count: 2, threads: 1}
precision: bf16
inputs:  [{name: input, datatype: FP32, shape: [3, 224, 224]}]
outputs: [{name: logits, datatype: FP32, shape: [1000]}]
preprocess:  {kind: image, resize: 256, center_crop: 224, mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225]}
postprocess: {kind: topk, k: 5, labels: labels.txt}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->name, "m");
  EXPECT_EQ(c->max_batch_size, 8);
  EXPECT_EQ(c->dynamic_batching.max_queue_delay_us, 2000);
  EXPECT_EQ(c->dynamic_batching.preferred_batch_sizes, (std::vector<int>{4, 8}));
  EXPECT_EQ(c->max_queue_size, 64);
  EXPECT_EQ(c->request_timeout_ms, 1500);
  EXPECT_FALSE(c->instances.automatic);
  EXPECT_EQ(c->instances.count, 2);
  EXPECT_EQ(c->instances.threads, 1);
  EXPECT_EQ(c->precision, Precision::kBf16);
  ASSERT_EQ(c->inputs.size(), 1u);
  EXPECT_EQ(c->inputs[0].dims, (Shape{3, 224, 224}));
  EXPECT_EQ(c->outputs[0].name, "logits");
  EXPECT_EQ(c->preprocess.kind, PreprocessKind::kImage);
  EXPECT_EQ(c->preprocess.center_crop, 224);
  EXPECT_EQ(c->preprocess.std.size(), 3u);
  EXPECT_EQ(c->postprocess.kind, PostprocessKind::kTopk);
  EXPECT_EQ(c->postprocess.labels, "labels.txt");
}

TEST(ModelConfigTest, TextPreprocessKeys) {
  auto c = Parse(R"(
inputs: [{name: input_ids, datatype: INT64, shape: [-1], pad_value: 0}]
preprocess: {kind: text, tokenizer: wordpiece, vocab: vocab.txt, max_length: 64, truncation: false,
             lowercase: false}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->preprocess.max_length, 64);
  EXPECT_FALSE(c->preprocess.truncation);
  EXPECT_FALSE(c->preprocess.lowercase);
  EXPECT_EQ(c->inputs[0].pad_value, 0.0);
}

TEST(ModelConfigTest, DefaultsAreApplied) {
  auto c = Parse("inputs: [{name: x, datatype: INT64, shape: [-1]}]");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->backend, BackendKind::kTorchscript);
  EXPECT_EQ(c->max_batch_size, 1);
  EXPECT_EQ(c->max_queue_size, 128);
  EXPECT_EQ(c->request_timeout_ms, 5000);
  EXPECT_TRUE(c->instances.automatic);
  EXPECT_EQ(c->inputs[0].dtype, DataType::kInt64);
  EXPECT_EQ(c->inputs[0].dims, (Shape{-1}));
  EXPECT_TRUE(c->outputs.empty());
  EXPECT_TRUE(c->dynamic_batching.calibrate);
  EXPECT_EQ(c->dynamic_batching.max_batch_latency_ms, 100);
  EXPECT_EQ(c->variants, Variants::kAuto);
}

TEST(ModelConfigTest, CalibrationAndVariantsCanBePinned) {
  auto c = Parse(
      "inputs: [{name: x, datatype: FP32, shape: [2]}]\nmax_batch_size: 8\n"
      "dynamic_batching: {calibrate: false, preferred_batch_sizes: [4], max_batch_latency_ms: 0}\n"
      "variants: frozen\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->dynamic_batching.calibrate);
  EXPECT_EQ(c->dynamic_batching.max_batch_latency_ms, 0);
  EXPECT_EQ(c->variants, Variants::kFrozen);
}

void ExpectError(const std::string& yaml, const std::string& fragment) {
  auto c = Parse(yaml);
  ASSERT_FALSE(c.ok()) << "accepted: " << yaml;
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(fragment), std::string::npos)
      << "message '" << c.status().message() << "' lacks '" << fragment << "'";
  EXPECT_NE(c.status().message().find("m/config.yaml"), std::string::npos);
}

TEST(ModelConfigTest, ErrorsNameFileKeyAndExpectation) {
  const std::string in = "inputs: [{name: x, datatype: FP32, shape: [2]}]\n";
  ExpectError(in + "max_batch_size: zero",
              "max_batch_size: expected an integer from 1 to 2147483647, got 'zero'");
  ExpectError(in + "max_batch_size: 0", "max_batch_size: expected an integer from 1 to 2147483647");
  ExpectError("inputs: [{name: x, datatype: FLOAT, shape: [2]}]", "inputs[0].datatype: expected one of");
  ExpectError("inputs: [{name: x, datatype: FP32, shape: [0]}]", "inputs[0].shape");
  ExpectError("inputs: [{name: x, datatype: FP32}]", "inputs[0].shape");
  ExpectError("max_batch_size: 2", "inputs: expected a list");
  ExpectError(in + "backend: onnx",
              "backend: expected torchscript, onnxruntime, xgboost or python, got 'onnx'");
  ExpectError(in + "max_batch_szie: 4", "max_batch_szie: unknown key");
  ExpectError(in + "instances: many", "instances: expected auto or {count");
  ExpectError(in + "instances: {count: 0}", "instances");
  ExpectError(in + "precision: int4", "precision: expected auto, fp32, bf16 or int8, got 'int4'");
  ExpectError(in + "max_batch_size: 4\ndynamic_batching: {preferred_batch_sizes: [8]}",
              "preferred_batch_sizes: expected sizes between 1 and max_batch_size (4)");
  ExpectError(in + "dynamic_batching: {calibrate: sometimes}", "calibrate: expected true or false");
  ExpectError(in + "dynamic_batching: {max_batch_latency_ms: -1}",
              "max_batch_latency_ms: expected an integer from 0 to 3600000");
  ExpectError(in + "variants: fastest", "variants: expected auto, frozen, channels_last or");
  ExpectError(in + "preprocess: {kind: audio}", "preprocess.kind: expected image, text or bytes");
  ExpectError(in + "preprocess: {kind: image, color: gray}",
              "preprocess.color: expected rgb, bgr or grayscale, got 'gray'");
  ExpectError(in + "preprocess: {kind: text, tokenizer: bpe}",
              "preprocess.tokenizer: expected wordpiece or sentencepiece, got 'bpe'");
  ExpectError(in + "postprocess: {kind: nonsense}",
              "postprocess.kind: expected topk, argmax, softmax, sigmoid or raw, got 'nonsense'");
  ExpectError(in + "load: later", "load: expected eager or lazy, got 'later'");
  ExpectError(in + "postprocess: {kind: topk, k: 0}", "postprocess.k");
  ExpectError("inputs: [{name: x, datatype: FP32, shape: [2]}, {name: x, datatype: FP32, shape: [2]}]",
              "inputs[1].name: expected a name not used twice");
  ExpectError("inputs: [unclosed", "not valid YAML");
}

TEST(ModelConfigTest, PrecisionTakesAutoAndInt8) {
  for (const char* precision : {"auto", "fp32", "bf16", "int8"}) {
    auto c = ParseModelConfig(std::string("precision: ") + precision +
                                  "\ninputs: [{name: x, datatype: FP32, shape: [2]}]\n",
                              "c.yaml", "m");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(Name(c->precision), precision);
  }
}

// precision_tolerance: a number in (0, 1]; absent leaves each precision's
// own default (no value); anything else names the key and the range.
TEST(ModelConfigTest, PrecisionToleranceIsANumberInZeroToOne) {
  const std::string in = "precision: auto\ninputs: [{name: x, datatype: FP32, shape: [2]}]\n";
  auto d = Parse(in);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->precision_tolerance.has_value());
  for (const auto& [text, value] : std::vector<std::pair<std::string, double>>{
           {"1e-3", 1e-3}, {"0.05", 0.05}, {"1", 1.0}}) {
    auto c = Parse(in + "precision_tolerance: " + text + "\n");
    ASSERT_TRUE(c.ok()) << text << ": " << c.status().ToString();
    ASSERT_TRUE(c->precision_tolerance.has_value()) << text;
    EXPECT_DOUBLE_EQ(*c->precision_tolerance, value) << text;
  }
  for (const char* bad : {"0", "-0.01", "1.5", "small", ".inf", "[0.1]"}) {
    auto c = Parse(in + "precision_tolerance: " + bad + "\n");
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(c.status().message().find("m/config.yaml: precision_tolerance: expected a number in "
                                        "(0, 1]"),
              std::string::npos)
        << bad << ": " << c.status().message();
  }
}

// Each choice field is parsed once into its enum (choices.h); the defaults are
// the documented ones (docs/CONFIG.md).
TEST(ModelConfigTest, ChoiceFieldsParseIntoEnums) {
  const std::string in = "inputs: [{name: x, datatype: FP32, shape: [3, -1, -1]}]\n";
  auto d = Parse(in);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->backend, BackendKind::kTorchscript);
  EXPECT_EQ(d->precision, Precision::kFp32);
  EXPECT_EQ(d->variants, Variants::kAuto);
  EXPECT_EQ(d->load, LoadChoice::kServerDefault);
  EXPECT_EQ(d->preprocess.kind, PreprocessKind::kNone);
  EXPECT_EQ(d->postprocess.kind, PostprocessKind::kRaw);
  auto c = Parse(in + R"(backend: xgboost
variants: channels_last
load: lazy
preprocess: {kind: image, color: bgr, tokenizer: sentencepiece}
postprocess: {kind: raw}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->backend, BackendKind::kXgboost);
  EXPECT_EQ(c->variants, Variants::kChannelsLast);
  EXPECT_EQ(c->load, LoadChoice::kLazy);
  EXPECT_EQ(c->preprocess.color, ColorOrder::kBgr);
  EXPECT_EQ(c->preprocess.tokenizer, Tokenizer::kSentencepiece);
  EXPECT_EQ(c->postprocess.kind, PostprocessKind::kRaw);
  EXPECT_EQ(Name(BackendKind::kOnnxruntime), "onnxruntime");
  EXPECT_EQ(Name(PreprocessKind::kNone), "");
  EXPECT_EQ(ParseChoice<Variants>("optimize_for_inference"), Variants::kOptimizeForInference);
  EXPECT_FALSE(ParseChoice<Variants>("").has_value());
}

// isolation: process for torchscript and python models only; worker_memory_limit
// a size (512M, 1.5G), 0/absent meaning "derived" (python_backend.cc).
TEST(ModelConfigTest, IsolationAndWorkerMemoryLimit) {
  const std::string in = "inputs: [{name: x, datatype: FP32, shape: [2]}]\n";
  auto d = Parse(in);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->isolation, Isolation::kThread);
  EXPECT_EQ(d->worker_memory_limit, 0);
  auto c = Parse(in + "isolation: process\nworker_memory_limit: 1.5G\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->isolation, Isolation::kProcess);
  EXPECT_EQ(c->worker_memory_limit, int64_t{3} << 29);
  for (const char* bad :
       {"worker_memory_limit: lots", "worker_memory_limit: 0", "worker_memory_limit: -5M",
        "isolation: container", "backend: xgboost\nisolation: process"}) {
    auto e = Parse(in + bad + "\n");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(e.status().message().find("m/config.yaml: "), std::string::npos)
        << e.status().message();
  }
}

TEST(ModelConfigTest, MissingFileIsNotFound) {
  auto c = LoadModelConfig("/nonexistent/config.yaml", "x");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace inferd::config
