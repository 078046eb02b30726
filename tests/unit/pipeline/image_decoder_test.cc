#include "pipeline/image_decoder.h"

#include <gtest/gtest.h>

#include <cstring>

#include "unit/pipeline/fixtures.h"

namespace inferd::pipeline {
namespace {

using testing::Fixture;

// Decoding only a region of a JPEG (skipped rows, cropped iMCU columns) gives
// the same bytes inside the region as decoding the whole image.
TEST(ImageDecoderTest, JpegRegionEqualsTheWholeDecode) {
  for (const char* name : {"scene_203x121.jpg", "scene_121x203.jpg", "scene_progressive.jpg"}) {
    SCOPED_TRACE(name);
    const std::string jpeg = Fixture(name);
    auto whole = DecodeImage(jpeg, {});
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    const cv::Mat& all = whole->pixels;
    const int rx = all.cols / 2 - 7, ry = all.rows / 3 + 1, rw = all.cols / 4, rh = all.rows / 5;
    DecodeOptions options;
    options.region[0] = rx;
    options.region[1] = ry;
    options.region[2] = rw;
    options.region[3] = rh;
    auto part = DecodeImage(jpeg, options);
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    const cv::Mat& p = part->pixels;
    EXPECT_LT(p.cols * p.rows, all.cols * all.rows);  // really partial
    ASSERT_LE(part->x0, rx);
    ASSERT_LE(part->y0, ry);
    ASSERT_GE(part->x0 + p.cols, rx + rw);
    ASSERT_GE(part->y0 + p.rows, ry + rh);
    ASSERT_EQ(p.type(), all.type());
    for (int y = ry; y < ry + rh; ++y) {
      const uint8_t* a = all.ptr<uint8_t>(y) + static_cast<size_t>(rx) * all.channels();
      const uint8_t* b =
          p.ptr<uint8_t>(y - part->y0) + static_cast<size_t>(rx - part->x0) * p.channels();
      ASSERT_EQ(std::memcmp(a, b, static_cast<size_t>(rw) * all.channels()), 0) << "row " << y;
    }
  }
}

TEST(ImageDecoderTest, RegionIsIgnoredForRotatedJpegsAndOtherFormats) {
  DecodeOptions options;
  options.region[0] = 2;
  options.region[1] = 2;
  options.region[2] = 4;
  options.region[3] = 4;
  for (const char* name : {"exif6_48x64.jpg", "scene_64x48.png"}) {
    auto image = DecodeImage(Fixture(name), options);
    ASSERT_TRUE(image.ok()) << name;
    EXPECT_EQ(image->x0, 0) << name;
    EXPECT_EQ(image->y0, 0) << name;
    EXPECT_EQ(image->pixels.cols * image->pixels.rows, 64 * 48) << name;
  }
}

}  // namespace
}  // namespace inferd::pipeline
