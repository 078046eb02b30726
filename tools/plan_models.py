#!/usr/bin/env python3
"""Model lists for `inferd plan` at the seeds' scale: Zipf-distributed rps and
log-normal memory and CPU time per request, written as the YAML that
`inferd plan --models` reads. Deterministic for a given --seed.

  tools/plan_models.py --models 3000 --scenario balanced --seed 1 > models.yaml

Scenarios (per model, before headroom; a node in docs/SCALING.md is 16 cores, 64 GiB):
  balanced   cores and memory bind about equally (the seed 002 comparison)
  cpu        traffic-heavy: cores bind
  memory     many large, mostly idle models: memory binds
  mixed      issue 31's fleet for a mix of node types: 4% hot core-heavy models,
             12% big cold ones (GiBs, little traffic), 84% small ones; with
             `--node-type a:16:32Gi:0.68 --node-type b:8:64Gi:0.50
             --node-type c:4:128Gi:0.80` the best single type costs about 1.37x
             the fractional bound (docs/SCALING.md)
Used by tools/plan_sim.py; prints to stdout.
"""
import argparse
import math
import random
import sys

# rps: Zipf over the models' popularity ranks, rps_k = top / k^s, scaled so the
# set's mean is mean_rps. core_ms and memory: log-normal (median, sigma).
SCENARIOS = {
    #             mean_rps  zipf_s  core_ms median, sigma  memory median MiB, sigma
    "balanced": dict(mean_rps=11.0, zipf_s=1.0, core_ms=(12.0, 0.7), mem_mib=(400.0, 1.0)),
    "cpu": dict(mean_rps=20.0, zipf_s=0.9, core_ms=(15.0, 0.8), mem_mib=(120.0, 0.9)),
    "memory": dict(mean_rps=2.0, zipf_s=1.1, core_ms=(10.0, 0.7), mem_mib=(400.0, 1.1)),
}


def generate(n, scenario, seed):
    p = SCENARIOS[scenario]
    rng = random.Random(seed)
    weights = [k ** -p["zipf_s"] for k in range(1, n + 1)]
    total = sum(weights)
    rps = [w / total * p["mean_rps"] * n for w in weights]
    rng.shuffle(rps)  # popularity independent of the model's name
    models = []
    for i in range(n):
        core_ms = rng.lognormvariate(math.log(p["core_ms"][0]), p["core_ms"][1])
        mem = rng.lognormvariate(math.log(p["mem_mib"][0] * 2**20), p["mem_mib"][1])
        # Nothing smaller than 1 MiB, nothing larger than 16 GiB (a node is 64 GiB).
        mem = int(min(max(mem, 2**20), 16 * 2**30))
        models.append((f"m{i + 1:05d}", rps[i], core_ms, mem))
    return models


# The mixed scenario: (share of models, rps median, rps sigma, core_ms median,
# core_ms sigma, memory median MiB, memory sigma) per kind; memory clipped to
# [1 MiB, 20 GiB] so every model fits the 32 GiB type at headroom 0.2.
MIXED_KINDS = [
    ("hot", 0.04, 250.0, 0.8, 25.0, 0.5, 400.0, 0.5),
    ("big_cold", 0.12, 0.2, 1.0, 30.0, 0.5, 9 * 1024.0, 0.5),
    ("small", 0.84, 4.0, 1.0, 10.0, 0.7, 300.0, 0.9),
]


def generate_mixed(n, seed):
    rng = random.Random(seed)
    models = []
    for i in range(n):
        u = rng.random()
        for kind, share, rps_m, rps_s, ms_m, ms_s, mem_m, mem_s in MIXED_KINDS:
            if u < share or kind == MIXED_KINDS[-1][0]:
                break
            u -= share
        rps = rng.lognormvariate(math.log(rps_m), rps_s)
        core_ms = rng.lognormvariate(math.log(ms_m), ms_s)
        mem = rng.lognormvariate(math.log(mem_m * 2**20), mem_s)
        mem = int(min(max(mem, 2**20), 20 * 2**30))
        models.append((f"m{i + 1:05d}", rps, core_ms, mem))
    return models


def write_yaml(models, out):
    out.write("models:\n")
    for name, rps, core_ms, mem in models:
        out.write(f"  - {{name: {name}, rps: {rps:.3f}, core_ms: {core_ms:.3f}, memory: {mem}}}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=3000)
    ap.add_argument("--scenario", choices=sorted(SCENARIOS) + ["mixed"], default="balanced")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.scenario == "mixed":
        write_yaml(generate_mixed(a.models, a.seed), sys.stdout)
    else:
        write_yaml(generate(a.models, a.scenario, a.seed), sys.stdout)


if __name__ == "__main__":
    main()
