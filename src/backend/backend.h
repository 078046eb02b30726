// The backend interface: the one narrow boundary between the server core and a
// model runtime. The core never sees a framework type, only inferd::Tensor.
//
// Contract:
//  - Backend::Load is called once per model version, from a loader thread; it
//    may block (reads files, compiles). The returned Model is shared by every
//    executor that runs this version: one copy of the weights.
//  - Model::Execute MAY be called concurrently from several executor threads on
//    the same Model (one call per executor at a time). Implementations must be
//    safe for that; torch's frozen modules are.
//  - Execute receives batched inputs in the order of ModelConfig::inputs (each
//    with the batch dim first when max_batch_size > 1... and also when 1: the
//    scheduler always adds the batch dim) and returns outputs named by
//    ModelConfig::outputs (or output0, output1, ... when the config lists none),
//    each with the batch dim first.
//  - Exceptions never cross this boundary: failures come back as a Status with a
//    message a user can act on (kInternal for a model that throws).
//  - InitExecutorThread is called once on each executor thread before its first
//    Execute, with the cores that thread's intra-op pool must use (and by the
//    repository on its load threads, with no cores and 1 thread, so that
//    warm-up runs stay on one core).
//  - SetCallWidth widens an executor thread for the calls that follow, onto
//    the cores of executors the scheduler parked for it (a lone request runs
//    on every idle core), and narrows it back to its own cores after; only
//    for a Model whose RunsWide() is true. No re-load, no new weights.
//  - execution_report says how the backend chose to run the model (a variant
//    such as an optimisation pass, verified and timed at load) and why, and
//    the precision it chose under its accuracy guard (precision_report.h;
//    empty `requested` when it had no choice); it is fixed once Load returns.
//  - WeightBytes states what the loaded model holds for good (its parameters
//    and buffers); the repository's memory budget reports it beside the
//    resident memory a load adds.
//  - A backend may load a candidate file of the same version through another
//    backend (LoadOptions::peers: the torch backend's `precision: auto` tries
//    the ONNX files `inferd optimize` wrote) and serve whichever its guard
//    chose; the Model it returns is then that other backend's, and the
//    losers are released before Load returns (one copy of the weights).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "backend/precision_report.h"
#include "common/tensor.h"
#include "config/model_config.h"

namespace inferd::backend {

// One candidate way of running a model, as tried at load.
struct ExecutionVariantTrial {
  std::string name;
  bool tried = false;             // false: not applicable (see note)
  bool accepted = false;          // outputs matched the reference within tolerance
  double max_relative_error = 0;  // max |out - ref| / max |ref|, over the checked outputs
  double ms_per_item = 0;         // timed cost per item; 0 when not timed
  std::string note;               // why refused, not tried, or chosen
};

struct ExecutionReport {
  std::string chosen;  // the variant Execute runs; empty when the backend has no choice
  std::vector<ExecutionVariantTrial> trials;
  PrecisionReport precision;
  // What load-time measurement was skipped to keep a slow model's load
  // within its budget, and why (the log says it too); empty when nothing.
  std::string skipped;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual StatusOr<std::vector<NamedTensor>> Execute(const std::vector<NamedTensor>& inputs) = 0;
  virtual ExecutionReport execution_report() const { return {}; }
  // Bytes of parameters and buffers; 0 when the backend cannot tell.
  virtual int64_t WeightBytes() const { return 0; }
  // Set once the model cannot serve any more (a handler process that keeps
  // dying: python/handler_pool.h): the scheduler's runner then quarantines
  // the version with this reason after the failed Execute. Any thread.
  virtual std::optional<std::string> QuarantineReason() const { return std::nullopt; }
  // Resident bytes of the worker processes the model runs in (python/:
  // handler processes, `isolation: process`), as last measured; 0 for a model
  // that runs inside the server. Any thread.
  virtual int64_t WorkerResidentBytes() const { return 0; }
  // True when Execute runs on the width the calling thread was last given
  // (Backend::SetCallWidth); false: always on the executor's own cores, so
  // the scheduler lends it nothing. Fixed once Load returns.
  virtual bool RunsWide() const { return false; }
};

class Backend;

struct LoadOptions {
  std::string model_path;  // DIR/<model>/<version>/<model file> (registry.h)
  config::ModelConfig config;
  // Loads a file through the backend its config.backend names (BackendSet
  // sets itself here); null: no other runtime is tried. Not owned; valid
  // for the duration of Load.
  Backend* peers = nullptr;
  // Intra-op threads for a backend whose model owns its pool (ONNX Runtime);
  // 0: the backend's own choice (the widest executor). The guard times a
  // candidate on one thread, as it times libtorch's.
  int intra_op_threads = 0;
  // The largest batch the model's queue forms, when an earlier load of this
  // version calibrated it (scheduler/batch_calibration.h); 0: unknown, the
  // config's sizes then stand for it (backend/runtime_choice.h).
  int served_batch = 0;
  // The server's --memory-budget in bytes (0 = none): what a backend whose
  // model runs in worker processes derives their default memory limit from.
  int64_t memory_budget = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual StatusOr<std::shared_ptr<Model>> Load(const LoadOptions& options) = 0;
  // Sets up the calling thread's intra-op pool: exactly cores.size() threads,
  // member i pinned to cores[i] (no pinning when cores is empty; then
  // `num_threads` threads). Idempotent per thread.
  virtual void InitExecutorThread(const std::vector<int>& cores, int num_threads) = 0;
  // On an executor thread after InitExecutorThread: the intra-op width of the
  // Execute calls that follow on this thread, in InitExecutorThread's terms.
  // The scheduler widens a thread onto the cores of idle executors it parked
  // (they run nothing meanwhile: no core runs two compute threads) and
  // narrows it back with the executor's own cores before it un-parks them.
  // Cheap: re-pins a thread team, loads nothing.
  virtual void SetCallWidth(const std::vector<int>& cores, int num_threads) {
    (void)cores;
    (void)num_threads;
  }
  // Drops what the backend keeps across models (the torch backend: oneDNN's
  // primitive cache), which grows with every distinct model ever run and is
  // not freed when the model is. Models still loaded build what they need
  // again on their next call. Any thread.
  virtual void ReleaseCaches() {}
  // Ahead of time (`inferd optimize`, never while serving): writes the
  // backend's own optimized copy of the model file `in` to `out` (the ONNX
  // Runtime backend: the graph after its fusions). kFailedPrecondition for a
  // backend that has none; kInvalidArgument naming the file when `in` cannot
  // be read or `out` written. Blocks for as long as the optimization takes.
  virtual Status WriteOptimizedModel(const std::string& in, const std::string& out) {
    (void)in;
    (void)out;
    return FailedPrecondition("this backend writes no optimized model file");
  }
};

}  // namespace inferd::backend
