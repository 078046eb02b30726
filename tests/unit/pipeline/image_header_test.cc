#include "pipeline/image_header.h"

#include <gtest/gtest.h>

#include "unit/pipeline/fixtures.h"

namespace inferd::pipeline {
namespace {

using testing::Fixture;

TEST(ProbeImageTest, ReadsDimensionsOfEachFormat) {
  struct Case {
    const char* file;
    ImageFormat format;
    int64_t w, h;
  } cases[] = {
      {"scene_64x48.jpg", ImageFormat::kJpeg, 64, 48},
      {"scene_64x48.png", ImageFormat::kPng, 64, 48},
      {"scene_64x48.bmp", ImageFormat::kBmp, 64, 48},
      {"scene_64x48_lossless.webp", ImageFormat::kWebp, 64, 48},
      {"portrait_37x70.png", ImageFormat::kPng, 37, 70},
      {"exif6_48x64.jpg", ImageFormat::kJpeg, 48, 64},  // stored size, before EXIF rotation
  };
  for (const auto& c : cases) {
    auto info = ProbeImage(Fixture(c.file));
    ASSERT_TRUE(info.ok()) << c.file << ": " << info.status().ToString();
    EXPECT_EQ(info->format, c.format) << c.file;
    EXPECT_EQ(info->width, c.w) << c.file;
    EXPECT_EQ(info->height, c.h) << c.file;
    EXPECT_TRUE(info->complete) << c.file;
  }
}

TEST(ProbeImageTest, TruncatedJpegIsIncomplete) {
  std::string jpeg = Fixture("scene_64x48.jpg");
  auto info = ProbeImage(jpeg.substr(0, jpeg.size() * 2 / 3));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_FALSE(info->complete);
}

TEST(ProbeImageTest, HeaderCutShortIsAnError) {
  std::string jpeg = Fixture("scene_64x48.jpg");
  EXPECT_EQ(ProbeImage(jpeg.substr(0, 20)).status().code(), StatusCode::kInvalidArgument);
  std::string png = Fixture("scene_64x48.png");
  EXPECT_EQ(ProbeImage(png.substr(0, 18)).status().code(), StatusCode::kInvalidArgument);
}

TEST(ProbeImageTest, RejectsUnknownBytesAndEmpty) {
  EXPECT_EQ(ProbeImage("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ProbeImage("GIF89a\x01\x00\x01\x00").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ProbeImage("hello world, not an image").status().code(), StatusCode::kInvalidArgument);
}

TEST(ProbeImageTest, ForgedHugePngHeaderIsReadWithoutDecoding) {
  std::string png = Fixture("scene_64x48.png").substr(0, 33);
  // IHDR width/height (big endian) at 16 and 20: 100000 x 100000.
  const unsigned char dims[8] = {0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0};
  png.replace(16, 8, reinterpret_cast<const char*>(dims), 8);
  auto info = ProbeImage(png);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->width, 100000);
  EXPECT_EQ(info->height, 100000);
}

}  // namespace
}  // namespace inferd::pipeline
