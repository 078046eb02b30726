#!/usr/bin/python3
"""Side-by-side table of `inferd bench` results (one JSON per server) and of wrk runs.

  /usr/bin/python3 tools/bench_compare.py OUT_DIR [--headline c=4] [--reference inferd]

OUT_DIR holds configs.txt (one server configuration per line, in order) and, per
configuration and round, <cfg>.r<N>.json (from `inferd bench --json`) and optionally
<cfg>.r<N>.wrk.txt (wrk output with the WRK_JSON line of tools/wrk_post_file.lua); with
several rounds every figure is the median over the rounds (failures are summed).
Prints Markdown tables:
per load step, each server's successful requests/s, p50, p99 and failures, with the
reference's throughput divided by the server's (x faster) and the server's p99 divided
by the reference's (x lower p99). Standard library only.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys


def rounds(out, cfg, suffix):
    """The files of every round of `cfg` (<cfg>.r1<suffix>, ...), or <cfg><suffix>."""
    paths = glob.glob(os.path.join(glob.escape(out), glob.escape(cfg) + ".r*" + suffix))
    paths = [p for p in paths if re.search(r"\.r\d+" + re.escape(suffix) + "$", p)]
    if not paths and os.path.exists(os.path.join(out, cfg + suffix)):
        paths = [os.path.join(out, cfg + suffix)]
    return sorted(paths)


def load_bench(out, cfg):
    """label -> step, the median over rounds of throughput and latencies."""
    runs = []
    for path in rounds(out, cfg, ".json"):
        with open(path) as f:
            runs.append({s["label"]: s for s in json.load(f)["steps"]})
    if not runs:
        return None
    merged = {}
    for label in runs[0]:
        steps = [r[label] for r in runs if label in r]
        m = dict(steps[0])
        m["requests_per_s"] = statistics.median(s["requests_per_s"] for s in steps)
        m["failures"] = sum(s["failures"] for s in steps)
        m["latency_ms"] = {k: statistics.median(s["latency_ms"][k] for s in steps)
                           for k in steps[0]["latency_ms"]}
        m["rounds"] = len(steps)
        merged[label] = m
    return merged


def load_wrk(out, cfg):
    runs = []
    for path in rounds(out, cfg, ".wrk.txt"):
        with open(path) as f:
            for line in f:
                if line.startswith("WRK_JSON "):
                    runs.append(json.loads(line[len("WRK_JSON "):]))
    if not runs:
        return None
    m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    m["errors"] = sum(r["errors"] for r in runs)
    m["rounds"] = len(runs)
    return m


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def fmt(v, digits=1):
    return f"{v:.{digits}f}"


def bench_table(out, configs, ref):
    results = {cfg: load_bench(out, cfg) for cfg in configs}
    if results.get(ref) is None:
        sys.exit(f"bench_compare: no {ref}.json in {out}")
    labels = list(results[ref].keys())
    lines = [
        f"| step | server | req/s | p50 ms | p99 ms | failures | {ref} req/s ÷ this | this p99 ÷ {ref} p99 |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label in labels:
        r = results[ref][label]
        for cfg in configs:
            s = (results[cfg] or {}).get(label)
            if s is None:
                lines.append(f"| {label} | {cfg} | - | - | - | - | - | - |")
                continue
            lat = s["latency_ms"]
            same = cfg == ref
            lines.append(
                f"| {label} | {cfg} | {fmt(s['requests_per_s'])} | {fmt(lat['p50'])} | "
                f"{fmt(lat['p99'])} | {s['failures']} | "
                f"{'' if same else ratio(r['requests_per_s'], s['requests_per_s'])} | "
                f"{'' if same else ratio(lat['p99'], r['latency_ms']['p99'])} |")
    return "\n".join(lines)


def wrk_table(out, configs, ref, headline):
    results = {cfg: load_wrk(out, cfg) for cfg in configs}
    if not any(results.values()):
        return None
    r = results.get(ref)
    lines = [
        f"| {headline} (wrk) | req/s | p50 ms | p99 ms | errors | {ref} req/s ÷ this | this p99 ÷ {ref} p99 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for cfg in configs:
        w = results[cfg]
        if w is None:
            lines.append(f"| {cfg} | - | - | - | - | - | - |")
            continue
        same = cfg == ref or r is None
        lines.append(
            f"| {cfg} | {fmt(w['ok_requests_per_s'])} | {fmt(w['p50_ms'])} | {fmt(w['p99_ms'])} | "
            f"{w['errors']} | {'' if same else ratio(r['ok_requests_per_s'], w['ok_requests_per_s'])} | "
            f"{'' if same else ratio(w['p99_ms'], r['p99_ms'])} |")
    return "\n".join(lines)


def read_proc(path):
    with open(path) as f:
        return {k: float(v) for k, v in (kv.split("=") for kv in f.read().split())}


def proc_table(out, configs, headline):
    """Per server, from <cfg>.r<N>.proc.before/.after around the wrk run
    (bench_vs_python.sh): page faults and CPU per request, RSS; medians over rounds."""
    lines = [f"| server ({headline}, wrk run) | minor faults / request | major faults / request | "
             "CPU ms / request (server) | RSS MB (all its processes) |",
             "|---|---:|---:|---:|---:|"]
    any_row = False
    for cfg in configs:
        rows = []
        for before in rounds(out, cfg, ".proc.before"):
            after = before[:-len(".before")] + ".after"
            wrk = before[:-len(".proc.before")] + ".wrk.txt"
            if not os.path.exists(after) or not os.path.exists(wrk):
                continue
            requests = None
            with open(wrk) as f:
                for line in f:
                    if line.startswith("WRK_JSON "):
                        requests = json.loads(line[len("WRK_JSON "):])["requests"]
            if not requests:
                continue
            b, a = read_proc(before), read_proc(after)
            if a["procs"] != b["procs"] or a["minflt"] < b["minflt"]:
                continue  # a worker died or was replaced during the run: the sums do not compare
            rows.append(((a["minflt"] - b["minflt"]) / requests, (a["majflt"] - b["majflt"]) / requests,
                         (a["cpu_s"] - b["cpu_s"]) * 1e3 / requests, a["rss_bytes"] / 2**20))
        if not rows:
            continue
        any_row = True
        med = [statistics.median(r[i] for r in rows) for i in range(4)]
        lines.append(f"| {cfg} | {med[0]:.1f} | {med[1]:.2f} | {med[2]:.1f} | {med[3]:.0f} |")
    return "\n".join(lines) if any_row else None


COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def nice_ticks(top, target=6):
    import math
    top = top if top > 0 else 1
    raw = top / (target - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    ticks = [0.0]
    while ticks[-1] < top * (1 - 1e-12):
        ticks.append(ticks[-1] + step)
    return ticks


def compare_svg(out, configs, title):
    """Throughput (x) vs p99 (solid, squares) and p50 (dashed, circles) latency, one colour
    per server, points labelled with their load step."""
    series = [(cfg, load_bench(out, cfg)) for cfg in configs]
    series = [(c, list(r.values())) for c, r in series if r]
    if not series:
        return None
    xs = [s["requests_per_s"] for _, steps in series for s in steps]
    ys = [s["latency_ms"][k] for _, steps in series for s in steps for k in ("p50", "p99")]
    xt, yt = nice_ticks(max(xs) * 1.05), nice_ticks(max(ys) * 1.05)
    W, H, L, R, T, B = 820, 500, 80, 190, 50, 70
    pw, ph = W - L - R, H - T - B
    px = lambda v: L + v / xt[-1] * pw
    py = lambda v: T + ph - v / yt[-1] * ph
    e = lambda t: t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    o = [f'<?xml version="1.0" encoding="UTF-8"?>',
         f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
         f'font-family="DejaVu Sans, Arial, sans-serif">',
         '<rect width="100%" height="100%" fill="white"/>',
         f'<text x="{L + pw / 2}" y="28" text-anchor="middle" font-size="16" font-weight="bold">{e(title)}</text>']
    for v in xt:
        o.append(f'<line x1="{px(v):.1f}" y1="{T}" x2="{px(v):.1f}" y2="{T + ph}" stroke="#e5e5e5"/>')
        o.append(f'<text x="{px(v):.1f}" y="{T + ph + 20}" text-anchor="middle" font-size="12">{v:g}</text>')
    for v in yt:
        o.append(f'<line x1="{L}" y1="{py(v):.1f}" x2="{L + pw}" y2="{py(v):.1f}" stroke="#e5e5e5"/>')
        o.append(f'<text x="{L - 8}" y="{py(v) + 4:.1f}" text-anchor="end" font-size="12">{v:g}</text>')
    o.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#000"/>')
    o.append(f'<text x="{L + pw / 2}" y="{H - 22}" text-anchor="middle" font-size="14">throughput (requests/s)</text>')
    o.append(f'<text x="22" y="{T + ph / 2}" text-anchor="middle" font-size="14" '
             f'transform="rotate(-90 22 {T + ph / 2})">latency (ms)</text>')
    for i, (cfg, steps) in enumerate(series):
        c = COLORS[i % len(COLORS)]
        for key, dash in (("p99", ""), ("p50", ' stroke-dasharray="5 4"')):
            pts = " ".join(f"{px(s['requests_per_s']):.1f},{py(s['latency_ms'][key]):.1f}" for s in steps)
            o.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
            for s in steps:
                x, y = px(s["requests_per_s"]), py(s["latency_ms"][key])
                if key == "p99":
                    o.append(f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="{c}"/>')
                    o.append(f'<text x="{x + 6:.1f}" y="{y - 6:.1f}" font-size="10" fill="{c}">{e(s["label"])}</text>')
                else:
                    o.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{c}"/>')
        ly = T + 10 + i * 22
        o.append(f'<rect x="{L + pw + 16}" y="{ly}" width="14" height="4" fill="{c}"/>')
        o.append(f'<text x="{L + pw + 36}" y="{ly + 6}" font-size="12">{e(cfg)}</text>')
    ly = T + 20 + len(series) * 22
    for j, line in enumerate(["solid, squares: p99", "dashed, circles: p50",
                              "labels: concurrency (c=N)"]):
        o.append(f'<text x="{L + pw + 16}" y="{ly + j * 16}" font-size="11" fill="#555">{line}</text>')
    o.append("</svg>")
    path = os.path.join(out, "compare.svg")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--headline", default="c=4", help="the step wrk repeated")
    ap.add_argument("--reference", default="inferd")
    args = ap.parse_args()
    with open(os.path.join(args.out, "configs.txt")) as f:
        configs = [c.strip() for c in f if c.strip()]
    setup = os.path.join(args.out, "setup.txt")
    if os.path.exists(setup):
        with open(setup) as f:
            print("".join("    " + l for l in f))
    n = max((s.get("rounds", 1) for s in (load_bench(args.out, args.reference) or {}).values()),
            default=1)
    how = f"median of {n} rounds" if n > 1 else "one round"
    print(f"Closed-loop sweep, `inferd bench` (successful requests/s; latency percentiles by "
          f"nearest rank; {how}):\n")
    print(bench_table(args.out, configs, args.reference))
    wrk = wrk_table(args.out, configs, args.reference, args.headline)
    if wrk:
        print(f"\nThe {args.headline} step again, measured by wrk (an independent client):\n")
        print(wrk)
        # Same step by both clients for each server: how far apart the tools are.
        lines = ["| server | inferd bench req/s | wrk req/s | wrk ÷ bench |", "|---|---:|---:|---:|"]
        for cfg in configs:
            b = (load_bench(args.out, cfg) or {}).get(args.headline)
            w = load_wrk(args.out, cfg)
            if b and w:
                lines.append(f"| {cfg} | {fmt(b['requests_per_s'])} | {fmt(w['ok_requests_per_s'])} | "
                             f"{ratio(w['ok_requests_per_s'], b['requests_per_s'])} |")
        print("\nThe two clients on the same step:\n")
        print("\n".join(lines))
    procs = proc_table(args.out, configs, args.headline)
    if procs:
        print("\nThe servers' processes during the wrk run (/proc/PID/stat of the process tree, "
              "after minus before; CPU time has 10 ms ticks):\n")
        print(procs)
    model = ""
    if os.path.exists(setup):
        with open(setup) as f:
            model = f.readline().split("(")[0].replace("model:", "").strip()
    path = compare_svg(args.out, configs, f"{model}: throughput vs latency, per server".strip(": "))
    if path:
        print(f"\nplot: {path}")


if __name__ == "__main__":
    main()
