// PythonBackend (`backend: python`): models served by a TorchServe handler in
// handler processes (handler_pool.h). The version folder is an unpacked
// archive (archive/mar_unpack.h); its MAR-INF/MANIFEST.json is the model file
// the store looks for, and names the handler. The worker script is inferd's
// own Python (share/inferd/python/: inferd_worker.py and the `ts` package
// handlers import), found beside the binary. A torchscript model with
// `isolation: process` comes here too (backend_set.cc): its model.pt runs in
// the same worker processes through inferd_tensor_worker.py.
// Registered under `python` (registry.h): fp32, no variants, batching.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "archive/mar_manifest.h"
#include "backend/python/handler_pool.h"
#include "backend/registry.h"

namespace inferd::backend::python {
namespace {
namespace fs = std::filesystem;

// $INFERD_PYTHON_DIR, then share/inferd/python beside or above the binary,
// then the source tree's (a build folder's binary): the folder holding the
// worker scripts, or "" when none does.
std::string FindPythonDir() {
  std::vector<fs::path> candidates;
  if (const char* dir = std::getenv("INFERD_PYTHON_DIR"); dir && *dir) candidates.push_back(dir);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path() / "share/inferd/python");
    candidates.push_back(exe.parent_path().parent_path() / "share/inferd/python");
  }
  candidates.push_back(INFERD_SOURCE_PYTHON_DIR);
  for (const auto& dir : candidates) {
    if (fs::is_regular_file(dir / "inferd_worker.py", ec)) return dir.string();
  }
  return "";
}

class PythonBackend : public Backend {
 public:
  // A `backend: python` model (an unpacked archive, its handler in handler
  // processes) or a torchscript model with `isolation: process` (model.pt
  // in worker processes through inferd_tensor_worker.py).
  StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& options) override {
    const config::ModelConfig& config = options.config;
    const std::string dir = FindPythonDir();
    if (dir.empty()) {
      return FailedPrecondition(
          "worker processes: inferd_worker.py not found (share/inferd/python beside the binary, "
          "or INFERD_PYTHON_DIR)");
    }
    HandlerPoolOptions o;
    o.process.python =
        std::getenv("INFERD_PYTHON") ? std::getenv("INFERD_PYTHON") : "/usr/bin/python3";
    o.process.model_name = config.name;
    o.process.batch_size = config.max_batch_size;
    if (config.backend == config::BackendKind::kPython) {
      // model_path: <model>/<version>/MAR-INF/MANIFEST.json
      const fs::path version_dir = fs::path(options.model_path).parent_path().parent_path();
      ASSIGN_OR_RETURN(archive::MarManifest manifest,
                       archive::ReadMarManifest(version_dir.string()));
      o.process.worker_script = dir + "/inferd_worker.py";
      o.process.model_dir = version_dir.string();
      o.process.handler = manifest.handler;
    } else {
      if (config.precision != config::Precision::kFp32) {
        return InvalidArgument("model '" + config.name +
                               "': isolation: process runs the model in fp32 (precision: " +
                               std::string(config::Name(config.precision)) + " is not offered)");
      }
      const fs::path model_file(options.model_path);
      o.process.worker_script = dir + "/inferd_tensor_worker.py";
      o.process.model_dir = model_file.parent_path().string();
      o.process.handler = model_file.filename().string();
      o.tensors = true;
      o.outputs = config.outputs;
    }
    const int64_t limit_ms =
        config.max_execution_ms > 0 ? config.max_execution_ms : config.request_timeout_ms;
    // A little under the watchdog's own limit, so that the pool gives the
    // process up (kills it, frees the executor) before the watchdog gives
    // up the executor's thread.
    o.max_execution = std::chrono::milliseconds(std::max<int64_t>(1, limit_ms * 9 / 10));
    o.process.start_timeout = std::chrono::milliseconds(std::max<int64_t>(limit_ms, 60000));
    o.workers = config.instances.automatic ? 1 : std::max(1, config.instances.count);
    // Unset: the model's workers together may hold at most the node's budget
    // for models (each its share); no budget, no limit.
    o.process.memory_limit = config.worker_memory_limit > 0 ? config.worker_memory_limit
                             : options.memory_budget > 0    ? options.memory_budget / o.workers
                                                            : 0;
    ASSIGN_OR_RETURN(std::shared_ptr<HandlerPool> pool, HandlerPool::Create(o));
    return std::shared_ptr<Model>(std::move(pool));
  }

  void InitExecutorThread(const std::vector<int>& cores, int) override { SetExecutorCores(cores); }
};

Capabilities PythonCapabilities() {
  Capabilities c;
  c.model_files = {"MAR-INF/MANIFEST.json"};
  c.precisions = {config::Precision::kFp32};
  c.variants = false;
  c.batching = true;
  return c;
}

StatusOr<std::unique_ptr<Backend>> CreatePythonBackend(const CreateOptions&) {
  return std::unique_ptr<Backend>(new PythonBackend());
}

}  // namespace

// The registration (registry.h); CMake keeps this object in every binary.
extern "C" const bool inferd_backend_python_registered =
    Registry::Register("python", PythonCapabilities(), CreatePythonBackend);

}  // namespace inferd::backend::python
