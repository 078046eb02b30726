#!/usr/bin/python3
"""Side-by-side table of `inferd bench` results (one JSON per server) and of wrk runs.

  /usr/bin/python3 tools/bench_compare.py OUT_DIR [--headline c=4] [--reference inferd]

OUT_DIR holds configs.txt (one server configuration per line, in order) and, per
configuration, <cfg>.json (from `inferd bench --json`) and optionally <cfg>.wrk.txt (wrk
output with the WRK_JSON line of tools/wrk_post_file.lua). Prints Markdown tables:
per load step, each server's successful requests/s, p50, p99 and failures, with the
reference's throughput divided by the server's (x faster) and the server's p99 divided
by the reference's (x lower p99). Standard library only.
"""
import argparse
import json
import os
import re
import sys


def load_bench(out, cfg):
    path = os.path.join(out, cfg + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return {s["label"]: s for s in json.load(f)["steps"]}


def load_wrk(out, cfg):
    path = os.path.join(out, cfg + ".wrk.txt")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            if line.startswith("WRK_JSON "):
                return json.loads(line[len("WRK_JSON "):])
    return None


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
    print("Closed-loop sweep, `inferd bench` (successful requests/s; latency percentiles by nearest rank):\n")
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


if __name__ == "__main__":
    main()
