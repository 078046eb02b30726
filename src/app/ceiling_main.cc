// inferd_ceiling: the in-process ceiling. Runs one model of a store in this
// process, with no HTTP and no scheduler: N executor threads, each with its own
// pinned intra-op pool of T threads (the same TorchBackend::InitExecutorThread
// as the server), each calling Execute in a loop on one shared module. With
// --image, every call also decodes and pre-processes the image with the model's
// pipeline (decode + preprocess + model, as the server does). Prints items/s and
// latency percentiles: the figure end-to-end serving is compared with.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "backend/torch/torch_backend.h"
#include "config/model_config.h"
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
  int batch = 1;
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

int Run(const Options& o) {
  const std::string dir = o.store + "/" + o.model;
  auto config = config::LoadModelConfig(dir + "/config.yaml", o.model);
  if (!config.ok()) return std::fprintf(stderr, "%s\n", config.status().message().c_str()), 1;
  auto backend = backend::TorchBackend::Create();
  if (!backend.ok()) return std::fprintf(stderr, "%s\n", backend.status().message().c_str()), 1;
  backend::LoadOptions lo;
  lo.model_path = dir + "/1/model.pt";
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

  std::atomic<bool> measuring{false}, stop{false};
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
      (*backend)->InitExecutorThread(cores, o.threads);
      const auto tensors = RandomInputs(*config, o.batch);
      while (!stop) {
        const auto t0 = Clock::now();
        std::vector<NamedTensor> inputs = tensors;
        if (hooks.preprocess) {
          scheduler::InferenceRequest r;
          for (int b = 0; b < o.batch; ++b) r.raw.push_back({"image/jpeg", image_bytes});
          if (!hooks.preprocess(r).ok()) ++failures;
          inputs = r.inputs;
        }
        auto out = (*model)->Execute(inputs);
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
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup_s));
  measuring = true;
  const auto m0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.duration_s));
  measuring = false;
  const double elapsed = std::chrono::duration<double>(Clock::now() - m0).count();
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
      "model=%s instances=%d threads=%d pinned=%s batch=%d image=%s: %.1f items/s, "
      "p50 %.2f ms, p99 %.2f ms (%zu calls, %d failures)\n",
      o.model.c_str(), o.instances, o.threads, o.pin ? "yes" : "no", o.batch,
      o.image.empty() ? "no" : "yes", static_cast<double>(all.size()) * o.batch / elapsed, pct(50),
      pct(99), all.size(), failures.load());
  return failures.load() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"inferd_ceiling: one model in-process, no HTTP: the ceiling serving is compared with"};
  Options o;
  app.add_option("--model-store", o.store, "model store DIR")->required();
  app.add_option("--model", o.model, "model name")->required();
  app.add_option("--instances", o.instances, "executor threads")->capture_default_str();
  app.add_option("--threads", o.threads, "intra-op threads per executor")->capture_default_str();
  app.add_flag("!--no-pin", o.pin, "do not pin intra-op threads");
  app.add_option("--batch", o.batch, "items per call")->capture_default_str();
  app.add_option("--duration", o.duration_s, "seconds measured")->capture_default_str();
  app.add_option("--warmup", o.warmup_s, "seconds before measuring")->capture_default_str();
  app.add_option("--image", o.image, "decode + preprocess this image on every call");
  CLI11_PARSE(app, argc, argv);
  spdlog::set_default_logger(spdlog::stderr_color_mt("ceiling"));
  spdlog::set_level(spdlog::level::warn);
  return Run(o);
}
