#!/usr/bin/python3
"""The table of tools/bench_text.sh: results.jsonl -> markdown, medians over rounds per
(configuration, concurrency), inferd's ratios to the tuned peer (gunicorn2_t1_tcmalloc, or the
best peer by req/s at that concurrency when it was not measured) and inferd's padding waste
(padded / real tokens over the step).

  /usr/bin/python3 tools/bench_text_table.py OUT/results.jsonl
"""

import json
import statistics
import sys

TUNED = "gunicorn2_t1_tcmalloc"


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    cell = {}
    for r in rows:
        cell.setdefault((r["config"], r["c"]), []).append(r)
    configs = list(dict.fromkeys(r["config"] for r in rows))
    cs = sorted({r["c"] for r in rows})

    def med(cfg, c, key):
        v = [r[key] for r in cell.get((cfg, c), [])]
        return statistics.median(v) if v else None

    ours = [cfg for cfg in configs if cfg.startswith("inferd")]
    print("| c | " + " | ".join(f"{cfg} req/s (p50 / p90 / p99 ms)" for cfg in configs) +
          "".join(f" | {cfg} / tuned req/s | {cfg} / tuned p99" for cfg in ours) +
          " | padding waste | CPU ms per request |")
    print("|---|" + "---|" * (len(configs) + 2 * len(ours) + 2))
    for c in cs:
        out = []
        for cfg in configs:
            rps = med(cfg, c, "requests_per_s")
            if rps is None:
                out.append("-")
                continue
            errors = sum(r["failures"] for r in cell[(cfg, c)])
            out.append(f"{rps:.1f} ({med(cfg, c, 'p50_ms'):.0f} / {med(cfg, c, 'p90_ms'):.0f} / "
                       f"{med(cfg, c, 'p99_ms'):.0f})" + (f" {errors} failed" if errors else ""))
        peers = [cfg for cfg in configs if not cfg.startswith("inferd") and (cfg, c) in cell]
        tuned = TUNED if TUNED in peers else max(
            peers, key=lambda p: med(p, c, "requests_per_s"), default=None)
        ratios = []
        for cfg in ours:
            if tuned and (cfg, c) in cell:
                ratios.append(f"{med(cfg, c, 'requests_per_s') / med(tuned, c, 'requests_per_s'):.2f}x")
                ratios.append(f"{med(cfg, c, 'p99_ms') / med(tuned, c, 'p99_ms'):.2f}x")
            else:
                ratios += ["-", "-"]
        waste = "-"
        if ("inferd", c) in cell:
            padded = real = 0.0
            for r in cell[("inferd", c)]:
                padded += r["padded_tokens"]
                real += r["real_tokens"]
            waste = f"{padded / real:.1%}" if real else "-"
        cpu = []
        for cfg in configs:
            v = [r["cpu_s"] * 1e3 / max(1, r["requests"]) for r in cell.get((cfg, c), [])]
            if v:
                cpu.append(f"{cfg} {statistics.median(v):.0f}")
        print(f"| {c} | " + " | ".join(out + ratios) + f" | {waste} | "
              f"{', '.join(cpu) or '-'} |")
    rounds = max(r["round"] for r in rows)
    print(f"\nmedians of {rounds} interleaved round(s); tuned = {TUNED}")


if __name__ == "__main__":
    main()
