#!/usr/bin/python3
"""Samples the run state of a process's threads (/proc/PID/task/*/stat) and counts how many are
running or runnable (state R) at once: the check that a server never asks for more cores than it
has (issue 37, part 3: a lone request widened onto idle executors' cores must not oversubscribe).

  tools/sample_running_threads.py PID [--seconds 10] [--interval-ms 1] [--prefix inferd-exec-]

Prints one JSON line: samples, the histogram of R threads per sample (all threads, and those
whose name starts with --prefix: inferd's executors and the OpenMP threads they start, which
inherit their name), and the largest of each. A sample is not atomic (the files are read one
after another over some tens of microseconds), so a count can be off by a thread in motion."""
import argparse
import collections
import json
import os
import time


def states(pid):
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        out.append((name, stat[stat.rindex(")") + 2]))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("pid", type=int)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--interval-ms", type=float, default=1)
    p.add_argument("--prefix", default="inferd-exec-")
    a = p.parse_args()
    every, prefixed = collections.Counter(), collections.Counter()
    end = time.monotonic() + a.seconds
    n = 0
    while time.monotonic() < end:
        s = states(a.pid)
        every[sum(1 for _, st in s if st == "R")] += 1
        prefixed[sum(1 for name, st in s if st == "R" and name.startswith(a.prefix))] += 1
        n += 1
        time.sleep(a.interval_ms / 1000)
    print(json.dumps({"pid": a.pid, "samples": n, "running_all": dict(sorted(every.items())),
                      "running_prefixed": dict(sorted(prefixed.items())),
                      "max_all": max(every), "max_prefixed": max(prefixed),
                      "threads": len(os.listdir(f"/proc/{a.pid}/task"))}))


if __name__ == "__main__":
    main()
