#include "pipeline/image_preprocessor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <opencv2/imgcodecs.hpp>
#include <sstream>

#include "unit/pipeline/fixtures.h"

namespace inferd::pipeline {
namespace {

using testing::Fixture;
using testing::FixtureFloats;

std::vector<float> Floats(const std::string& csv) {
  std::vector<float> v;
  std::stringstream in(csv);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::stof(item));
  return v;
}

// One line of tests/fixtures/pipeline/cases.txt.
struct ReferenceCase {
  std::string name, image;
  config::PreprocessConfig config;
  Shape shape;
  double max_abs = 0;
};

std::vector<ReferenceCase> LoadCases() {
  std::vector<ReferenceCase> cases;
  std::stringstream lines(Fixture("cases.txt"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream fields(line);
    ReferenceCase c;
    c.config.kind = config::PreprocessKind::kImage;
    fields >> c.name >> c.image;
    std::string kv;
    while (fields >> kv) {
      std::string key = kv.substr(0, kv.find('=')), value = kv.substr(kv.find('=') + 1);
      if (key == "shape") {
        for (float d : Floats(value)) c.shape.push_back(static_cast<int64_t>(d));
      } else if (key == "max_abs")
        c.max_abs = std::stod(value);
      else if (key == "resize")
        c.config.resize = std::stoi(value);
      else if (key == "crop")
        c.config.center_crop = std::stoi(value);
      else if (key == "width")
        c.config.width = std::stoi(value);
      else if (key == "height")
        c.config.height = std::stoi(value);
      else if (key == "color")
        c.config.color = config::ParseChoice<config::ColorOrder>(value).value();
      else if (key == "invert")
        c.config.invert = value == "1";
      else if (key == "mean")
        c.config.mean = Floats(value);
      else if (key == "std")
        c.config.std = Floats(value);
      else
        ADD_FAILURE() << "unknown key " << key << " in cases.txt";
    }
    cases.push_back(c);
  }
  return cases;
}

config::TensorSpec Spec(Shape dims, DataType dtype = DataType::kFp32) {
  config::TensorSpec spec;
  spec.name = "input";
  spec.dtype = dtype;
  spec.dims = std::move(dims);
  return spec;
}

config::PreprocessConfig ImageNetConfig(int resize, int crop) {
  config::PreprocessConfig c;
  c.kind = config::PreprocessKind::kImage;
  c.resize = resize;
  c.center_crop = crop;
  c.mean = {0.485f, 0.456f, 0.406f};
  c.std = {0.229f, 0.224f, 0.225f};
  return c;
}

TEST(ImagePreprocessorTest, MatchesTorchvisionOnEveryFixture) {
  auto cases = LoadCases();
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto pre = ImagePreprocessor::Create(c.config, Spec(c.shape));
    ASSERT_TRUE(pre.ok()) << pre.status().ToString();
    auto tensor = (*pre)->Run({Fixture(c.image)});
    ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
    Shape want = {1};
    want.insert(want.end(), c.shape.begin(), c.shape.end());
    ASSERT_EQ(tensor->shape(), want);
    std::vector<float> expected = FixtureFloats(c.name + ".f32");
    ASSERT_EQ(static_cast<int64_t>(expected.size()), tensor->num_elements());
    const float* got = tensor->data_as<float>();
    double max_abs = 0, sum_abs = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      double d = std::fabs(got[i] - expected[i]);
      max_abs = std::max(max_abs, d);
      sum_abs += d;
    }
    EXPECT_LE(max_abs, c.max_abs) << "mean abs diff " << sum_abs / expected.size();
  }
}

TEST(ImagePreprocessorTest, Bf16IsTheRoundedFp32) {
  auto c = ImageNetConfig(32, 28);
  auto fp32 = ImagePreprocessor::Create(c, Spec({3, 28, 28}));
  auto bf16 = ImagePreprocessor::Create(c, Spec({3, 28, 28}, DataType::kBf16));
  ASSERT_TRUE(fp32.ok() && bf16.ok());
  std::string png = Fixture("scene_64x48.png");
  auto a = (*fp32)->Run({png});
  auto b = (*bf16)->Run({png});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->dtype(), DataType::kBf16);
  ASSERT_EQ(a->num_elements(), b->num_elements());
  for (int64_t i = 0; i < a->num_elements(); ++i) {
    uint32_t bits = uint32_t{b->data_as<uint16_t>()[i]} << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    ASSERT_NEAR(v, a->data_as<float>()[i], std::fabs(a->data_as<float>()[i]) / 256 + 1e-6) << i;
  }
}

TEST(ImagePreprocessorTest, BatchOfTwoStacksItems) {
  auto pre = ImagePreprocessor::Create(ImageNetConfig(32, 28), Spec({3, 28, 28}));
  ASSERT_TRUE(pre.ok());
  auto t = (*pre)->Run({Fixture("scene_64x48.png"), Fixture("scene_61x47.png")});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->shape(), (Shape{2, 3, 28, 28}));
  std::vector<float> second = FixtureFloats("odd_png.f32");
  EXPECT_EQ(std::memcmp(t->data_as<float>() + 3 * 28 * 28, second.data(), second.size() * 4), 0);
}

// RunInto writes the same bytes as Run, into rows the caller owns (a batch
// tensor), and touches nothing outside the rows it was given.
TEST(ImagePreprocessorTest, RunIntoWritesRunsBytesIntoTheGivenRows) {
  auto pre = ImagePreprocessor::Create(ImageNetConfig(32, 28), Spec({3, 28, 28}));
  ASSERT_TRUE(pre.ok());
  const size_t row = 3 * 28 * 28 * sizeof(float);
  EXPECT_EQ((*pre)->item_bytes(), row);
  auto t = (*pre)->Run({Fixture("scene_64x48.png"), Fixture("scene_61x47.png")});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::vector<std::byte> rows(4 * row, std::byte{0x5a});
  Status st = (*pre)->RunInto({Fixture("scene_64x48.png"), Fixture("scene_61x47.png")},
                              rows.data() + row, 2 * row);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(std::memcmp(rows.data() + row, t->data(), 2 * row), 0);
  for (size_t i : {size_t{0}, row - 1, 3 * row, 4 * row - 1}) {
    EXPECT_EQ(rows[i], std::byte{0x5a}) << "byte " << i << " is outside the rows given";
  }
  // Rows of another size than the images need, and a variable input size.
  EXPECT_EQ((*pre)->RunInto({Fixture("scene_64x48.png")}, rows.data(), 2 * row).code(),
            StatusCode::kInternal);
  auto variable = ImagePreprocessor::Create(ImageNetConfig(32, 0), Spec({3, -1, -1}));
  ASSERT_TRUE(variable.ok()) << variable.status().ToString();
  EXPECT_EQ((*variable)->item_bytes(), 0u);
  EXPECT_EQ((*variable)->RunInto({Fixture("scene_64x48.png")}, rows.data(), row).code(),
            StatusCode::kFailedPrecondition);
  // A bad image: the request's error, with the item named.
  st = (*pre)->RunInto({Fixture("scene_64x48.png"), "nope"}, rows.data(), 2 * row);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("item 1: ", 0), 0u) << st.message();
}

// Run keeps its per-image buffers per thread and takes the tensor's bytes
// from the pool: neither is cleared between calls, so a stale byte from the
// previous image (another size, another content) would show here.
TEST(ImagePreprocessorTest, ReusedBuffersGiveTheSameAnswers) {
  TensorPool pool;
  auto pre = ImagePreprocessor::Create(ImageNetConfig(32, 28), Spec({3, 28, 28}));
  auto big = ImagePreprocessor::Create(ImageNetConfig(64, 60), Spec({3, 60, 60}));
  ASSERT_TRUE(pre.ok() && big.ok());
  const std::string a = Fixture("scene_64x48.png"), b = Fixture("scene_61x47.png");
  auto first = (*pre)->Run({a}, &pool);
  ASSERT_TRUE(first.ok());
  const std::vector<float> want(first->data_as<float>(),
                                first->data_as<float>() + first->num_elements());
  const std::byte* bytes = first->data();
  *first = Tensor();                      // its bytes go back to the pool
  ASSERT_TRUE((*big)->Run({b, a}).ok());  // other sizes through the same thread's buffers
  ASSERT_TRUE((*pre)->Run({b}, &pool).ok());
  auto again = (*pre)->Run({a}, &pool);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(pool.stats().reused, 2u);
  EXPECT_EQ(again->data(), bytes);
  ASSERT_EQ(again->num_elements(), static_cast<int64_t>(want.size()));
  EXPECT_EQ(std::memcmp(again->data(), want.data(), want.size() * 4), 0);
  std::vector<float> second = FixtureFloats("odd_png.f32");  // b, as BatchOfTwoStacksItems
  auto b_again = (*pre)->Run({b});
  ASSERT_TRUE(b_again.ok());
  EXPECT_EQ(std::memcmp(b_again->data(), second.data(), second.size() * 4), 0);
}

TEST(ImagePreprocessorTest, OnePixelImageIsUpscaled) {
  cv::Mat one(1, 1, CV_8UC3, cv::Scalar(10, 20, 30));  // B, G, R
  std::vector<uint8_t> png;
  ASSERT_TRUE(cv::imencode(".png", one, png));
  auto c = ImageNetConfig(8, 8);
  c.mean = {};
  c.std = {};
  auto pre = ImagePreprocessor::Create(c, Spec({3, 8, 8}));
  ASSERT_TRUE(pre.ok());
  auto t = (*pre)->Run({std::string(png.begin(), png.end())});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_FLOAT_EQ(t->data_as<float>()[0], 30.0f / 255.0f);        // R plane
  EXPECT_FLOAT_EQ(t->data_as<float>()[64 + 63], 20.0f / 255.0f);  // G plane
  EXPECT_FLOAT_EQ(t->data_as<float>()[128 + 5], 10.0f / 255.0f);  // B plane
}

struct BadInput {
  const char* what;
  std::string bytes;
  StatusCode code;
  const char* message_part;
};

TEST(ImagePreprocessorTest, BadInputsAnswerClearErrors) {
  std::string jpeg = Fixture("scene_64x48.jpg");
  std::string png = Fixture("scene_64x48.png");
  std::string huge = png.substr(0, 33);
  const unsigned char dims[8] = {0x00, 0x00, 0x27, 0x10, 0x00, 0x00, 0x27, 0x10};  // 10000 x 10000
  huge.replace(16, 8, reinterpret_cast<const char*>(dims), 8);
  std::string zero = png;
  std::memset(&zero[16], 0, 4);
  std::string corrupt = png;  // IDAT bytes flipped: the CRC check fails
  for (size_t i = 60; i < 90; ++i) corrupt[i] = static_cast<char>(~corrupt[i]);
  BadInput cases[] = {
      {"empty", "", StatusCode::kInvalidArgument, "empty"},
      {"random bytes", "\x13\x37garbage-garbage-garbage", StatusCode::kInvalidArgument,
       "not a JPEG"},
      {"truncated jpeg", jpeg.substr(0, jpeg.size() / 2), StatusCode::kInvalidArgument,
       "truncated"},
      {"truncated png", png.substr(0, png.size() / 2), StatusCode::kInvalidArgument, "decode"},
      {"jpeg header only", jpeg.substr(0, 30), StatusCode::kInvalidArgument, "truncated"},
      {"truncated jpeg, EOI appended", jpeg.substr(0, jpeg.size() / 2) + "\xFF\xD9",
       StatusCode::kInvalidArgument, "truncated"},
      {"corrupt png", corrupt, StatusCode::kInvalidArgument, "cannot decode PNG"},
      {"zero-sized png", zero, StatusCode::kInvalidArgument, "zero size"},
      {"past 64 MP", huge, StatusCode::kPayloadTooLarge, "10000x10000"},
  };
  auto pre = ImagePreprocessor::Create(ImageNetConfig(32, 28), Spec({3, 28, 28}));
  ASSERT_TRUE(pre.ok());
  for (const auto& c : cases) {
    auto t = (*pre)->Run({c.bytes});
    ASSERT_FALSE(t.ok()) << c.what;
    EXPECT_EQ(t.status().code(), c.code) << c.what << ": " << t.status().ToString();
    EXPECT_NE(t.status().message().find(c.message_part), std::string::npos)
        << c.what << ": " << t.status().message();
  }
}

TEST(ImagePreprocessorTest, PixelLimitIsConfigurable) {
  auto c = ImageNetConfig(32, 28);
  c.max_pixels = 64 * 48 - 1;
  auto pre = ImagePreprocessor::Create(c, Spec({3, 28, 28}));
  ASSERT_TRUE(pre.ok());
  EXPECT_EQ((*pre)->Run({Fixture("scene_64x48.png")}).status().code(),
            StatusCode::kPayloadTooLarge);
  c.max_pixels = 64 * 48;
  pre = ImagePreprocessor::Create(c, Spec({3, 28, 28}));
  ASSERT_TRUE(pre.ok());
  EXPECT_TRUE((*pre)->Run({Fixture("scene_64x48.png")}).ok());
}

TEST(ImagePreprocessorTest, ItemErrorsNameTheItem) {
  auto pre = ImagePreprocessor::Create(ImageNetConfig(32, 28), Spec({3, 28, 28}));
  ASSERT_TRUE(pre.ok());
  auto t = (*pre)->Run({Fixture("scene_64x48.png"), "nope"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().rfind("item 1: ", 0), 0u) << t.status().message();
}

TEST(ImagePreprocessorTest, ImageOfTheWrongSizeForAFixedInput) {
  config::PreprocessConfig c;
  c.kind = config::PreprocessKind::kImage;
  c.color = config::ColorOrder::kGrayscale;
  auto pre = ImagePreprocessor::Create(c, Spec({1, 8, 8}));
  ASSERT_TRUE(pre.ok());
  EXPECT_TRUE((*pre)->Run({Fixture("digit_8x8.png")}).ok());
  auto t = (*pre)->Run({Fixture("scene_64x48.png")});
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("64x48"), std::string::npos) << t.status().message();
}

TEST(ImagePreprocessorTest, RejectsInconsistentConfig) {
  EXPECT_FALSE(ImagePreprocessor::Create(ImageNetConfig(256, 224), Spec({3, 200, 200})).ok());
  EXPECT_FALSE(ImagePreprocessor::Create(ImageNetConfig(256, 224), Spec({1, 224, 224})).ok());
  EXPECT_FALSE(ImagePreprocessor::Create(ImageNetConfig(256, 224), Spec({3, 224})).ok());
  EXPECT_FALSE(
      ImagePreprocessor::Create(ImageNetConfig(256, 224), Spec({3, 224, 224}, DataType::kInt64))
          .ok());
  auto c = ImageNetConfig(256, 224);
  c.mean = {0.5f, 0.5f};
  EXPECT_FALSE(ImagePreprocessor::Create(c, Spec({3, 224, 224})).ok());
  c = ImageNetConfig(256, 224);
  c.color = config::ColorOrder::kGrayscale;  // one channel, the input wants three
  EXPECT_FALSE(ImagePreprocessor::Create(c, Spec({3, 224, 224})).ok());
  c = ImageNetConfig(0, 0);
  c.width = 10;
  EXPECT_FALSE(ImagePreprocessor::Create(c, Spec({3, -1, -1})).ok());
  EXPECT_TRUE(ImagePreprocessor::Create(ImageNetConfig(256, 224), Spec({3, 224, 224})).ok());
}

}  // namespace
}  // namespace inferd::pipeline

namespace inferd::pipeline {
namespace {

// Corrupted images must answer a Status, never crash or hang: flip, cut and
// splice bytes of every fixture format with a fixed seed.
TEST(ImagePreprocessorTest, MangledImagesNeverCrash) {
  auto pre = ImagePreprocessor::Create(ImageNetConfig(32, 28), Spec({3, 28, 28}));
  ASSERT_TRUE(pre.ok());
  uint32_t state = 12345;
  auto next = [&state]() {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  int ok = 0, failed = 0;
  for (const char* name : {"scene_64x48.jpg", "scene_64x48.png", "scene_64x48.bmp",
                           "scene_64x48_lossless.webp", "exif6_48x64.jpg"}) {
    const std::string original = Fixture(name);
    ASSERT_FALSE(original.empty()) << "fixture " << name << " is missing or empty";
    for (int round = 0; round < 60; ++round) {
      std::string bytes = original;
      switch (round % 3) {
        case 0:  // flip a few bytes, often in the header
          for (int k = 0; k < 4; ++k) {
            size_t at = next() % std::min<size_t>(bytes.size(), round % 2 ? bytes.size() : 64);
            bytes[at] = static_cast<char>(next());
          }
          break;
        case 1:  // cut
          bytes.resize(next() % bytes.size());
          break;
        case 2:  // splice the tail of another place in
          bytes =
              bytes.substr(0, next() % bytes.size()) + original.substr(next() % original.size());
          break;
      }
      auto t = (*pre)->Run({bytes});
      (t.ok() ? ok : failed)++;
      if (!t.ok()) {
        EXPECT_TRUE(t.status().code() == StatusCode::kInvalidArgument ||
                    t.status().code() == StatusCode::kPayloadTooLarge)
            << name << " round " << round << ": " << t.status().ToString();
      }
    }
  }
  EXPECT_GT(failed, 50);  // most mangled images are refused
}

}  // namespace
}  // namespace inferd::pipeline
