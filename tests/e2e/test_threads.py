"""Issue 3 on the real binary: while serving under load, the threads of the
process that burn CPU are no more than the usable cores, and each of them is a
compute thread pinned to a single core of its own."""

import json
import os
import subprocess
import threading
import time

from conftest import SOURCE_DIR, stop_and_check
from inferd_e2e import post

CLK_TCK = os.sysconf("SC_CLK_TCK")
LOAD_SECONDS = 3.0
# A thread "burns CPU" when it ran more than this share of the whole process's
# CPU time while loaded. A share of the process, not of a core: on a machine
# busy with other work the server's threads get less than a core each, but the
# split between its threads is the same.
BURNING = 0.15
# The load reached the server: its threads ran at least this many CPU seconds.
MIN_PROCESS_CPU_S = 0.3


def thread_cpu_seconds(pid):
    """{tid: (name, utime+stime seconds)} of every thread of `pid`."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except FileNotFoundError:
            continue  # the thread ended
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / CLK_TCK)
    return out


def thread_affinity(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/status") as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    return ""


def usable_cores(inferd_bin):
    r = subprocess.run([inferd_bin, "topology", "--json"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["usable_cores"]


def test_compute_threads_stay_within_the_budget_and_pinned(server_factory, example_store,
                                                           inferd_bin):
    cores = usable_cores(inferd_bin)
    s = server_factory(example_store, "threads", args=["--models", "mobilenet_v3_small"])
    with open(os.path.join(SOURCE_DIR, "examples", "images", "cat.jpg"), "rb") as f:
        image = f.read()
    stop = threading.Event()
    errors = []

    def client():
        while not stop.is_set():
            r = post(s.http, "/predictions/mobilenet_v3_small", image,
                     headers={"Content-Type": "image/jpeg"})
            if r.status != 200:
                errors.append(r)
                return

    clients = [threading.Thread(target=client) for _ in range(4)]
    for c in clients:
        c.start()
    time.sleep(1.0)  # warm-up: every executor has run
    pid = s.pid
    before = thread_cpu_seconds(pid)
    t0 = time.monotonic()
    time.sleep(LOAD_SECONDS)
    after = thread_cpu_seconds(pid)
    elapsed = time.monotonic() - t0
    stop.set()
    for c in clients:
        c.join(60)
    assert not errors, f"requests failed under load: {errors[:3]}"

    used = {tid: cpu - before.get(tid, (name, 0.0))[1] for tid, (name, cpu) in after.items()}
    total = sum(used.values())
    burning = {}
    for tid, (name, _) in after.items():
        share = used[tid] / total if total > 0 else 0.0
        if share > BURNING:
            burning[tid] = (name, round(share, 2), thread_affinity(pid, tid))
    report = (f"usable cores {cores}; process CPU {total:.2f} s over {elapsed:.1f} s; threads "
              f"above {BURNING:.0%} of it: {burning}; all threads: {len(after)}")
    print("\n" + report)
    assert total >= MIN_PROCESS_CPU_S, "the load did not reach the server: " + report
    assert burning, "no thread burned CPU under load: " + report
    assert len(burning) <= cores, "more threads burn CPU than there are usable cores: " + report
    pinned = [aff for (_, _, aff) in burning.values()]
    for aff in pinned:
        assert aff.isdigit(), f"a thread that burns CPU is not pinned to one core ({aff}): " + report
    names = [name for (name, _, _) in burning.values()]
    assert all(n.startswith("inferd-exec-") for n in names), \
        "a thread that burns CPU is not an executor: " + report
    assert len(set(pinned)) == len(pinned), "two compute threads share a core: " + report
    stop_and_check(s)
