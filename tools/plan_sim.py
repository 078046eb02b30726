#!/usr/bin/env python3
"""The simulation of docs/SCALING.md: `inferd plan` on generated model lists at
the seeds' scale (tools/plan_models.py: Zipf rps, log-normal CPU time and
memory), each plan checked here independently of the planner (every model
placed with its whole rps, no node over its usable cores or memory, replicas
on different nodes, the lower bound recomputed), with the time to plan.

  tools/plan_sim.py [--inferd build/inferd] [--sizes 3000,10000]
                    [--scenarios balanced,cpu,memory] [--seeds 1,2,3] [--runs 3]

Prints a Markdown table: per set, models, replicas, lower bound, nodes, the
gap, first-fit decreasing and dot product alone, and the median wall time of
`inferd plan --json` (loading the binary's libraries and parsing the YAML
included), its CPU time (user + system: less sensitive to a busy machine),
and the packing alone (as the text report states it).
Node: 16 cores, 64 GiB, headroom 0.2 (override with --node-cores/--node-memory).
"""
import argparse
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan_models  # noqa: E402

GI = 2**30


def check_plan(plan, models, node_cores, node_memory, headroom):
    """Raises AssertionError on any broken constraint; returns (replicas, lower bound)."""
    usable_cores = node_cores * (1 - headroom)
    usable_mem = math.floor(node_memory * (1 - headroom))
    want = {name: (rps, rps * core_ms / 1000, mem) for name, rps, core_ms, mem in models}
    got_rps = {name: 0.0 for name in want}
    replicas = 0
    total_cores = 0.0
    total_mem = 0
    for node in plan["nodes"]:
        cores = sum(m["cores"] for m in node["models"])
        mem = sum(m["memory_bytes"] for m in node["models"])
        names = [m["name"] for m in node["models"]]
        assert len(names) == len(set(names)), f"{node['name']}: two replicas of one model"
        assert cores <= usable_cores * (1 + 1e-9), f"{node['name']}: {cores} cores > {usable_cores}"
        assert mem <= usable_mem, f"{node['name']}: {mem} bytes > {usable_mem}"
        assert abs(cores - node["cores_used"]) < 1e-6 and mem == node["memory_used_bytes"]
        for m in node["models"]:
            rps, need, size = want[m["name"]]
            assert m["memory_bytes"] == size, f"{m['name']}: memory {m['memory_bytes']} != {size}"
            got_rps[m["name"]] += m["rps"]
            replicas += 1
        total_cores += cores
        total_mem += mem
    for name, (rps, need, _) in want.items():
        assert abs(got_rps[name] - rps) <= 1e-6 * max(1.0, rps), f"{name}: rps {got_rps[name]} != {rps}"
    lb = max(math.ceil(total_cores / usable_cores - 1e-9), math.ceil(total_mem / usable_mem - 1e-9))
    assert lb == plan["lower_bound_nodes"], f"lower bound {plan['lower_bound_nodes']} != {lb}"
    return replicas, lb


def run(cmd):
    """stdout, wall seconds, CPU seconds (user + system) of the command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r.stdout, elapsed, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inferd", default="build/inferd")
    ap.add_argument("--sizes", default="3000,10000")
    ap.add_argument("--scenarios", default="balanced,cpu,memory")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--node-cores", type=float, default=16)
    ap.add_argument("--node-memory-gib", type=float, default=64)
    ap.add_argument("--headroom", type=float, default=0.2)
    a = ap.parse_args()
    node_memory = int(a.node_memory_gib * GI)
    print(f"node: {a.node_cores:g} cores, {a.node_memory_gib:g} GiB, headroom {a.headroom}; "
          f"median of {a.runs} runs\n")
    print("| scenario | seed | models | replicas | lower bound | nodes | over the bound "
          "| FFD alone | dot product alone | method | plan --json wall (s) | its CPU (s) | packing (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in a.scenarios.split(","):
            for n in map(int, a.sizes.split(",")):
                for seed in map(int, a.seeds.split(",")):
                    models = plan_models.generate(n, scenario, seed)
                    path = os.path.join(tmp, f"{scenario}-{n}-{seed}.yaml")
                    with open(path, "w") as f:
                        plan_models.write_yaml(models, f)
                    # The YAML holds rounded figures: check against what inferd read.
                    models = [(nm, float(f"{r:.3f}"), float(f"{c:.3f}"), m) for nm, r, c, m in models]
                    base = [a.inferd, "plan", "--models", path, "--node-cores", str(a.node_cores),
                            "--node-memory", str(node_memory), "--headroom", str(a.headroom)]
                    walls, cpus, packs = [], [], []
                    for _ in range(a.runs):
                        out, wall, cpu = run(base + ["--json"])
                        walls.append(wall)
                        cpus.append(cpu)
                        text, _, _ = run(base)
                        packs.append(float(re.search(r"packed in ([0-9.]+) s", text).group(1)))
                    plan = json.loads(out)
                    replicas, lb = check_plan(plan, models, a.node_cores, node_memory, a.headroom)
                    m = re.search(r"method: (.*) \(alone, first-fit decreasing: (\d+) nodes, "
                                  r"dot product: (\d+)\)", text)
                    nodes = len(plan["nodes"])
                    print(f"| {scenario} | {seed} | {n} | {replicas} | {lb} | {nodes} | "
                          f"{nodes - lb} ({100 * (nodes - lb) / lb:.1f}%) | {m.group(2)} | {m.group(3)} | "
                          f"{m.group(1)} | {statistics.median(walls):.2f} | {statistics.median(cpus):.2f} | "
                          f"{statistics.median(packs):.3f} |",
                          flush=True)


if __name__ == "__main__":
    main()
