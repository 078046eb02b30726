// ThreadTeam: which helper threads a thread started for its own work (an
// OpenMP team: libgomp keeps one per calling thread), by OS thread id, so
// that whoever gives that thread up (the scheduler's watchdog, a forward
// nobody waits for) can lower the helpers' priority with it: a stuck forward
// runs on its whole team, not on its calling thread alone.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

namespace inferd {

// Records `members` (OS thread ids, gettid) as the team of thread `owner`,
// replacing what was recorded for it.
void NoteThreadTeam(int owner, std::vector<int> members);
// The team recorded for `owner`; empty when none.
std::vector<int> ThreadTeamOf(int owner);
// Forgets `owner`'s team (the thread ends; its id may be reused).
void ForgetThreadTeam(int owner);
// The cores a lowered thread may run on (the process's usable cores): a
// thread at SCHED_IDLE runs on the idle cycles of any of them, not only of
// the one core it was pinned to, which another process may keep busy. Empty
// (the default): lowering leaves the affinity as it was.
void SetIdleCores(std::vector<int> cores);
// Sets `owner` and its team to SCHED_IDLE, allowed on SetIdleCores' cores:
// they run only when a core has nothing else to run. Returns how many
// threads were lowered; none once RaiseLoweredForExit was called.
int LowerToIdle(int owner);

// The CPU time thread `tid` of this process has run (its own clock, as
// pthread_getcpuclockid gives, by OS id); nullopt once it has ended.
std::optional<std::chrono::nanoseconds> ThreadCpuTime(int tid);

// For a process about to end with lowered threads still running: returns
// each thread LowerToIdle lowered to SCHED_OTHER, and lowers none from then
// on. A thread has to run to die, so a SCHED_IDLE thread holds up the
// process's end for as long as other processes keep its core busy (seconds
// when they saturate the machine). The kernel lets a thread leave SCHED_IDLE
// only with CAP_SYS_NICE: returns how many could not be raised (EPERM
// without it; a thread that has ended already does not count).
int RaiseLoweredForExit();

}  // namespace inferd
