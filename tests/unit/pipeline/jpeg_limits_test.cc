// Issue 9's image classes: the probe and the decoder agree on a JPEG's size
// by construction (libjpeg reads both), the decode loop cannot spin, a file of
// many scans is stopped, and CMYK decodes as PIL does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/image_decoder.h"
#include "pipeline/image_header.h"
#include "pipeline/image_preprocessor.h"
#include "pipeline/jpeg_decoder.h"
#include "unit/pipeline/fixtures.h"

namespace inferd::pipeline {
namespace {

using testing::Fixture;
using testing::ReadFile;

std::string ImageFixture(const std::string& name) {
  return ReadFile(testing::FixtureDir() + "/../images/" + name);
}

// Offset of the first marker `code` (FF code) at a segment boundary, walking
// the segments from SOI up to the first SOS.
size_t FindMarker(const std::string& jpeg, unsigned char code) {
  size_t pos = 2;
  while (pos + 4 <= jpeg.size()) {
    const auto m = static_cast<unsigned char>(jpeg[pos + 1]);
    if (m == code) return pos;
    if (m == 0xDA) break;
    pos += 2 + ((static_cast<unsigned char>(jpeg[pos + 2]) << 8) |
                static_cast<unsigned char>(jpeg[pos + 3]));
  }
  return std::string::npos;
}

// A JPEG that a hand-written marker scanner and libjpeg read differently:
// after the real frame header (64x48), "FF 00" + a 2-byte length. libjpeg
// skips FF 00 as stray bytes and then a comment segment whole; a scanner that
// takes 00 for a marker with a length jumps into the comment and finds a
// second frame header there, of `height` rows. The old probe reported
// `height`; libjpeg decodes 48 rows: with height > 48 the partial decode loop
// asked libjpeg for rows that do not exist, for ever.
std::string MarkerTrickJpeg(int height) {
  std::string jpeg = Fixture("scene_64x48.jpg");
  const size_t sof = FindMarker(jpeg, 0xC0);
  EXPECT_NE(sof, std::string::npos);
  const size_t after_sof = sof + 2 + ((static_cast<unsigned char>(jpeg[sof + 2]) << 8) |
                                      static_cast<unsigned char>(jpeg[sof + 3]));
  std::string hidden = jpeg.substr(sof, after_sof - sof);  // a copy of the frame header...
  hidden[5] = static_cast<char>(height >> 8);              // ...with another height
  hidden[6] = static_cast<char>(height & 0xFF);
  std::string comment = std::string(4, '\0') + hidden;
  comment.resize(comment.size() + 1, '\0');
  const size_t com_len = comment.size() + 2;
  std::string trick = std::string("\xFF\x00\x00\x0A", 4) + "\xFF\xFE" +
                      static_cast<char>(com_len >> 8) + static_cast<char>(com_len & 0xFF) +
                      comment;
  jpeg.insert(after_sof, trick);
  return jpeg;
}

TEST(JpegLimitsTest, ProbeAndDecoderAgreeOnTheSizeByConstruction) {
  for (int height : {16, 480}) {
    const std::string jpeg = MarkerTrickJpeg(height);
    auto info = ProbeImage(jpeg);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->width, 64);
    EXPECT_EQ(info->height, 48) << "the probe must see what libjpeg sees";
    DecodeOptions options;
    auto image = DecodeImage(jpeg, options);
    ASSERT_TRUE(image.ok()) << image.status().ToString();
    EXPECT_EQ(image->pixels.cols, 64);
    EXPECT_EQ(image->pixels.rows, 48);
    // The partial decode (resize + crop) must finish: this hung before.
    config::PreprocessConfig pre;
    pre.kind = config::PreprocessKind::kImage;
    pre.resize = 40;
    pre.center_crop = 32;
    auto p = ImagePreprocessor::Create(pre, {"image", DataType::kFp32, {3, 32, 32}, std::nullopt});
    ASSERT_TRUE(p.ok());
    auto tensor = (*p)->Run({jpeg});
    EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
  }
}

TEST(JpegLimitsTest, ARegionPastTheImageIsAnErrorNotALoop) {
  const std::string jpeg = Fixture("scene_64x48.jpg");
  JpegRegion region{0, 30, 64, 40};  // rows 30..69 of 48
  auto decoded = DecodeJpeg(jpeg, true, &region);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("region outside the 64x48 image"), std::string::npos)
      << decoded.status().message();
}

// The segments of a progressive file, then its last scan repeated: libjpeg
// warns about the bogus progression and would go on absorbing scans, each a
// pass over the whole image, for as many as the file holds.
TEST(JpegLimitsTest, ManyScansAreRefused) {
  const std::string jpeg = ImageFixture("progressive.jpg");
  const size_t last_sos = jpeg.rfind("\xFF\xDA");
  const size_t eoi = jpeg.rfind("\xFF\xD9");
  ASSERT_NE(last_sos, std::string::npos);
  ASSERT_LT(last_sos, eoi);
  const std::string scan = jpeg.substr(last_sos, eoi - last_sos);
  std::string many = jpeg.substr(0, eoi);
  for (int i = 0; i < kMaxJpegScans + 20; ++i) many += scan;
  many += "\xFF\xD9";
  auto image = DecodeImage(many, DecodeOptions{});
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(image.status().message().find("more than 100 scans"), std::string::npos)
      << image.status().message();
  // The file itself (about 10 scans) decodes.
  EXPECT_TRUE(DecodeImage(jpeg, DecodeOptions{}).ok());
}

TEST(JpegLimitsTest, CmykDecodesLikePil) {
  const std::string jpeg = ImageFixture("cmyk.jpg");
  const std::string rgb = ImageFixture("cmyk.jpg.rgb");  // PIL's convert("RGB")
  auto header = ReadJpegHeader(jpeg);
  ASSERT_TRUE(header.ok());
  EXPECT_TRUE(header->cmyk);
  for (bool rgbx : {false, true}) {
    auto decoded = DecodeJpeg(jpeg, rgbx);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    const cv::Mat& m = decoded->pixels;
    ASSERT_EQ(static_cast<size_t>(m.rows) * m.cols * 3, rgb.size());
    const int n = rgbx ? 4 : 3;
    size_t differ = 0;
    for (int y = 0; y < m.rows; ++y) {
      for (int x = 0; x < m.cols; ++x) {
        for (int c = 0; c < 3; ++c) {
          differ += m.ptr<uint8_t>(y)[x * n + c] !=
                    static_cast<uint8_t>(rgb[(static_cast<size_t>(y) * m.cols + x) * 3 + c]);
        }
      }
    }
    EXPECT_EQ(differ, 0u) << "rgbx=" << rgbx;
  }
}

TEST(JpegLimitsTest, UnusualValidImagesDecode) {
  for (const char* name : {"progressive.jpg", "progressive_exif6.jpg", "cmyk.jpg", "gray.jpg",
                           "subsampled_odd_17x13.jpg", "one_by_one.jpg", "one_by_one.png",
                           "palette.png", "palette_transparent.png", "bilevel.png", "gray16.png",
                           "rgb48.png", "rgba.png", "gray_alpha.png", "bmp24.bmp",
                           "bmp_palette.bmp", "lossy.webp", "lossless.webp", "wide_300x2.png",
                           "exif3.jpg", "exif8.jpg", "full_chroma.jpg"}) {
    for (bool gray : {false, true}) {
      DecodeOptions options;
      options.grayscale = gray;
      auto image = DecodeImage(ImageFixture(name), options);
      ASSERT_TRUE(image.ok()) << name << ": " << image.status().ToString();
      EXPECT_GT(image->pixels.rows, 0) << name;
    }
  }
}

}  // namespace
}  // namespace inferd::pipeline
