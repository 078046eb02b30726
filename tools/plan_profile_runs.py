#!/usr/bin/env python3
"""Runs `inferd plan --profile-store` on a store several times and prints, as a
Markdown table, each model's core_ms and memory per run (the figures of
docs/SCALING.md's "Measured inputs"), then the plan of the last run.

  tools/plan_profile_runs.py --inferd build/inferd --store examples/model-store \
      --rps examples/plan-rps.yaml --runs 3 --node-cores 16 --node-memory 64Gi
"""

import argparse
import re
import subprocess
import sys
import tempfile
import os

LINE = re.compile(r"  - \{name: (\S+), rps: (\S+), core_ms: (\S+), memory: (\d+)(\w*)\}  # (.*)")
UNITS = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inferd", default="build/inferd")
    ap.add_argument("--store", default="examples/model-store")
    ap.add_argument("--rps", default="examples/plan-rps.yaml")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--node-cores", default="16")
    ap.add_argument("--node-memory", default="64Gi")
    args = ap.parse_args()

    results = []  # per run: {name: (core_ms, memory bytes, comment)}
    plan_text = ""
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            saved = os.path.join(tmp, f"models-{run}.yaml")
            r = subprocess.run([args.inferd, "plan", "--profile-store", args.store, "--rps",
                                args.rps, "--save-models", saved, "--node-cores", args.node_cores,
                                "--node-memory", args.node_memory],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"run {run + 1} failed ({r.returncode}):\n{r.stderr}")
            plan_text = r.stdout
            run_figures = {}
            with open(saved) as f:
                for line in f:
                    m = LINE.match(line)
                    if m:
                        run_figures[m[1]] = (float(m[3]), int(m[4]) * UNITS[m[5]], m[6])
            results.append(run_figures)
            if run == args.runs - 1:
                with open(saved) as f:
                    last_file = f.read()

    names = sorted(results[0])
    runs = range(1, args.runs + 1)
    print("| model | " + " | ".join(f"core_ms run {i}" for i in runs) + " | " +
          " | ".join(f"memory run {i}" for i in runs) + " |")
    print("|---|" + "---:|" * (2 * args.runs))
    for n in names:
        cores = " | ".join(f"{r[n][0]:.3f}" for r in results)
        mem = " | ".join(f"{r[n][1] / 2**20:.1f} MiB" for r in results)
        print(f"| {n} | {cores} | {mem} |")
    print("\nThe last run's models file:\n")
    print(last_file)
    print("The last run's plan:\n")
    print(plan_text)


if __name__ == "__main__":
    main()
