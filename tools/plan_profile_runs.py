#!/usr/bin/env python3
"""Runs `inferd plan --profile-store --profile-batched` on a store several
times and prints, as Markdown, each model's figures per run (core_ms at batch
1, core_ms per item at the calibrated batch size, memory, and the weight bytes
the backend states): the figures of docs/SCALING.md's "Measured inputs". Then
the plans of the last run's figures, with core_ms at batch 1 (the default) and
batched (--profile-batched).

  tools/plan_profile_runs.py --inferd build/inferd --store examples/model-store \\
      --rps examples/plan-rps.yaml --runs 3 --node-cores 16 --node-memory 64Gi
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

LINE = re.compile(r"  - \{name: (\S+), rps: (\S+), core_ms: (\S+), memory: (\d+)(\w*)\}  # (.*)")
UNITS = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def parse(path):
    """name -> dict(batch1, batched, batch, memory, weights, line) of a saved models file."""
    out = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            comment = m[6]
            b1 = re.search(r"batch 1 ([\d.]+) ms \(", comment)
            bb = re.search(r"batch (\d+) ([\d.]+) ms/item", comment)
            w = re.search(r"weights ([^,]+),", comment)
            out[m[1]] = dict(batch1=float(b1[1]), batched=float(bb[2]), batch=int(bb[1]),
                             memory=int(m[4]) * UNITS[m[5]], weights=w[1], line=line)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inferd", default="build/inferd")
    ap.add_argument("--store", default="examples/model-store")
    ap.add_argument("--rps", default="examples/plan-rps.yaml")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--node-cores", default="16")
    ap.add_argument("--node-memory", default="64Gi")
    args = ap.parse_args()
    node = ["--node-cores", args.node_cores, "--node-memory", args.node_memory]

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            saved = os.path.join(tmp, f"models-{run}.yaml")
            r = subprocess.run([args.inferd, "plan", "--profile-store", args.store, "--rps",
                                args.rps, "--save-models", saved, "--profile-batched", *node],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"run {run + 1} failed ({r.returncode}):\n{r.stderr}")
            batched_plan = r.stdout
            results.append(parse(saved))
            with open(saved) as f:
                last_file = f.read()
        # The same figures with core_ms at batch 1.
        batch1 = os.path.join(tmp, "batch1.yaml")
        with open(batch1, "w") as f:
            for line in last_file.splitlines(keepends=True):
                m = LINE.match(line)
                if m:
                    line = line.replace(f"core_ms: {m[3]},",
                                        f"core_ms: {results[-1][m[1]]['batch1']},", 1)
                f.write(line)
        r = subprocess.run([args.inferd, "plan", "--models", batch1, *node],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"plan of the batch-1 figures failed:\n{r.stderr}")
        batch1_plan = r.stdout

    names = sorted(results[0])
    runs = ", ".join(str(i) for i in range(1, args.runs + 1))
    print(f"| model | weights stated | memory (runs {runs}) | core_ms batch 1 (runs {runs}) | "
          f"calibrated batch: core_ms per item (runs {runs}) |")
    print("|---|---:|---:|---:|---:|")
    for n in names:
        mem = " / ".join(f"{r[n]['memory'] / 2**20:.1f}" for r in results)
        b1 = " / ".join(f"{r[n]['batch1']:.3f}" for r in results)
        bb = " / ".join(f"{r[n]['batch']}: {r[n]['batched']:.3f}" for r in results)
        print(f"| {n} | {results[-1][n]['weights']} | {mem} MiB | {b1} | {bb} |")
    print("\nThe last run's models file (--profile-batched):\n")
    print(last_file)
    print("Its plan with core_ms at batch 1:\n")
    print(batch1_plan)
    print("Its plan with core_ms batched:\n")
    print(batched_plan)


if __name__ == "__main__":
    main()
