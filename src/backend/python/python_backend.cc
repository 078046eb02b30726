// PythonBackend (`backend: python`): models served by a TorchServe handler in
// handler processes (handler_pool.h). The version folder is an unpacked
// archive (archive/mar_unpack.h); its MAR-INF/MANIFEST.json is the model file
// the store looks for, and names the handler. The worker script is inferd's
// own Python (share/inferd/python/: inferd_worker.py and the `ts` package
// handlers import), found beside the binary.
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
// then the source tree's (a build folder's binary).
std::string FindWorkerScript() {
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
    if (fs::is_regular_file(dir / "inferd_worker.py", ec))
      return (dir / "inferd_worker.py").string();
  }
  return "";
}

class PythonBackend : public Backend {
 public:
  StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& options) override {
    // model_path: <model>/<version>/MAR-INF/MANIFEST.json
    const fs::path version_dir = fs::path(options.model_path).parent_path().parent_path();
    ASSIGN_OR_RETURN(archive::MarManifest manifest, archive::ReadMarManifest(version_dir.string()));
    HandlerPoolOptions o;
    o.process.python =
        std::getenv("INFERD_PYTHON") ? std::getenv("INFERD_PYTHON") : "/usr/bin/python3";
    o.process.worker_script = FindWorkerScript();
    if (o.process.worker_script.empty()) {
      return FailedPrecondition(
          "backend python: inferd_worker.py not found (share/inferd/python beside the binary, or "
          "INFERD_PYTHON_DIR)");
    }
    o.process.model_dir = version_dir.string();
    o.process.handler = manifest.handler;
    o.process.model_name = options.config.name;
    o.process.batch_size = options.config.max_batch_size;
    const int64_t limit_ms = options.config.max_execution_ms > 0
                                 ? options.config.max_execution_ms
                                 : options.config.request_timeout_ms;
    // A little under the watchdog's own limit, so that the pool gives the
    // process up (kills it, frees the executor) before the watchdog gives
    // up the executor's thread.
    o.max_execution = std::chrono::milliseconds(std::max<int64_t>(1, limit_ms * 9 / 10));
    o.process.start_timeout = std::chrono::milliseconds(std::max<int64_t>(limit_ms, 60000));
    o.workers =
        options.config.instances.automatic ? 1 : std::max(1, options.config.instances.count);
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
