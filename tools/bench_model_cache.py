#!/usr/bin/python3
"""The model-cache benchmark of issue 10: many models on one node under a memory budget.

    /usr/bin/python3 tools/bench_model_cache.py [--count 1000] [--rate 20] [--duration 120]
        [--fraction 0.1] [--out /tmp/bench-model-cache] [--binary build/inferd]
    /usr/bin/python3 tools/bench_model_cache.py footprints [--store examples/model-store]
    /usr/bin/python3 tools/bench_model_cache.py leftover [--kind mlp|cnn] [--count 100]
        [--env NAME=VALUE ...] [--out /tmp/bench-model-cache-leftover]

One unattended command (about 8-12 minutes on this machine with the defaults,
plus 2-4 minutes the first time to generate the models):
  1. tools/make_many_models.py writes STORE (default /tmp/inferd-many-models):
     1,000 small MLPs and convnets of mixed sizes, each with PyTorch's output for
     a known input (models.json).
  2. Run "resident": the server with `--lazy-load` and no budget; every model is
     loaded once (one request each, checked), so all are resident; the footprints
     the server measured give the budget: --fraction (0.1) of their sum. Then the
     traffic below runs against it (every request a hit): the reference for hits.
  3. Run "budget": a fresh server with `--lazy-load --memory-budget B`; its
     resident memory before any load is the server's own base. The same traffic:
     hits, cold starts (requests that waited for a load; the server marks them
     with X-Inferd-Cold-Start-Ms), evictions. RSS is sampled every 0.25 s. Then
     every model is unloaded and RSS is read again after the server handed the
     memory back.
Traffic: an open loop at a fixed rate (--rate requests/s, one every 1/rate s,
each sent at its time on a thread of its own with a pooled keep-alive
connection; latency counted from the scheduled time), model ranks drawn from
Zipf(--zipf 1.1) over the models in a seeded random order of popularity, the
same sequence in both runs. Every answer is compared with PyTorch's output
(max abs error <= 1e-4 x max abs value); a wrong answer counts as failed.

Writes OUT/report.md (the table), OUT/rss.svg (RSS and cached model bytes over
time against budget + base), OUT/results.json and the servers' logs; prints the
table. `footprints` starts the server on a store, loads every model and prints
each one's measured footprint (the issue's closing note).

`leftover` measures what loads leave behind once their models are unloaded
(docs/performance/model-cache.md, "RSS above the budget, and after unloading everything"):
the server with `--lazy-load` on STORE; RssAnon (/proc/PID/status) of the empty
server; the first --count models of --kind loaded by one checked request each
(one at a time, in store order); RssAnon again; every one unloaded through the management API,
then RssAnon once the server reports no resident model bytes and 1 s has
passed. Also counts the lines of /metrics at each stage (per-model series).
--env adds variables to the server's environment (e.g.
ONEDNN_PRIMITIVE_CACHE_CAPACITY=0); --rounds R loads and unloads them R times
(is what is left reused, or left again?); --one-at-a-time unloads each model
before the next loads (one resident at a time). Prints one table row; writes
OUT/leftover.json.
"""

import argparse
import http.client
import json
import math
import os
import queue
import random
import struct
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from harness import InferdServer, StartError, metric, parse_series, scrape  # noqa: E402
from make_many_models import bench_input  # noqa: E402


def log(msg):
    print(f"bench_model_cache: {msg}", flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_bytes(pid):
    return status_kib(pid, "VmRSS") * 1024


def percentile(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    k = max(0, min(len(v) - 1, math.ceil(p / 100.0 * len(v)) - 1))
    return v[k]


# ------------------------------------------------------------------ the server

class Server(InferdServer):
    """The server on free ports through tools/harness, ready when this returns, with the calls
    this bench makes."""

    def __init__(self, binary, store, out, name, args, env=None):
        super().__init__(store, args=args, binary=binary, name=name, out_dir=out, env=env,
                         ready_timeout=600)
        try:
            self.start()
        except StartError as e:
            raise SystemExit(f"{name}: {e}")

    @staticmethod
    def request(port, method, path, body=None, headers=None, timeout=600):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, r.read()
        except OSError:
            return 0, b""
        finally:
            conn.close()

    def index(self):
        status, body = self.request(self.management, "POST", "/v2/repository/index", b"{}")
        assert status == 200, body
        return json.loads(body)

    def metric(self, series):
        """The sum of a /metrics series, NAME or NAME{label="value",...}."""
        name, labels = parse_series(series)
        return metric(scrape(self.metrics_url), name, **labels)

    def stop(self, timeout=60):
        return super().stop(timeout)


# -------------------------------------------------------------------- requests

def make_body(i, model):
    n = 1
    for d in model["shape"]:
        n *= d
    data = struct.pack(f"<{n}f", *bench_input(i, n))
    head = json.dumps({"inputs": [{"name": model["input"], "datatype": "FP32",
                                   "shape": [1] + model["shape"],
                                   "parameters": {"binary_data_size": len(data)}}],
                       "outputs": [{"name": "y"}]}).encode()
    return head + data, {"Inference-Header-Content-Length": str(len(head)),
                         "Content-Type": "application/octet-stream"}


def check_answer(body, expected):
    doc = json.loads(body)
    got = doc["outputs"][0]["data"]
    scale = max(max(abs(v) for v in expected), 1e-30)
    err = max(abs(a - b) for a, b in zip(got, expected))
    return len(got) == len(expected) and err <= 1e-4 * scale


# What an answer that waited for a load says about it: result key, header.
COLD_START_HEADERS = (("cold_ms", "X-Inferd-Cold-Start-Ms"), ("load_ms", "X-Inferd-Load-Ms"),
                      ("load_wait_ms", "X-Inferd-Load-Wait-Ms"))


class Client:
    """Open loop: request k is due at start + k / rate and is sent at that time on a thread of
    its own, with a keep-alive connection taken from a shared pool of idle ones (a new one when
    none is idle). A fixed pool of sending threads would make hits wait in the client behind
    cold starts that hold every thread (the first version did: 16 threads, hit p99 11 s)."""

    def __init__(self, server, models, bodies):
        self.server, self.models, self.bodies = server, models, bodies
        self.idle = queue.LifoQueue()
        self.results = []
        self.lock = threading.Lock()
        self.threads = []

    def send(self, due, idx):
        name = self.models[idx]["name"]
        body, headers = self.bodies[idx]
        status, data, timing = 0, b"", {}
        try:
            conn = self.idle.get_nowait()
        except queue.Empty:
            conn = None
        for attempt in range(2):  # a keep-alive connection the server closed: once more
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.server.http, timeout=120)
                conn.request("POST", f"/v2/models/{name}/infer", body=body, headers=headers)
                r = conn.getresponse()
                data = r.read()
                status = r.status
                timing = {key: float(r.getheader(h)) for key, h in COLD_START_HEADERS
                          if r.getheader(h) is not None}
                break
            except (OSError, http.client.HTTPException):
                conn = None
        end = time.monotonic()
        if conn is not None:
            self.idle.put(conn)
        ok = status == 200 and check_answer(data, self.models[idx]["expected"])
        with self.lock:
            self.results.append({"model": idx, "due": due, "latency_ms": (end - due) * 1000,
                                 "status": status, "ok": ok,
                                 **{key: timing.get(key) for key, _ in COLD_START_HEADERS},
                                 "error": None if ok else data[:200].decode(errors="replace")})

    def run(self, sequence, rate):
        start = time.monotonic() + 0.2
        for k, idx in enumerate(sequence):
            due = start + k / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t = threading.Thread(target=self.send, args=(due, idx), daemon=True)
            t.start()
            self.threads.append(t)
        return start

    def finish(self, expected, timeout=300):
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))
        while True:
            try:
                self.idle.get_nowait().close()
            except queue.Empty:
                break
        return list(self.results)


class Sampler:
    """RSS every 0.25 s; the cache's resident model bytes (from /metrics, a large page with
    1,000 models: read only every 5 s so that the reading does not load the server) every 5 s."""

    def __init__(self, server, start):
        self.server, self.start = server, start
        self.rss, self.cached = [], []
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        k = 0
        while not self.stop_flag.is_set():
            t = time.monotonic() - self.start
            self.rss.append((t, rss_bytes(self.server.proc.pid)))
            if k % 20 == 0:
                self.cached.append((t, self.server.metric("inferd_model_resident_bytes")))
            k += 1
            time.sleep(0.25)

    def stop(self):
        self.stop_flag.set()
        self.thread.join()


def zipf_sequence(n_models, count, s, seed):
    rng = random.Random(seed)
    order = list(range(n_models))
    rng.shuffle(order)  # rank r -> model order[r]: popularity is not size
    weights = [1.0 / (r + 1) ** s for r in range(n_models)]
    ranks = rng.choices(range(n_models), weights=weights, k=count)
    return [order[r] for r in ranks]


def summarize(results, load_ms):
    hits = [r for r in results if r["ok"] and r["cold_ms"] is None]
    colds = [r for r in results if r["ok"] and r["cold_ms"] is not None]
    failed = [r for r in results if not r["ok"]]
    ratio = [r["latency_ms"] / load_ms[r["model"]] for r in colds if load_ms.get(r["model"])]
    # The goal's figure: cold starts whose load did not queue (it waited <= 1 ms for a load
    # thread, for room and for loads measured alone), against that load's own time in this
    # run. The same model's load time varies 0.7-1.9x between two quiet runs, so a load time
    # from another run (the resident one, above) adds that spread to the ratio.
    unqueued = [r for r in colds if r["load_wait_ms"] is not None and r["load_wait_ms"] <= 1.0]
    own = [r["latency_ms"] / r["load_ms"] for r in unqueued if r["load_ms"]]
    own_all = [r["latency_ms"] / r["load_ms"] for r in colds if r["load_ms"]]
    return {
        "requests": len(results), "failed": len(failed), "hits": len(hits), "cold": len(colds),
        "hit_rate": len(hits) / max(1, len(hits) + len(colds)),
        "hit_p50_ms": percentile([r["latency_ms"] for r in hits], 50),
        "hit_p99_ms": percentile([r["latency_ms"] for r in hits], 99),
        "cold_p50_ms": percentile([r["latency_ms"] for r in colds], 50),
        "cold_p99_ms": percentile([r["latency_ms"] for r in colds], 99),
        "cold_over_load_p50": percentile(ratio, 50),
        "cold_over_load_p99": percentile(ratio, 99),
        "cold_unqueued": len(unqueued),
        "cold_over_own_load_p50": percentile(own, 50),
        "cold_over_own_load_p99": percentile(own, 99),
        "cold_all_over_own_load_p99": percentile(own_all, 99),
        "load_wait_p99_ms": percentile([r["load_wait_ms"] or 0 for r in colds], 99),
        "failures": [(r["model"], r["status"], r["error"]) for r in failed[:5]],
        # Each cold start: when it was due, its latency, its wait for the load (X-Inferd-
        # Cold-Start-Ms), that load's own time in this run (X-Inferd-Load-Ms), and the
        # model's first load in the resident run (the ratio's denominator).
        "cold_records": [{"model": r["model"], "due": r["due"], "latency_ms": r["latency_ms"],
                          "cold_ms": r["cold_ms"], "load_ms": r["load_ms"],
                          "load_wait_ms": r["load_wait_ms"],
                          "first_load_ms": load_ms.get(r["model"])} for r in colds],
    }


# ------------------------------------------------------------------------ plot

def write_svg(path, series, lines, title, duration):
    """series: [(label, colour, [(t, bytes)])]; lines: [(label, colour, bytes)]."""
    w, h, left, bottom, top, right = 760, 360, 70, 40, 30, 190
    ymax = max([b for _, _, pts in series for _, b in pts] + [b for _, _, b in lines]) * 1.1
    xmax = max(duration, max((t for _, _, pts in series for t, _ in pts), default=1))
    px = lambda t: left + (w - left - right) * t / xmax  # noqa: E731
    py = lambda b: h - bottom - (h - top - bottom) * b / ymax  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="13">{title}</text>',
           f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="black"/>']
    step = 10 ** math.floor(math.log10(ymax / 2**20 / 4 or 1))
    mib = step
    while mib * 2**20 < ymax:
        y = py(mib * 2**20)
        out.append(f'<line x1="{left - 4}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{mib:g} MiB</text>')
        mib += step * (2 if (ymax / 2**20) / step > 10 else 1)
    for s in range(0, int(xmax) + 1, max(10, int(xmax / 8) // 10 * 10)):
        out.append(f'<text x="{px(s):.1f}" y="{h - bottom + 16}" text-anchor="middle">{s} s</text>')
    for i, (label, colour, value) in enumerate(lines):
        y = py(value)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="{colour}" '
                   f'stroke-dasharray="6,4"/>')
        out.append(f'<text x="{w - right + 6}" y="{top + 20 + 16 * (len(series) + i)}" '
                   f'fill="{colour}">- - {label}</text>')
    for i, (label, colour, pts) in enumerate(series):
        d = " ".join(f"{px(t):.1f},{py(b):.1f}" for t, b in pts)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{d}"/>')
        out.append(f'<text x="{w - right + 6}" y="{top + 20 + 16 * i}" fill="{colour}">— {label}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out))


# ------------------------------------------------------------------------ runs

def warm_all(server, models, bodies):
    """One request per model (4 at a time), each checked; returns failures."""
    bad = []
    lock = threading.Lock()
    todo = queue.Queue()
    for i in range(len(models)):
        todo.put(i)

    def work():
        while True:
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            body, headers = bodies[i]
            status, data = server.request(server.http, "POST",
                                          f"/v2/models/{models[i]['name']}/infer", body, headers)
            if status != 200 or not check_answer(data, models[i]["expected"]):
                with lock:
                    bad.append((models[i]["name"], status, data[:200]))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return bad


def traffic(server, models, bodies, sequence, rate, duration, load_ms):
    start = time.monotonic()
    sampler = Sampler(server, start)
    client = Client(server, models, bodies)
    client.run(sequence, rate)
    results = client.finish(len(sequence))
    time.sleep(0.5)
    sampler.stop()
    return summarize(results, load_ms), sampler


def bench(args):
    os.makedirs(args.out, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "make_many_models.py"), args.store,
                    "--count", str(args.count)], check=True)
    with open(os.path.join(args.store, "models.json")) as f:
        models = json.load(f)["models"][:args.count]
    bodies = [make_body(i, m) for i, m in enumerate(models)]
    count = int(args.rate * args.duration)
    sequence = zipf_sequence(len(models), count, args.zipf, args.seed)
    report = {"args": vars(args), "load_start": loadavg(), "nproc": os.cpu_count()}
    t0 = time.monotonic()

    log(f"run 1 (resident): warming {len(models)} models; load average {loadavg()}")
    server = Server(args.binary, args.store, args.out, "resident", ["--lazy-load"])
    base_resident = rss_bytes(server.proc.pid)
    bad = warm_all(server, models, bodies)
    idx = {e["name"]: e for e in server.index() if e["version"] == "1"}
    footprints = [idx[m["name"]]["footprint"] for m in models]
    load_ms = {i: f["load_ms"] for i, f in enumerate(footprints)}
    total = sum(f["bytes"] for f in footprints)
    budget = int(total * args.fraction)
    rss_all = rss_bytes(server.proc.pid)
    log(f"all resident: {total / 2**20:.0f} MiB of footprints, RSS {rss_all / 2**20:.0f} MiB "
        f"(base {base_resident / 2**20:.0f} MiB); budget {budget / 2**20:.0f} MiB; "
        f"warm-up failures {len(bad)}")
    resident, _ = traffic(server, models, bodies, sequence, args.rate, args.duration, load_ms)
    server.stop()

    log(f"run 2 (budget {budget} bytes); load average {loadavg()}")
    server = Server(args.binary, args.store, args.out, "budget",
                    ["--lazy-load", "--memory-budget", str(budget),
                     "--load-threads", str(args.load_threads)])
    time.sleep(1.0)
    base = rss_bytes(server.proc.pid)
    base_split = {k: status_kib(server.proc.pid, k) for k in ("RssAnon", "RssFile")}
    cached, sampler = traffic(server, models, bodies, sequence, args.rate, args.duration, load_ms)
    evictions = server.metric("inferd_model_evictions_total")
    server_hits = server.metric('inferd_model_cache_requests_total{result="hit"}')
    loads_ok = server.metric('inferd_model_loads_total{outcome="ok"}')
    no_room = server.metric('inferd_model_loads_total{outcome="no_room"}')
    rss_max = max(b for _, b in sampler.rss)
    for e in server.index():
        if e["state"] == "READY":
            Server.request(server.management, "POST", f"/v2/repository/models/{e['name']}/unload",
                           b"{}")
    deadline = time.monotonic() + 30
    while server.metric("inferd_model_resident_bytes") > 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    rss_after = rss_bytes(server.proc.pid)
    after_split = {k: status_kib(server.proc.pid, k) for k in ("RssAnon", "RssFile")}
    releases = server.metric("inferd_model_cache_releases_total")
    outside_after = server.metric("inferd_model_outside_bytes")
    server.stop()

    report.update({
        "models": len(models), "footprint_total": total, "budget": budget, "rss_all_resident": rss_all,
        "base_rss": base, "rss_max": rss_max, "rss_after_unload": rss_after,
        "base_split_kib": base_split, "after_split_kib": after_split,
        "cache_releases": releases, "outside_after_unload": outside_after,
        "warm_failures": len(bad), "resident": resident, "cached": cached,
        "evictions": evictions, "server_hits": server_hits, "loads_ok": loads_ok,
        "no_room": no_room, "load_end": loadavg(), "minutes": (time.monotonic() - t0) / 60,
        "rss_series": sampler.rss, "cached_series": sampler.cached,
    })
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(report, f)
    write_svg(os.path.join(args.out, "rss.svg"),
              [("process RSS", "#1f77b4", sampler.rss),
               ("cached model footprints", "#2ca02c", sampler.cached)],
              [("base + budget", "#d62728", base + budget),
               ("base + 1.1 x budget", "#ff9896", base + 1.1 * budget),
               ("server base", "#7f7f7f", base)],
              f"inferd, {len(models)} models, Zipf({args.zipf}) at {args.rate:g} req/s, "
              f"budget {budget / 2**20:.0f} MiB", args.duration)
    table = render(report)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(table)
    print(table)


def render(r):
    c, a = r["cached"], r["resident"]
    mib = lambda b: f"{b / 2**20:.0f} MiB"  # noqa: E731
    rows = [
        ("models; footprints of all, measured", f"{r['models']}; {mib(r['footprint_total'])}"),
        ("memory budget (--fraction of the footprints)", mib(r["budget"])),
        ("requests (each answer checked against PyTorch)", f"{c['requests']}, failed {c['failed']}"
         f" (all-resident run: {a['requests']}, failed {a['failed']})"),
        ("hit rate (found the model READY)", f"{c['hit_rate']:.1%} (server count: "
         f"{int(r['server_hits'])} hits)"),
        ("loads / evictions / loads refused for room", f"{int(r['loads_ok'])} / "
         f"{int(r['evictions'])} / {int(r['no_room'])}"),
        ("loads / evictions per second of traffic",
         f"{r['loads_ok'] / r['args']['duration']:.2f} / "
         f"{r['evictions'] / r['args']['duration']:.2f}"),
        ("cold start (requests that waited for a load) p50 / p99",
         f"{c['cold_p50_ms']:.0f} / {c['cold_p99_ms']:.0f} ms"),
        ("cold start / that model's first load in the resident run, p50 / p99",
         f"{c['cold_over_load_p50']:.2f}x / {c['cold_over_load_p99']:.2f}x"),
        ("cold starts whose load did not queue (waited <= 1 ms); all; load wait p99",
         f"{c['cold_unqueued']}; {c['cold']}; {c['load_wait_p99_ms']:.0f} ms"),
        ("cold start / its own load (this run), loads that did not queue, p50 / p99",
         f"{c['cold_over_own_load_p50']:.2f}x / {c['cold_over_own_load_p99']:.2f}x"),
        ("cold start / its own load (this run), all cold starts, p99",
         f"{c['cold_all_over_own_load_p99']:.2f}x"),
        ("hits p50 / p99, budget run", f"{c['hit_p50_ms']:.1f} / {c['hit_p99_ms']:.1f} ms"),
        ("hits p50 / p99, all models resident", f"{a['hit_p50_ms']:.1f} / {a['hit_p99_ms']:.1f} ms"),
        ("hit p99 ratio (budget / all resident)", f"{c['hit_p99_ms'] / a['hit_p99_ms']:.2f}"),
        ("server base RSS (no model loaded)", mib(r["base_rss"])),
        ("max RSS during the budget run; limit base + 1.1 x budget",
         f"{mib(r['rss_max'])}; {mib(r['base_rss'] + 1.1 * r['budget'])}"),
        ("RSS with all models resident", mib(r["rss_all_resident"])),
        ("RSS after unloading every model / base", f"{mib(r['rss_after_unload'])} / "
         f"{mib(r['base_rss'])} ({r['rss_after_unload'] / r['base_rss']:.2f}x)"),
        ("RssAnon / RssFile, base and after unloading every model",
         f"{r['base_split_kib']['RssAnon'] / 1024:.0f} / {r['base_split_kib']['RssFile'] / 1024:.0f}"
         f" and {r['after_split_kib']['RssAnon'] / 1024:.0f} / "
         f"{r['after_split_kib']['RssFile'] / 1024:.0f} MiB; cache releases "
         f"{int(r['cache_releases'])}"),
        ("load average at start / end (2 cores)", f"{r['load_start']} / {r['load_end']}"),
    ]
    out = ["| measure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(out) + f"\n\n(run took {r['minutes']:.1f} min)\n"


def footprints(args):
    out = args.out
    os.makedirs(out, exist_ok=True)
    server = Server(args.binary, args.store, out, "footprints", [])
    rows = []
    for e in server.index():
        f = e.get("footprint") or {}
        rows.append((e["name"], e["version"], e["state"], f))
    server.stop()
    print("| model | model.pt | weights | RSS growth at load | footprint (counted) | load |")
    print("|---|---|---|---|---|---|")
    for name, version, state, f in rows:
        if not f:
            continue
        print(f"| {name} (v{version}, {state}) | {f['file_bytes'] / 2**20:.2f} MiB | "
              f"{f['weight_bytes'] / 2**20:.2f} MiB | {f['rss_growth_bytes'] / 2**20:.2f} MiB | "
              f"{f['bytes'] / 2**20:.2f} MiB | {f['load_ms']:.0f} ms |")


def leftover(args):
    os.makedirs(args.out, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "make_many_models.py"), args.store,
                    "--count", str(args.store_count)], check=True)
    with open(os.path.join(args.store, "models.json")) as f:
        every = json.load(f)["models"]
    # Bodies and expected answers are per index in the whole store.
    chosen = [i for i, m in enumerate(every) if m["kind"] == args.kind][:args.count]
    if len(chosen) < args.count:
        raise SystemExit(f"{args.store} has only {len(chosen)} models of kind {args.kind}")
    models = [every[i] for i in chosen]
    bodies = [make_body(i, every[i]) for i in chosen]
    env = dict(e.split("=", 1) for e in args.env)
    server = Server(args.binary, args.store, args.out, "leftover", ["--lazy-load"], env)

    def stage(name):
        _, body = Server.request(server.metrics, "GET", "/metrics")
        text = body.decode()
        row = {"rss_anon_kib": status_kib(server.proc.pid, "RssAnon"),
               "vm_rss_kib": status_kib(server.proc.pid, "VmRSS"),
               "metrics_lines": len(text.splitlines()),
               "metrics_lines_first_model": sum(
                   1 for line in text.splitlines() if f'model="{models[0]["name"]}"' in line)}
        log(f"{name}: RssAnon {row['rss_anon_kib'] / 1024:.1f} MiB, /metrics "
            f"{row['metrics_lines']} lines ({row['metrics_lines_first_model']} with "
            f"model=\"{models[0]['name']}\")")
        return row

    def load(m, body, headers, again):
        if again:  # unloaded by hand: it loads only through the management API
            status, data = Server.request(server.management, "POST",
                                          f"/v2/repository/models/{m['name']}/load", b"{}")
            if status != 200:
                raise SystemExit(f"load {m['name']}: {status} {data[:200]}")
        # A cold request that timed out while a busy machine loaded is sent again.
        for _ in range(5):
            status, data = Server.request(server.http, "POST", f"/v2/models/{m['name']}/infer",
                                          body, headers)
            if status != 504:
                break
        if status != 200 or not check_answer(data, m["expected"]):
            raise SystemExit(f"{m['name']}: {status} {data[:200]}")

    def unload(m):
        status, body = Server.request(server.management, "POST",
                                      f"/v2/repository/models/{m['name']}/unload", b"{}")
        if status != 200:
            raise SystemExit(f"unload {m['name']}: {status} {body[:200]}")

    def settle():
        deadline = time.monotonic() + 60
        while server.metric("inferd_model_resident_bytes") > 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)

    rounds = []
    try:
        time.sleep(1.0)
        empty = stage("empty")
        for r in range(args.rounds):
            # One at a time, in store order; all resident together unless
            # --one-at-a-time (then each is unloaded before the next loads).
            for m, (body, headers) in zip(models, bodies):
                load(m, body, headers, again=r > 0)
                if args.one_at_a_time:
                    unload(m)
            time.sleep(1.0)
            loaded = stage(f"round {r + 1}: {len(models)} {args.kind} loaded"
                           + (" (and unloaded, one at a time)" if args.one_at_a_time else ""))
            for m in ([] if args.one_at_a_time else models):
                unload(m)
            settle()
            rounds.append({"loaded": loaded, "unloaded": stage(f"round {r + 1}: all unloaded")})
    finally:
        server.stop()
    mib = lambda kib: kib / 1024  # noqa: E731
    loaded, unloaded = rounds[0]["loaded"], rounds[-1]["unloaded"]
    left = unloaded["rss_anon_kib"] - empty["rss_anon_kib"]
    result = {"kind": args.kind, "count": len(models), "env": env, "rounds": rounds,
              "one_at_a_time": args.one_at_a_time, "empty": empty, "left_kib": left,
              "per_model_kib": left / len(models)}
    with open(os.path.join(args.out, "leftover.json"), "w") as f:
        json.dump(result, f, indent=1)
    label = f"{len(models)} {args.kind}s" + "".join(f", {k}={v}" for k, v in env.items())
    if args.one_at_a_time:
        label += ", each unloaded before the next loads"
    if args.rounds > 1:
        label += f", {args.rounds} rounds (unloaded after each: " + " / ".join(
            f"{mib(r['unloaded']['rss_anon_kib']):.0f}" for r in rounds) + ")"
    print("| models | RssAnon empty / loaded / unloaded | left behind | per model | "
          "/metrics lines empty / loaded / unloaded |")
    print("|---|---|---|---|---|")
    print(f"| {label} | {mib(empty['rss_anon_kib']):.0f} / {mib(loaded['rss_anon_kib']):.0f} / "
          f"{mib(unloaded['rss_anon_kib']):.0f} | {mib(left):.1f} | "
          f"{mib(left) / len(models):.3f} | {empty['metrics_lines']} / "
          f"{loaded['metrics_lines']} / {unloaded['metrics_lines']} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", nargs="?", default="bench", choices=["bench", "footprints", "leftover"])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "inferd"))
    p.add_argument("--store", default=None)
    p.add_argument("--count", type=int, default=None, help="models (bench 1000, leftover 100)")
    p.add_argument("--rate", type=float, default=20.0)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--zipf", type=float, default=1.1)
    p.add_argument("--fraction", type=float, default=0.1)
    p.add_argument("--load-threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--out", default=None)
    p.add_argument("--kind", default="mlp", choices=["mlp", "cnn"], help="leftover: which models")
    p.add_argument("--env", action="append", default=[], help="leftover: NAME=VALUE for the server")
    p.add_argument("--rounds", type=int, default=1, help="leftover: load and unload them R times")
    p.add_argument("--one-at-a-time", action="store_true",
                   help="leftover: unload each model before loading the next")
    args = p.parse_args()
    args.out = args.out or "/tmp/bench-model-cache" + ("-leftover" if args.mode == "leftover" else "")
    if args.mode == "footprints":
        args.store = args.store or os.path.join(ROOT, "examples", "model-store")
        return footprints(args)
    args.store = args.store or "/tmp/inferd-many-models"
    if args.mode == "leftover":
        args.store_count = 1000  # the benchmark's store: the same models
        args.count = args.count or 100
        return leftover(args)
    args.count = args.count or 1000
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
