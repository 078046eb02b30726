// RunBench: the `inferd bench` command. Runs one load step per concurrency
// (closed loop) or per rate (open loop); each step warms up, then measures
// windows until the StabilityRule holds or --max-windows, and reports the last
// --windows windows. Prints the table to stdout as steps finish, a progress
// line per window to stderr, and writes --json/--csv/--plot at the end.
//
// Thread-safety: runs on the calling thread; shares no state with a server in
// the same process.
#pragma once

#include <ostream>

#include "bench/bench_options.h"
#include "bench/report_writer.h"
#include "common/status.h"

namespace inferd::bench {

// Runs the sweep; `table` gets the table, `progress` the per-window lines.
StatusOr<BenchReport> RunSweep(const BenchOptions& options, std::ostream& table,
                               std::ostream& progress);

// The CLI entry: RunSweep on stdout/stderr, then the output files. Returns the
// process exit code: 0 when the sweep ran (whatever the server answered), 2 on
// bad options or unwritable outputs.
int RunBench(const BenchOptions& options);

}  // namespace inferd::bench
