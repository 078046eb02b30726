#include "optimize/export_script.h"

#include <gtest/gtest.h>

namespace inferd::optimize {
namespace {

TEST(ExportScript, TheSpecIsTheConfigsTensors) {
  config::ModelConfig c;
  c.name = "m";
  c.inputs = {{"image", DataType::kFp32, {3, -1, -1}, std::nullopt},
              {"scale", DataType::kInt64, {}, std::nullopt}};
  c.outputs = {{"logits", DataType::kFp32, {10}, std::nullopt}};
  EXPECT_EQ(ExportSpecJson(c),
            R"({"inputs":[{"name":"image","datatype":"FP32","dims":[3,-1,-1]},)"
            R"({"name":"scale","datatype":"INT64","dims":[]}],"outputs":["logits"],)"
            R"("text":false,"variable_dim":8})");
  // A text model: one shared sequence axis, an example length within max_length.
  c.inputs = {{"input_ids", DataType::kInt64, {-1}, 0.0}};
  c.outputs.clear();
  c.preprocess.kind = config::PreprocessKind::kText;
  c.preprocess.max_length = 12;
  EXPECT_EQ(ExportSpecJson(c),
            R"({"inputs":[{"name":"input_ids","datatype":"INT64","dims":[-1]}],"outputs":[],)"
            R"("text":true,"variable_dim":12})");
}

TEST(ExportScript, APythonThatCannotRunIsAPrecondition) {
  ExportRequest r;
  r.python = "/nonexistent/python3";
  r.script = "/nonexistent/optimize_export.py";
  auto result = RunExportScript(r);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find("/nonexistent/python3"), std::string::npos);
}

}  // namespace
}  // namespace inferd::optimize
