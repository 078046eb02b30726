#!/usr/bin/env python3
"""What an open dashboard costs the server (issue 29): the server's CPU and a
trivial model's p99 at c=8, with and without a headless Chromium showing
/dashboard (it refreshes every second), in interleaved A/B rounds on one
server, medians side by side.

  /usr/bin/python3 tools/bench_dashboard.py   (env: INFERD=build/inferd ROUNDS=4 IDLE_S=20
                                               LOAD_S=8 CONCURRENCY=8 OUT=bench-out/dashboard-<time>)

Per round and mode (page closed = about:blank, page open = /dashboard):
  idle  server CPU (utime+stime of /proc/PID/stat) over IDLE_S seconds with no
        traffic, and the sampling thread's own share (/proc/PID/task/*, inferd-dash)
  load  `inferd bench` closed loop at CONCURRENCY on identity_fp32 (FP32 [-1] -> the
        same) for LOAD_S seconds: p50/p99 and req/s, and the server CPU per request
The modes alternate (A B B A ...) so that drift of a shared machine hits both.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from dashboard_browser import start_chromium, wait_ready  # noqa: E402
from inferd_e2e import Server, wait_until  # noqa: E402

INFERD = os.path.abspath(os.environ.get("INFERD", os.path.join(ROOT, "build", "inferd")))
ROUNDS = int(os.environ.get("ROUNDS", "4"))
IDLE_S = float(os.environ.get("IDLE_S", "20"))
LOAD_S = float(os.environ.get("LOAD_S", "8"))
CONCURRENCY = int(os.environ.get("CONCURRENCY", "8"))
OUT = os.path.abspath(os.environ.get(
    "OUT", os.path.join(ROOT, "bench-out", "dashboard-" + time.strftime("%Y%m%d-%H%M%S"))))
HZ = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid, thread_name=None):
    """utime+stime of the process, or of its threads called `thread_name`."""
    if thread_name is None:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() != thread_name:
                    continue
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except FileNotFoundError:
            continue
    return total


def set_page(driver, port, open_):
    if open_:
        driver.get(f"http://127.0.0.1:{port}/dashboard")
        wait_ready(driver, wait_until)
    else:
        driver.get("about:blank")


def idle_window(pid):
    t0, c0, d0 = time.monotonic(), cpu_ticks(pid), cpu_ticks(pid, "inferd-dash")
    time.sleep(IDLE_S)
    t1, c1, d1 = time.monotonic(), cpu_ticks(pid), cpu_ticks(pid, "inferd-dash")
    return {"cpu_pct": (c1 - c0) / HZ / (t1 - t0) * 100,
            "sampler_pct": (d1 - d0) / HZ / (t1 - t0) * 100}


def load_window(server, body, tag):
    out = os.path.join(OUT, f"bench-{tag}.json")
    c0 = cpu_ticks(server.proc.pid)
    subprocess.run([INFERD, "bench", "--url", f"http://127.0.0.1:{server.http}",
                    "--model", "identity_fp32", "--form", "v2json", "--input", body,
                    "--concurrency", str(CONCURRENCY), "--duration", str(LOAD_S), "--warmup", "1",
                    "--windows", "1", "--max-windows", "1", "--json", out],
                   check=True, stdout=subprocess.DEVNULL)
    c1 = cpu_ticks(server.proc.pid)
    step = json.load(open(out))["steps"][0]
    return {"p50_ms": step["latency_ms"]["p50"], "p99_ms": step["latency_ms"]["p99"],
            "rps": step["requests_per_s"],
            "cpu_us_per_req": (c1 - c0) / HZ / max(step["sent_total"], 1) * 1e6}


def main():
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="bench-dashboard-")
    store = os.path.join(tmp, "store")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "make_models.py"),
                    "--test-store", store, "--threads", "1"], check=True,
                   stdout=subprocess.DEVNULL)
    body = os.path.join(tmp, "body.json")
    with open(body, "w") as f:
        json.dump({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 4],
                               "data": [1, 2, 3, 4]}]}, f)
    server = Server(INFERD, store, os.path.join(tmp, "server"), name="bench-dashboard",
                    args=["--models", "identity_fp32"]).start()
    driver = start_chromium(os.path.join(tmp, "profile"))
    results = {"closed": [], "open": []}
    try:
        for r in range(ROUNDS):
            for mode in (("closed", "open") if r % 2 == 0 else ("open", "closed")):
                set_page(driver, server.management, mode == "open")
                row = idle_window(server.proc.pid)
                row.update(load_window(server, body, f"{r}-{mode}"))
                row["round"] = r
                results[mode].append(row)
                print(f"round {r} page {mode:6s} " +
                      " ".join(f"{k}={v:.2f}" for k, v in row.items() if k != "round"),
                      flush=True)
    finally:
        driver.quit()
        server.stop()
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1)

    def med(mode, key):
        return statistics.median(row[key] for row in results[mode])

    print(f"\n{ROUNDS} rounds per mode, medians; load average now "
          f"{open('/proc/loadavg').read().split()[0]}\n")
    print("| figure | page closed | page open (1 s refresh) | open / closed |")
    print("|---|---:|---:|---:|")
    for key, label in (("cpu_pct", f"server CPU, idle, % of one core ({IDLE_S:g} s windows)"),
                       ("sampler_pct", "of which the sampling thread (inferd-dash), %"),
                       ("p50_ms", f"p50 ms at c={CONCURRENCY}"),
                       ("p99_ms", f"p99 ms at c={CONCURRENCY}"),
                       ("rps", f"req/s at c={CONCURRENCY}"),
                       ("cpu_us_per_req", "server CPU per request under load, us")):
        a, b = med("closed", key), med("open", key)
        ratio = f"{b / a:.2f}" if a > 0 else "-"
        print(f"| {label} | {a:.2f} | {b:.2f} | {ratio} |")
    print(f"\nresults in {OUT}")


if __name__ == "__main__":
    main()
