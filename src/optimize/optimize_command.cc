#include "optimize/optimize_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "backend/registry.h"
#include "optimize/optimize_stamp.h"
#include "optimize/version_optimizer.h"
#include "repository/model_store.h"

namespace inferd::optimize {
namespace {

namespace fs = std::filesystem;

constexpr int kExitStep = 1;
constexpr int kExitBadStore = 2;
constexpr int kExitUnwritable = 3;

std::string ExecutableDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "." : exe.parent_path().string();
}

std::vector<std::string> SplitNames(const std::string& list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

// Creates and removes a file in `dir`: what the optimizer will do there.
// access(W_OK) is not enough: it says yes to root on a read-only mount.
Status ProbeWritable(const std::string& dir) {
  std::string path = (fs::path(dir) / ".inferd-optimize-probe-XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) return FailedPrecondition(std::strerror(errno));
  close(fd);
  unlink(path.c_str());
  return Status::Ok();
}

}  // namespace

std::string FindExportScript(const std::string& flag) {
  if (!flag.empty()) return flag;
  const std::string exe_dir = ExecutableDir();
  std::vector<std::string> candidates = {exe_dir + "/tools/optimize_export.py",
                                         exe_dir + "/../tools/optimize_export.py"};
#ifdef INFERD_SOURCE_TOOLS_DIR
  candidates.push_back(std::string(INFERD_SOURCE_TOOLS_DIR) + "/optimize_export.py");
#endif
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return fs::weakly_canonical(c, ec).string();
  }
  return "";
}

int RunOptimizeCommand(const OptimizeCommandOptions& options, std::ostream& out,
                       std::ostream& err) {
  const std::string self = "inferd optimize: ";
  repository::ModelStore store(options.model_store);
  if (Status s = store.Check(); !s.ok()) return err << self << s.message() << "\n", kExitBadStore;

  // The models asked for, and the versions to optimize: every version of a
  // TorchScript model (the highest is served; older ones may be asked for).
  std::vector<std::string> names = options.models == "all" || options.models.empty()
                                       ? store.ListModels()
                                       : SplitNames(options.models);
  std::vector<VersionJob> jobs;
  int exit_code = 0;
  for (const auto& name : names) {
    auto stored = store.Read(name);
    if (!stored.ok()) {
      err << self << stored.status().message() << "\n";
      return kExitBadStore;
    }
    if (!stored->config) {
      err << self << "model '" << name << "': " << stored->config_error << "\n";
      exit_code = kExitBadStore;
      continue;
    }
    if (stored->config->backend != config::BackendKind::kTorchscript) {
      out << "model " << name << ": backend " << config::Name(stored->config->backend)
          << ": nothing to optimize (only TorchScript models are exported)\n";
      continue;
    }
    if (stored->versions.empty()) {
      out << "model " << name << ": no version holds a model.pt: nothing to optimize\n";
      continue;
    }
    for (const auto& v : stored->versions) {
      jobs.push_back(
          {*stored->config, stored->dir, fs::path(v.model_path).parent_path().string(), v.version});
    }
  }

  for (const auto& job : jobs) {
    if (Status s = ProbeWritable(job.version_dir); !s.ok()) {
      err << self << "cannot write into '" << job.version_dir << "' (" << s.message()
          << "): the candidates are written beside model.pt; nothing was written\n";
      return kExitUnwritable;
    }
  }
  if (jobs.empty()) return exit_code;

  VersionOptimizer::Options vo;
  vo.python = options.python;
  vo.export_script = FindExportScript(options.export_script);
  vo.threads = options.threads;
  vo.force = options.force;
  if (vo.export_script.empty()) {
    err << self << "tools/optimize_export.py not found beside the binary or in the source tree; "
        << "name it with --export-script\n";
    return kExitStep;
  }
  auto script_digest = Sha256File(vo.export_script);
  if (!script_digest.ok())
    return err << self << script_digest.status().message() << "\n", kExitStep;
  vo.script_digest = *script_digest;

  backend::CreateOptions create;
  create.warm_up = false;  // the comparison's first pass warms each model up
  auto torch = backend::Registry::Create("torchscript", create);
  if (!torch.ok()) return err << self << torch.status().message() << "\n", kExitStep;
  std::unique_ptr<backend::Backend> onnx;
  if (backend::Registry::Find("onnxruntime") != nullptr) {
    auto created = backend::Registry::Create("onnxruntime", create);
    if (!created.ok()) return err << self << created.status().message() << "\n", kExitStep;
    onnx = std::move(*created);
  } else {
    err << self << "this binary has no onnxruntime backend: only the ONNX export and the int8 "
        << "copy are made, and they are not compared (scripts/setup.sh installs ONNX Runtime)\n";
  }
  (*torch)->InitExecutorThread({}, options.threads);
  if (onnx) onnx->InitExecutorThread({}, options.threads);

  const VersionOptimizer optimizer(vo, torch->get(), onnx.get());
  for (const auto& job : jobs) {
    auto outcome = optimizer.Run(job);
    if (!outcome.ok()) {
      err << self << "model '" << job.config.name << "' version " << job.version << ": "
          << outcome.status().message() << "\n";
      exit_code = kExitStep;
      continue;
    }
    if (!outcome->report.rows.empty()) {
      PrintReport(outcome->report, outcome->up_to_date ? "up to date (nothing made again)" : "",
                  out);
    }
    if (!outcome->problem.ok()) {
      err << self << "model '" << job.config.name << "' version " << job.version << ": "
          << outcome->problem.message() << "\n";
      exit_code = kExitStep;
    }
  }
  return exit_code;
}

}  // namespace inferd::optimize
