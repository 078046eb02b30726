// inferd_ceiling: the in-process ceiling. Runs one model of a store in this
// process, with no HTTP and no scheduler: N executor threads, each with its own
// pinned intra-op pool of T threads (the same Backend::InitExecutorThread as
// the server, of the backend the config names), each calling Execute in a loop
// on one shared module. With --image, every call also decodes and pre-processes the image with the model's
// pipeline (decode + preprocess + model, as the server does). Prints items/s,
// latency percentiles and page faults per call: the figure end-to-end serving
// is compared with. `--batch 1,2,4,8` runs one step per size in this one
// process, in that order (the allocator's history carries over, as in a server).
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sys/resource.h>
#include <unistd.h>
#include <sstream>
#include <thread>
#include <vector>

#include "backend/registry.h"
#include "config/model_config.h"
#include "memory/allocator.h"
#include "pipeline/model_hooks.h"
#include "topology/cpu_budget.h"

namespace {

using namespace inferd;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string store;
  std::string model;
  int instances = 1;
  int threads = 1;
  bool pin = true;
  std::vector<int> batches = {1};
  double duration_s = 10;
  double warmup_s = 2;
  std::string image;
};

// Random inputs with the batch dim first; -1 dims become 1.
std::vector<NamedTensor> RandomInputs(const config::ModelConfig& c, int batch) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<NamedTensor> inputs;
  for (const auto& spec : c.inputs) {
    Shape shape = {batch};
    for (int64_t d : spec.dims) shape.push_back(d < 0 ? 1 : d);
    Tensor t = Tensor::Allocate(spec.dtype, shape);
    if (spec.dtype == DataType::kFp32) {
      for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data_as<float>()[i] = dist(rng);
    }
    inputs.push_back({spec.name, t});
  }
  return inputs;
}

int RunStep(const Options& o, int batch, const std::vector<int>& cpus,
            const config::ModelConfig& config, backend::Backend& backend, backend::Model& model,
            const scheduler::ModelHooks& hooks, const std::string& image_bytes);

int Run(const Options& o) {
  const std::string dir = o.store + "/" + o.model;
  auto config = config::LoadModelConfig(dir + "/config.yaml", o.model);
  if (!config.ok()) return std::fprintf(stderr, "%s\n", config.status().message().c_str()), 1;
  const std::string backend_name(config::Name(config->backend));
  auto backend = backend::Registry::Create(backend_name);
  if (!backend.ok()) return std::fprintf(stderr, "%s\n", backend.status().message().c_str()), 1;
  backend::LoadOptions lo;
  lo.model_path = dir + "/1/" + backend::Registry::Find(backend_name)->model_files.front();
  lo.config = *config;
  auto model = (*backend)->Load(lo);
  if (!model.ok()) return std::fprintf(stderr, "%s\n", model.status().message().c_str()), 1;

  scheduler::ModelHooks hooks;
  std::string image_bytes;
  if (!o.image.empty()) {
    auto h = pipeline::MakeModelHooks(*config, dir);
    if (!h.ok()) return std::fprintf(stderr, "%s\n", h.status().message().c_str()), 1;
    hooks = *h;
    std::ifstream in(o.image, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    image_bytes = buf.str();
    if (image_bytes.empty() || !hooks.preprocess) {
      return std::fprintf(stderr, "--image needs a readable image and a model with preprocess\n"), 1;
    }
  }

  auto budget = topology::DetectCpuBudget({});
  if (!budget.ok()) return std::fprintf(stderr, "%s\n", budget.status().message().c_str()), 1;
  const std::vector<int> cpus = budget->usable_cpus();
  int status = 0;
  for (int batch : o.batches) {
    if (RunStep(o, batch, cpus, *config, **backend, **model, hooks, image_bytes) != 0) status = 1;
  }
  return status;
}

// Resident memory of this process now, in MB (VmRSS, from /proc/self/statm).
double ResidentMb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
}

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

int RunStep(const Options& o, int batch, const std::vector<int>& cpus,
            const config::ModelConfig& config, backend::Backend& backend, backend::Model& model,
            const scheduler::ModelHooks& hooks, const std::string& image_bytes) {
  std::atomic<bool> measuring{false}, stop{false};
  // Calls finished per worker: warm-up lasts until each worker has made
  // kWarmupCalls (the first calls at a new batch size pay the graph
  // executor's profiling and the allocator's first touch), and measuring lasts
  // until each has made at least one measured call.
  constexpr int kWarmupCalls = 3;
  std::vector<std::atomic<int>> calls(static_cast<size_t>(o.instances));
  std::vector<std::vector<double>> latencies(static_cast<size_t>(o.instances));
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < o.instances; ++i) {
    std::vector<int> cores;
    if (o.pin) {
      for (int t = 0; t < o.threads; ++t) {
        cores.push_back(cpus[static_cast<size_t>(i * o.threads + t) % cpus.size()]);
      }
    }
    workers.emplace_back([&, i, cores] {
      backend.InitExecutorThread(cores, o.threads);
      const auto tensors = RandomInputs(config, batch);
      while (!stop) {
        const auto t0 = Clock::now();
        std::vector<NamedTensor> inputs = tensors;
        if (hooks.preprocess) {
          scheduler::InferenceRequest r;
          for (int b = 0; b < batch; ++b) r.raw.push_back({"image/jpeg", image_bytes});
          if (!hooks.preprocess(r).ok()) ++failures;
          inputs = r.inputs;
        }
        auto out = model.Execute(inputs);
        if (!out.ok()) ++failures;
        if (out.ok() && hooks.postprocess) {
          scheduler::InferenceResponse resp;
          resp.outputs = *out;
          if (!hooks.postprocess(resp).ok()) ++failures;
        }
        if (measuring) {
          latencies[static_cast<size_t>(i)].push_back(
              std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        ++calls[static_cast<size_t>(i)];
      }
    });
  }
  auto wait_calls = [&](int at_least) {
    for (auto& c : calls) {
      while (c.load() < at_least) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup_s));
  wait_calls(kWarmupCalls);
  std::vector<int> calls_at_start;
  for (auto& c : calls) calls_at_start.push_back(c.load());
  const long faults0 = MinorFaults();
  measuring = true;
  const auto m0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.duration_s));
  for (size_t i = 0; i < calls.size(); ++i) {
    while (calls[i].load() < calls_at_start[i] + 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  measuring = false;
  const double elapsed = std::chrono::duration<double>(Clock::now() - m0).count();
  const long faults = MinorFaults() - faults0;
  stop = true;
  for (auto& w : workers) w.join();

  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    if (all.empty()) return 0.0;
    size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(all.size())));
    return all[std::min(all.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  std::printf(
      "model=%s instances=%d threads=%d pinned=%s batch=%d image=%s allocator=%s: %.1f items/s, "
      "p50 %.2f ms, p99 %.2f ms, %.1f minor page faults per call, rss %.0f MB (%zu calls, %d "
      "failures)\n",
      o.model.c_str(), o.instances, o.threads, o.pin ? "yes" : "no", batch,
      o.image.empty() ? "no" : "yes", std::string(memory::AllocatorName()).c_str(),
      static_cast<double>(all.size()) * batch / elapsed, pct(50), pct(99),
      all.empty() ? 0.0 : static_cast<double>(faults) / static_cast<double>(all.size()),
      ResidentMb(), all.size(), failures.load());
  std::fflush(stdout);
  return failures.load() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  inferd::memory::ConfigureAllocator();
  CLI::App app{"inferd_ceiling: one model in-process, no HTTP: the ceiling serving is compared with"};
  Options o;
  app.add_option("--model-store", o.store, "model store DIR")->required();
  app.add_option("--model", o.model, "model name")->required();
  app.add_option("--instances", o.instances, "executor threads")->capture_default_str();
  app.add_option("--threads", o.threads, "intra-op threads per executor")->capture_default_str();
  app.add_flag("!--no-pin", o.pin, "do not pin intra-op threads");
  app.add_option("--batch", o.batches, "items per call; a list (1,2,4,8) runs one step per size")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--duration", o.duration_s, "seconds measured")->capture_default_str();
  app.add_option("--warmup", o.warmup_s, "seconds before measuring (and at least 3 calls per executor)")->capture_default_str();
  app.add_option("--image", o.image, "decode + preprocess this image on every call");
  CLI11_PARSE(app, argc, argv);
  spdlog::set_default_logger(spdlog::stderr_color_mt("ceiling"));
  spdlog::set_level(spdlog::level::info);
  return Run(o);
}
