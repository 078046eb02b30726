// AddBenchFlags: declares the `inferd bench` flags on a CLI11 subcommand, so
// that main.cc stays a few lines:
//
//   inferd::bench::BenchOptions bench_options;
//   CLI::App* bench = app.add_subcommand("bench", "load-test a running server");
//   inferd::bench::AddBenchFlags(bench, &bench_options);
//   ... if (*bench) return inferd::bench::RunBench(bench_options);
//
// Thread-safety: call during CLI set-up; `options` must outlive parsing.
#pragma once

#include "bench/bench_options.h"

namespace CLI {
class App;
}

namespace inferd::bench {

void AddBenchFlags(CLI::App* sub, BenchOptions* options);

}  // namespace inferd::bench
