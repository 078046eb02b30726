#include "optimize/export_script.h"

#include <fcntl.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/file_text.h"
#include "common/json_writer.h"

extern char** environ;

namespace inferd::optimize {
namespace {

std::string Tail(const std::string& text, size_t max_bytes = 2000) {
  if (text.size() <= max_bytes) return text;
  return "..." + text.substr(text.size() - max_bytes);
}

}  // namespace

std::string ExportSpecJson(const config::ModelConfig& config) {
  JsonWriter w;
  w.BeginObject();
  w.Key("inputs").BeginArray();
  for (const auto& spec : config.inputs) {
    w.BeginObject();
    w.Key("name").String(spec.name);
    w.Key("datatype").String(DataTypeName(spec.dtype));
    w.Key("dims").BeginArray();
    for (int64_t d : spec.dims) w.Int(d);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("outputs").BeginArray();
  for (const auto& spec : config.outputs) w.String(spec.name);
  w.EndArray();
  const bool text = config.preprocess.kind == config::PreprocessKind::kText;
  w.Key("text").Bool(text);
  // Long enough that no dim of the example is 1 (an exporter may fold a 1 away).
  w.Key("variable_dim").Int(text ? std::min(config.preprocess.max_length, 16) : 8);
  w.EndObject();
  return w.Take();
}

StatusOr<ExportResult> RunExportScript(const ExportRequest& r) {
  if (access(r.python.c_str(), X_OK) != 0) {
    return FailedPrecondition("cannot run '" + r.python +
                              "' (Debian's python3 with python3-torch: scripts/setup.sh)");
  }
  if (access(r.script.c_str(), R_OK) != 0) {
    return FailedPrecondition("cannot read the export script '" + r.script +
                              "' (--export-script names it)");
  }
  std::vector<std::string> args = {
      r.python, r.script,   "--model-pt", r.model_pt, "--spec",    r.spec_json,
      "--onnx", r.onnx_out, "--result",   r.result,   "--threads", std::to_string(r.threads)};
  if (!r.int8_out.empty()) {
    args.push_back("--int8");
    args.push_back(r.int8_out);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, r.log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, r.python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return FailedPrecondition("cannot start '" + r.python + "': " + std::strerror(spawned));
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) return Internal(std::string("waitpid: ") + std::strerror(errno));
  }
  const std::string log = ReadWholeFile(r.log);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    const std::string how = WIFEXITED(wstatus)
                                ? "exited with " + std::to_string(WEXITSTATUS(wstatus))
                                : "was killed by signal " + std::to_string(WTERMSIG(wstatus));
    return Internal(r.script + " " + how + ":\n" + Tail(log));
  }
  const std::string json = ReadWholeFile(r.result);
  simdjson::dom::parser parser;
  simdjson::padded_string text(json);
  simdjson::dom::element root, onnx, int8;
  if (parser.parse(text).get(root) || root["onnx"].get(onnx)) {
    return Internal(r.script + " wrote no result to '" + r.result + "':\n" + Tail(log));
  }
  ExportResult out;
  std::string_view reason;
  int64_t n = 0;
  if (onnx["ok"].get(out.onnx_ok)) return Internal("the export script's result has no onnx.ok");
  if (!onnx["reason"].get(reason)) out.onnx_reason = reason;
  if (!onnx["opset"].get(n)) out.opset = static_cast<int>(n);
  if (!root["int8"].get(int8)) {
    if (int8["ok"].get(out.int8_ok)) return Internal("the export script's result has no int8.ok");
    if (!int8["reason"].get(reason)) out.int8_reason = reason;
    if (!int8["quantized"].get(n)) out.quantized = static_cast<int>(n);
    if (!int8["left"].get(n)) out.left = static_cast<int>(n);
    std::string_view scheme;
    if (!int8["scheme"].get(scheme)) out.int8_scheme = scheme;
    simdjson::dom::array notes;
    if (!int8["notes"].get(notes)) {
      for (simdjson::dom::element note : notes) {
        std::string_view s;
        if (!note.get(s)) out.int8_notes += (out.int8_notes.empty() ? "" : ", ") + std::string(s);
      }
    }
  }
  return out;
}

}  // namespace inferd::optimize
