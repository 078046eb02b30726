#include "repository/version_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace inferd::repository {
namespace {
namespace fs = std::filesystem;

TEST(VersionFiles, KindsOfTheKnownNames) {
  EXPECT_EQ(ModelFileKind("model.pt"), "torchscript");
  EXPECT_EQ(ModelFileKind("model.onnx"), "onnx");
  EXPECT_EQ(ModelFileKind("model.opt.onnx"), "onnx_optimized");
  EXPECT_EQ(ModelFileKind("model.int8.onnx"), "onnx_int8");
  EXPECT_EQ(ModelFileKind("model.ubj"), "xgboost");
  EXPECT_EQ(ModelFileKind("optimize.json"), "");
  EXPECT_EQ(ModelFileKind("model.onnx.tmp"), "");
}

TEST(VersionFiles, ListsTheModelFilesPresentAndMarksTheServedOne) {
  const fs::path dir =
      fs::temp_directory_path() / ("inferd_version_files_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "model.opt.onnx");  // a folder, not a model file
  std::ofstream(dir / "model.int8.onnx") << "int8";
  std::ofstream(dir / "model.pt") << "torchscript";
  std::ofstream(dir / "optimize.json") << "{}";
  std::ofstream(dir / "notes.txt") << "x";
  const auto files = ListVersionFiles(dir.string(), "model.pt");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].file, "model.pt");
  EXPECT_EQ(files[0].kind, "torchscript");
  EXPECT_EQ(files[0].bytes, 11);
  EXPECT_TRUE(files[0].served);
  EXPECT_EQ(files[1].file, "model.int8.onnx");
  EXPECT_EQ(files[1].kind, "onnx_int8");
  EXPECT_FALSE(files[1].served);
  EXPECT_TRUE(ListVersionFiles((dir / "missing").string(), "model.pt").empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace inferd::repository
