// inferd_handler_channel_bench: the handler-process channel's cost per batch,
// in-process (no HTTP, no scheduler): starts one worker on a model folder whose
// handler does (almost) nothing, runs N one-row batches of each body size
// through HandlerProcess::Run and prints the median and p90 of each Run
// (send the rows, the worker decodes them, calls the handler, encodes and
// sends the answer, the answer read back). tools/bench_mar_channel.py makes
// the model folder and subtracts the handler's own time.
//
//   inferd_handler_channel_bench MODEL_DIR HANDLER [N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/python/handler_process.h"
#include "common/handler_rows.h"

using inferd::backend::python::HandlerProcess;
using inferd::backend::python::HandlerProcessOptions;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL_DIR HANDLER [N]\n", argv[0]);
    return 2;
  }
  HandlerProcessOptions o;
  o.python = "/usr/bin/python3";
  o.worker_script = INFERD_SOURCE_PYTHON_DIR "/inferd_worker.py";
  o.model_dir = argv[1];
  o.handler = argv[2];
  o.model_name = "bench";
  const int n = argc > 3 ? std::atoi(argv[3]) : 5000;
  auto process = HandlerProcess::Start(o);
  if (!process.ok()) {
    std::fprintf(stderr, "%s\n", process.status().message().c_str());
    return 1;
  }
  std::printf("body_bytes  median_us  p90_us\n");
  for (size_t size : {size_t{16}, size_t{64} << 10, size_t{1} << 20}) {
    const std::string body(size, 'x');
    const std::string type = "application/octet-stream";
    inferd::Tensor rows = inferd::Tensor::Allocate(
        inferd::DataType::kUint8, {1, static_cast<int64_t>(inferd::HandlerRowSize(type, size))});
    inferd::WriteHandlerRow(type, body, rows.mutable_data());
    std::vector<double> us;
    for (int i = 0; i < n + 100; ++i) {
      const auto start = std::chrono::steady_clock::now();
      auto answer = (*process)->Run(rows, start + std::chrono::seconds(60));
      const auto end = std::chrono::steady_clock::now();
      if (!answer.ok()) {
        std::fprintf(stderr, "%s\n", answer.status().message().c_str());
        return 1;
      }
      if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    }
    std::sort(us.begin(), us.end());
    std::printf("%10zu  %9.1f  %6.1f\n", size, us[us.size() / 2], us[us.size() * 9 / 10]);
  }
  return 0;
}
