// The pure parts of archive/: entry names that may be unpacked, the labels
// file from index_to_name.json, the config written from a manifest, and the
// handler rows both sides of the worker channel read.
#include "archive/mar_manifest.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "archive/zip_extract.h"
#include "common/handler_rows.h"
#include "common/tensor.h"

namespace inferd::archive {
namespace {

TEST(ZipExtract, RefusesNamesThatLeaveTheFolder) {
  EXPECT_TRUE(IsSafeEntryName("handler.py"));
  EXPECT_TRUE(IsSafeEntryName("MAR-INF/MANIFEST.json"));
  EXPECT_TRUE(IsSafeEntryName("a/..b/c..d"));
  EXPECT_FALSE(IsSafeEntryName("../evil.py"));
  EXPECT_FALSE(IsSafeEntryName("a/../../evil.py"));
  EXPECT_FALSE(IsSafeEntryName("a/.."));
  EXPECT_FALSE(IsSafeEntryName("/etc/passwd"));
  EXPECT_FALSE(IsSafeEntryName("a\\..\\b"));
  EXPECT_FALSE(IsSafeEntryName(""));
  EXPECT_FALSE(IsSafeEntryName(std::string("a\0b", 3)));
}

TEST(ZipExtract, RefusesAFileThatIsNotAZip) {
  const std::string path = testing::TempDir() + "not_a_zip.mar";
  std::ofstream(path) << "PK\x03\x04 but nothing after";
  Status st = ExtractZip(path, testing::TempDir() + "out");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("is not a readable zip file"), std::string::npos) << st.message();
}

TEST(MarManifest, LabelsTakeTheLastElementOfAList) {
  const std::string path = testing::TempDir() + "index_to_name.json";
  std::ofstream(path) << R"({"1": ["n02", "goldfish"], "0": "tench", "3": ["x", "y", "hen"]})";
  auto labels = LabelsFromIndexToName(path);
  ASSERT_TRUE(labels.ok()) << labels.status().message();
  EXPECT_EQ(*labels, "tench\ngoldfish\n2\nhen\n");
  std::ofstream(path) << R"([1, 2])";
  EXPECT_FALSE(LabelsFromIndexToName(path).ok());
}

TEST(MarManifest, ImageClassifierOfTorchScriptRunsNatively) {
  MarManifest m;
  m.handler = "image_classifier";
  m.serialized_file = "resnet.pt";
  EXPECT_TRUE(RunsNatively(m));
  const std::string yaml = WriteServingConfig(m, {}, "labels.txt");
  EXPECT_NE(yaml.find("backend: torchscript"), std::string::npos);
  EXPECT_NE(yaml.find("resize: 256, center_crop: 224"), std::string::npos);
  EXPECT_NE(yaml.find("{kind: topk, k: 5, labels: labels.txt}"), std::string::npos);
  m.model_file = "model.py";  // an eager model: its class is Python
  EXPECT_FALSE(RunsNatively(m));
  m.model_file.clear();
  m.handler = "handler.py";
  EXPECT_FALSE(RunsNatively(m));
}

TEST(MarManifest, SettingsOverridesWinOverTheArchiveAndDefaults) {
  MarManifest m;
  m.handler = "handler.py";
  std::string yaml = WriteServingConfig(m, {}, "");
  EXPECT_NE(yaml.find("backend: python"), std::string::npos);
  EXPECT_NE(yaml.find("max_batch_size: 1\n"), std::string::npos);
  EXPECT_NE(yaml.find("request_timeout_ms: 120000\n"), std::string::npos);  // TorchServe's 120 s
  m.settings.batch_size = 8;
  m.settings.max_batch_delay_ms = 20;
  m.settings.workers = 3;
  ServingSettings over;
  over.response_timeout_s = 7;
  yaml = WriteServingConfig(m, over, "");
  EXPECT_NE(yaml.find("max_batch_size: 8\n"), std::string::npos);
  EXPECT_NE(yaml.find("max_queue_delay_us: 20000"), std::string::npos);
  EXPECT_NE(yaml.find("instances: {count: 3, threads: 1}"), std::string::npos);
  EXPECT_NE(yaml.find("max_execution_ms: 7000\n"), std::string::npos);
  over.batch_size = 2;
  EXPECT_NE(WriteServingConfig(m, over, "").find("max_batch_size: 2\n"), std::string::npos);
}

// inferd's own model-config.yaml key: workerMemoryLimit becomes the config's
// worker_memory_limit in bytes; a size it cannot read refuses the archive.
TEST(MarManifest, WorkerMemoryLimitFromModelConfigYaml) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "memlimit";
  fs::create_directories(dir / "MAR-INF");
  std::ofstream(dir / "MAR-INF" / "MANIFEST.json")
      << R"({"model": {"handler": "h.py", "configFile": "model-config.yaml"}})";
  std::ofstream(dir / "model-config.yaml") << "batchSize: 2\nworkerMemoryLimit: 600M\n";
  auto m = ReadMarManifest(dir.string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(m->settings.worker_memory_limit.has_value());
  EXPECT_EQ(*m->settings.worker_memory_limit, int64_t{600} << 20);
  EXPECT_NE(WriteServingConfig(*m, {}, "").find("worker_memory_limit: 629145600\n"),
            std::string::npos);
  std::ofstream(dir / "model-config.yaml") << "workerMemoryLimit: plenty\n";
  m = ReadMarManifest(dir.string());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("workerMemoryLimit: expected a size"), std::string::npos);
}

TEST(MarManifest, ManifestWithoutHandlerIsRefused) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "nohandler";
  fs::create_directories(dir / "MAR-INF");
  std::ofstream(dir / "MAR-INF" / "MANIFEST.json") << R"({"model": {"modelName": "m"}})";
  auto m = ReadMarManifest(dir.string());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("model.handler is missing"), std::string::npos);
  std::ofstream(dir / "MAR-INF" / "MANIFEST.json")
      << R"({"model": {"handler": "h.py", "serializedFile": "gone.pt"}})";
  m = ReadMarManifest(dir.string());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("'gone.pt'"), std::string::npos);
}

TEST(HandlerRows, RoundTripAndRefuseLengthsPastTheRow) {
  const size_t size = HandlerRowSize("text/plain", 5);
  std::vector<std::byte> row(size + 7);  // padding after the row, as in a batch
  WriteHandlerRow("text/plain", "hello", row.data());
  auto read = ReadHandlerRow(row.data(), row.size());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->content_type, "text/plain");
  EXPECT_EQ(read->body, "hello");
  EXPECT_FALSE(ReadHandlerRow(row.data(), size - 1).ok());
  EXPECT_FALSE(ReadHandlerRow(row.data(), 3).ok());
}

}  // namespace
}  // namespace inferd::archive
