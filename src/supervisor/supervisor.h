// Supervisor: `inferd serve` as a small parent that keeps the ports while the
// serving process (its child, the same binary) runs the models, and starts a
// new one when a serving process dies unasked (docs/ROBUSTNESS.md,
// "Crashes").
//
// The parent opens the ports (listening_sockets.h), then runs the child by
// fork + exec of /proc/self/exe with the command line it was given plus
// internal flags: --serving-sockets (the inherited fds), --state-dir (made
// here when not given: a private folder removed at exit), --restarts N,
// --previous-exit CAUSE (how the last child ended) and --ready-fd (a pipe the
// child writes one byte to once its ports serve). The child dies with the
// parent (PR_SET_PDEATHSIG).
//
// A child that exits before it is ready (bad flags, a port, a store error)
// ends the parent with its exit code: a start-up error is not a crash. After
// it is ready, any death the parent did not ask for (a signal, any exit code)
// starts a new child at once, or after a backoff when the children keep
// dying young (1 s doubling to 30 s while each lived less than 30 s), with a
// log line naming the signal or the exit code. SIGTERM and SIGINT are
// forwarded (the child drains for --drain-timeout as before; the parent closes
// its copies of the ports so they refuse once the child has closed its own),
// then the parent exits with the child's code; SIGHUP is forwarded.
//
// Thread-safety: runs on the main thread of a process that has started no
// other thread; blocks until the serve command ends.
#pragma once

#include <string>
#include <vector>

namespace inferd::supervisor {

struct SupervisorOptions {
  std::vector<std::string> argv;  // the whole command line, argv[0] included
  std::string bind;
  int http_port = 0, management_port = 0, metrics_port = 0, grpc_port = 0;
  std::string state_dir;        // "" = a private folder made here, removed at exit
  double drain_timeout_s = 30;  // the child gets this + 10 s after SIGTERM before SIGKILL
};

// Returns the exit code of `inferd serve`.
int RunSupervisor(const SupervisorOptions& options);

}  // namespace inferd::supervisor
