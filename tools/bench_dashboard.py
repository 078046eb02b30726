#!/usr/bin/env python3
"""What an open dashboard costs the server (issue 29): the server's CPU and a
trivial model's p99 at c=8, with and without a headless Chromium showing
/dashboard (it refreshes every second), in interleaved A/B rounds on one
server, medians side by side.

  /usr/bin/python3 tools/bench_dashboard.py   (env: INFERD=build/inferd ROUNDS=4 IDLE_S=20
                                               LOAD_S=8 CONCURRENCY=8 OUT=bench-out/dashboard-<time>)

Per round and mode: "closed" (the browser shows about:blank), "open" (the browser
shows /dashboard; Chromium runs on the same cores as the server), "fetch" (no
browser page; a Python thread asks /dashboard/state for the page's rows once a
second, as the page does: the server's side of an open page, without the cost
of a browser running on the server's cores):
  idle  server CPU (utime+stime of /proc/PID/stat) over IDLE_S seconds with no
        traffic, and the sampling thread's own share (/proc/PID/task/*, inferd-dash)
  load  `inferd bench` closed loop at CONCURRENCY on identity_fp32 (FP32 [-1] -> the
        same) for LOAD_S seconds: p50/p99 and req/s, and the server CPU per request
The modes alternate (A B B A ...) so that drift of a shared machine hits both.
Then, on a second server with MANY (1000) lazily loaded copies of identity_fp32,
the server CPU of FETCHES fetches of the page's state (/dashboard/state, one page
of 50 rows with their series): what a page open on that store costs a second.
PART=ab or PART=many runs one part only.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from dashboard_browser import start_chromium, wait_ready  # noqa: E402
from harness import InferdServer, bench, cpu_seconds  # noqa: E402
from inferd_e2e import call, get, wait_until  # noqa: E402

INFERD = os.path.abspath(os.environ.get("INFERD", os.path.join(ROOT, "build", "inferd")))
ROUNDS = int(os.environ.get("ROUNDS", "4"))
IDLE_S = float(os.environ.get("IDLE_S", "20"))
LOAD_S = float(os.environ.get("LOAD_S", "8"))
CONCURRENCY = int(os.environ.get("CONCURRENCY", "8"))
MANY = int(os.environ.get("MANY", "1000"))
FETCHES = int(os.environ.get("FETCHES", "200"))
PART = os.environ.get("PART", "all")
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


class Poller:
    """GET /dashboard/state as the page asks it, once a second, while on."""

    def __init__(self, port):
        self.port, self.on, self.stop = port, threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            if self.on.is_set():
                get(self.port, "/dashboard/state?offset=0&limit=50&sort=name")
            time.sleep(1)


def set_mode(driver, poller, port, mode):
    if mode == "open":
        driver.get(f"http://127.0.0.1:{port}/dashboard")
        wait_ready(driver, wait_until)
    else:
        driver.get("about:blank")
    if mode == "fetch":
        poller.on.set()
    else:
        poller.on.clear()


def idle_window(pid, browser_pid):
    t0, c0, d0 = time.monotonic(), cpu_ticks(pid), cpu_ticks(pid, "inferd-dash")
    b0 = cpu_seconds(browser_pid)  # chromedriver and the browser's processes below it
    time.sleep(IDLE_S)
    t1, c1, d1 = time.monotonic(), cpu_ticks(pid), cpu_ticks(pid, "inferd-dash")
    b1 = cpu_seconds(browser_pid)
    return {"cpu_pct": (c1 - c0) / HZ / (t1 - t0) * 100,
            "sampler_pct": (d1 - d0) / HZ / (t1 - t0) * 100,
            "browser_pct": (b1 - b0) / (t1 - t0) * 100}


def load_window(server, body, tag):
    out = os.path.join(OUT, f"bench-{tag}.json")
    c0 = cpu_ticks(server.proc.pid)
    step = bench(server.url, "identity_fp32", body, form="v2json", concurrency=CONCURRENCY,
                 duration=LOAD_S, warmup=1, json_path=out, binary=INFERD)["steps"][0]
    c1 = cpu_ticks(server.proc.pid)
    return {"p50_ms": step["latency_ms"]["p50"], "p99_ms": step["latency_ms"]["p99"],
            "rps": step["requests_per_s"],
            "cpu_us_per_req": (c1 - c0) / HZ / max(step["sent_total"], 1) * 1e6}


def many_models(tmp, store):
    """Server CPU per /dashboard/state fetch with MANY models registered."""
    many = os.path.join(tmp, "many")
    src = os.path.join(store, "identity_fp32")
    config = open(os.path.join(src, "config.yaml")).read() + "\nload: lazy\n"
    for i in range(MANY):
        d = os.path.join(many, f"m{i:04d}")
        os.makedirs(os.path.join(d, "1"))
        os.link(os.path.join(src, "1", "model.pt"), os.path.join(d, "1", "model.pt"))
        with open(os.path.join(d, "config.yaml"), "w") as f:
            f.write(config)
    # Lazily loaded models are not ready until asked for: wait for the server to be live.
    server = InferdServer(many, args=["--lazy-load"], binary=INFERD, name="bench-many",
                          out_dir=os.path.join(tmp, "server-many"),
                          ready_path="/v2/health/live").start()
    try:
        request = {"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 4],
                               "data": [1, 2, 3, 4]}]}
        for i in range(10):  # some models loaded, with traffic, so rows carry series
            assert call(server.http, "POST", f"/v2/models/m{i:04d}/infer",
                        body=request).status == 200
        time.sleep(3)
        path = "/dashboard/state?offset=0&limit=50&sort=name"
        size = len(get(server.management, path).body)
        c0, t0 = cpu_ticks(server.proc.pid), time.monotonic()
        for _ in range(FETCHES):
            assert get(server.management, path).status == 200
        c1, t1 = cpu_ticks(server.proc.pid), time.monotonic()
    finally:
        server.stop()
    cpu_ms = (c1 - c0) / HZ / FETCHES * 1e3
    print(f"\n{MANY} models: {FETCHES} fetches of {path} ({size} bytes): server CPU "
          f"{cpu_ms:.2f} ms per fetch (= {cpu_ms / 10:.2f}% of one core at one fetch a "
          f"second), wall {(t1 - t0) / FETCHES * 1e3:.2f} ms per fetch")


def main():
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="bench-dashboard-")
    store = os.path.join(tmp, "store")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "make_models.py"),
                    "--test-store", store, "--threads", "1"], check=True,
                   stdout=subprocess.DEVNULL)
    if PART in ("all", "many"):
        many_models(tmp, store)
    if PART == "many":
        return
    ab_rounds(tmp, store)


def ab_rounds(tmp, store):
    body = os.path.join(tmp, "body.json")
    with open(body, "w") as f:
        json.dump({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 4],
                               "data": [1, 2, 3, 4]}]}, f)
    server = InferdServer(store, args=["--models", "identity_fp32"], binary=INFERD,
                          name="bench-dashboard", out_dir=os.path.join(tmp, "server")).start()
    driver = start_chromium(os.path.join(tmp, "profile"))
    poller = Poller(server.management)
    modes = ["closed", "open", "fetch"]
    results = {m: [] for m in modes}
    try:
        for r in range(ROUNDS):
            for mode in modes[r % 3:] + modes[:r % 3]:
                set_mode(driver, poller, server.management, mode)
                row = idle_window(server.proc.pid, driver.service.process.pid)
                row.update(load_window(server, body, f"{r}-{mode}"))
                row["round"] = r
                results[mode].append(row)
                print(f"round {r} page {mode:6s} " +
                      " ".join(f"{k}={v:.2f}" for k, v in row.items() if k != "round"),
                      flush=True)
    finally:
        poller.stop.set()
        driver.quit()
        server.stop()
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1)

    def med(mode, key):
        return statistics.median(row[key] for row in results[mode])

    print(f"\n{ROUNDS} rounds per mode, medians; load average now "
          f"{open('/proc/loadavg').read().split()[0]}\n")
    print("| figure | page closed | page open in Chromium on the same cores | open / closed "
          "| state fetched at 1 Hz, no browser | fetch / closed |")
    print("|---|---:|---:|---:|---:|---:|")
    for key, label in (("cpu_pct", f"server CPU, idle, % of one core ({IDLE_S:g} s windows)"),
                       ("sampler_pct", "of which the sampling thread (inferd-dash), %"),
                       ("browser_pct", "Chromium's CPU, idle, % of one core"),
                       ("p50_ms", f"p50 ms at c={CONCURRENCY}"),
                       ("p99_ms", f"p99 ms at c={CONCURRENCY}"),
                       ("rps", f"req/s at c={CONCURRENCY}"),
                       ("cpu_us_per_req", "server CPU per request under load, us")):
        a, b, c = med("closed", key), med("open", key), med("fetch", key)

        def ratio(x):
            return f"{x / a:.2f}" if a > 0 else "-"

        print(f"| {label} | {a:.2f} | {b:.2f} | {ratio(b)} | {c:.2f} | {ratio(c)} |")
    print(f"\nresults in {OUT}")


if __name__ == "__main__":
    main()
