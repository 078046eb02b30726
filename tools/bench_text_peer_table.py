#!/usr/bin/python3
"""inferd against the strongest Python text peer, from tools/bench_text.sh's results.jsonl: per
concurrency, every configuration's rounds; inferd's medians; the peer's best round (the most
req/s; at c=1 also the lowest P90) and inferd's ratios to it, as issue 37's goals state them
(c=1 P90; c=N req/s >= 2.5x the peer's best round, p99 <= 0.5x its p99).

  /usr/bin/python3 tools/bench_text_peer_table.py OUT/results.jsonl [PEER]   (PEER: reuseport2_t1_tcmalloc)
"""

import json
import statistics
import sys


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    peer = sys.argv[2] if len(sys.argv) > 2 else "reuseport2_t1_tcmalloc"
    configs = list(dict.fromkeys(r["config"] for r in rows))
    print("| c | config | req/s by round | P90 ms by round | p99 ms by round | req/s | P90 ms | p99 ms | failed |")
    print("|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for c in sorted({r["c"] for r in rows}):
        for cfg in configs:
            rs = sorted((r for r in rows if r["config"] == cfg and r["c"] == c),
                        key=lambda r: r["round"])
            if not rs:
                continue
            by = lambda k, f="{:.1f}": ", ".join(f.format(r[k]) for r in rs)
            if cfg == peer:
                best = max(rs, key=lambda r: r["requests_per_s"])
                rps, p90, p99 = best["requests_per_s"], min(r["p90_ms"] for r in rs), best["p99_ms"]
                label = f"{cfg} (best round)"
            else:
                rps = statistics.median(r["requests_per_s"] for r in rs)
                p90 = statistics.median(r["p90_ms"] for r in rs)
                p99 = statistics.median(r["p99_ms"] for r in rs)
                label = f"{cfg} (median)"
            summary[(cfg, c)] = (rps, p90, p99)
            print(f"| {c} | {label} | {by('requests_per_s')} | {by('p90_ms', '{:.0f}')} | "
                  f"{by('p99_ms', '{:.0f}')} | {rps:.1f} | {p90:.0f} | {p99:.0f} | "
                  f"{sum(r['failures'] for r in rs)} |")
    print()
    for (cfg, c), (rps, p90, p99) in summary.items():
        if cfg == peer or (peer, c) not in summary:
            continue
        prps, pp90, pp99 = summary[(peer, c)]
        print(f"- c={c} {cfg}: {rps / prps:.2f}x the peer's best round's req/s, p99 "
              f"{p99 / pp99:.2f}x its p99, P90 {p90:.0f} ms ({p90 / pp90:.2f}x the peer's lowest)")


if __name__ == "__main__":
    main()
