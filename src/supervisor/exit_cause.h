// ExitCause: how a serving process ended, in words for logs and the crash
// journal: "signal 11 (SIGSEGV)", "exit code 3".
#pragma once

#include <string>

namespace inferd::supervisor {

// `status` as waitpid returns it.
std::string DescribeExit(int status);

}  // namespace inferd::supervisor
