#include "supervisor/exit_cause.h"

#include <string.h>
#include <sys/wait.h>

namespace inferd::supervisor {

std::string DescribeExit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "signal " + std::to_string(sig) + " (" + (abbrev ? "SIG" + std::string(abbrev) : "?") +
           (WCOREDUMP(status) ? ", core dumped" : "") + ")";
  }
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

}  // namespace inferd::supervisor
