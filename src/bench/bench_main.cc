// inferd_bench_cli: the bench command as a standalone program, for using the
// load generator without the server's libraries (and before main.cc has it).
// Not built by default: `cmake --build <dir> --target inferd_bench_cli`.
#include <CLI/CLI.hpp>

#include "bench/bench_flags.h"
#include "bench/bench_runner.h"

int main(int argc, char** argv) {
  CLI::App app{"inferd bench: HTTP load generator for inference servers"};
  inferd::bench::BenchOptions options;
  inferd::bench::AddBenchFlags(&app, &options);
  CLI11_PARSE(app, argc, argv);
  return inferd::bench::RunBench(options);
}
