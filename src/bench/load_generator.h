// LoadGenerator: drives one load step against an HTTP or gRPC server from the
// calling thread, closed or open loop, and records a Sample per response.
//
// Closed loop: `concurrency` connections, each sending its next request as
// soon as the previous answer arrives; latency runs from the actual send.
// Open loop: requests are due at the times of an ArrivalSchedule; a due
// request takes an idle connection, opens a new one (up to max_connections)
// or waits in a queue, and its latency runs from the intended time, so waiting
// for a connection is counted (no coordinated omission).
//
// The generator does all its work on one io_context run by the caller inside
// RunUntil(): one thread, so that it takes little CPU from the server (gRPC
// adds the thread that waits on its completion queue, and gRPC's own few).
// For gRPC a "connection" is a call slot; all share one channel.
//
// Thread-safety: none; one thread calls everything.
// Ownership: borrows `requests`, which must outlive the generator.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "bench/arrival_schedule.h"
#include "bench/bench_options.h"
#include "bench/request_set.h"
#include "bench/step_result.h"
#include "common/clock.h"
#include "common/status.h"

namespace inferd::bench {

struct LoadPlan {
  int concurrency = 0;  // > 0: closed loop
  double rate = 0;      // > 0: open loop, requests/s
  Arrivals arrivals = Arrivals::kConstant;
  std::uint64_t seed = 1;
  int max_connections = 64;
  Protocol protocol = Protocol::kHttp;
  std::chrono::nanoseconds timeout = std::chrono::seconds(30);
};

struct LoadCounters {
  std::uint64_t sent = 0;       // requests handed to a connection
  std::uint64_t finished = 0;   // responses or failures recorded
  std::uint64_t in_flight = 0;  // sent, not finished
  std::uint64_t queued = 0;     // open loop: due, waiting for a connection
};

class LoadGenerator {
 public:
  // Resolves the host; nothing is sent before Start().
  static StatusOr<std::unique_ptr<LoadGenerator>> Create(const ParsedUrl& url,
                                                         const RequestSet* requests,
                                                         const LoadPlan& plan);
  ~LoadGenerator();

  // Begins sending now (open loop: the schedule starts now).
  void Start();

  // Runs the network loop on this thread until `deadline`.
  void RunUntil(TimePoint deadline);

  // Stops issuing, drops queued requests, waits for those in flight until
  // `drain_deadline` (their samples are still recorded), then closes all
  // connections.
  void Stop(TimePoint drain_deadline);

  // Samples in completion order (so `done` never decreases).
  const std::vector<Sample>& samples() const;
  LoadCounters counters() const;

 private:
  struct Impl;
  explicit LoadGenerator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace inferd::bench
