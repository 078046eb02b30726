#!/usr/bin/env python3
"""Issue 31's simulation (docs/SCALING.md, docs/performance/plan.md): `inferd plan`
over a mix of node types on generated fleets (tools/plan_models.py --scenario
mixed: hot core-heavy, big cold, many small models), each plan checked here
independently of the planner (every model's whole rps placed, each node within
its own type's usable cores and memory, replicas of a model on different
nodes, the cost added up) and compared with the LP bound recomputed here; then
a rebalance (--current) after a 20% load shift (each model's rps times a
uniform factor in [0.8, 1.2]), with the models it moved counted here from the
two plans.

  tools/plan_mixed_sim.py [--inferd build/inferd] [--sizes 3000,10000] [--seeds 1,2,3]

Prints a Markdown table. Types: a 16 cores/32Gi at 0.68/h, b 8/64Gi at 0.50,
c 4/128Gi at 0.80 (the issue's), headroom 0.2.
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan_models  # noqa: E402

GI = 2**30
TYPES = [("a", 16, 32 * GI, 0.68), ("b", 8, 64 * GI, 0.50), ("c", 4, 128 * GI, 0.80)]
TYPE_FLAGS = [f for name, cores, mem, price in TYPES
              for f in ("--node-type", f"{name}:{cores}:{mem // GI}Gi:{price}")]
HEADROOM = 0.2


def lp_bound(models, types=TYPES, headroom=HEADROOM, fewest_replicas=True):
    """min sum price * n over fractional mixes covering total cores and memory.
    The memory counts one copy per replica of the coarsest split (a model
    needing more cores than the largest type that holds it has ceil(need /
    usable cores) copies): no plan has fewer."""
    caps = [(c * (1 - headroom), m * (1 - headroom), p) for _, c, m, p in types]
    cores = sum(rps * ms / 1000 for _, rps, ms, _ in models)
    mem = 0
    for _, rps, ms, m in models:
        fit = max(c for c, cm, _ in caps if m <= cm)
        need = rps * ms / 1000
        mem += m * (max(1, -(-need // fit)) if need > fit * (1 + 1e-9) else 1)
    best = min(p * max(cores / c, mem / m) for c, m, p in caps)
    for i in range(len(caps)):
        for j in range(i + 1, len(caps)):
            (c1, m1, p1), (c2, m2, p2) = caps[i], caps[j]
            det = c1 * m2 - c2 * m1
            if det == 0:
                continue
            x, y = (cores * m2 - c2 * mem) / det, (c1 * mem - cores * m1) / det
            if x >= 0 and y >= 0:
                best = min(best, p1 * x + p2 * y)
    return best


def check_mixed_plan(result, models, types=TYPES, headroom=HEADROOM):
    """Raises AssertionError on any broken constraint; returns the cost."""
    caps = {name: (c * (1 - headroom), int(m * (1 - headroom)), p) for name, c, m, p in types}
    rps = {name: 0.0 for name, *_ in models}
    memory = {name: m for name, _, _, m in models}
    cost = 0.0
    for node in result["nodes"]:
        cap_cores, cap_mem, price = caps[node["type"]]
        cost += price
        names = [m["name"] for m in node["models"]]
        assert len(names) == len(set(names)), f"{node['name']}: two replicas of one model"
        assert sum(m["cores"] for m in node["models"]) <= cap_cores * (1 + 1e-9), node["name"]
        assert sum(m["memory_bytes"] for m in node["models"]) <= cap_mem, node["name"]
        for m in node["models"]:
            assert m["memory_bytes"] == memory[m["name"]], m["name"]
            rps[m["name"]] += m["rps"]
    for name, want, _, _ in models:
        assert abs(rps[name] - want) <= 1e-6 * max(1.0, want), f"{name}: rps {rps[name]} != {want}"
    assert abs(cost - result["cost_per_hour"]) < 1e-6, (cost, result["cost_per_hour"])
    return cost


def moved_models(before, after):
    """Models of `before` with a replica on a node (by name) that did not hold them."""
    held, now = {}, {}
    for node in before["nodes"]:
        for m in node["models"]:
            held.setdefault(m["name"], set()).add(node["name"])
    for node in after["nodes"]:
        for m in node["models"]:
            now.setdefault(m["name"], set()).add(node["name"])
    return sum(1 for name, nodes in now.items() if name in held and not nodes <= held[name])


def write_models(models, path):
    """Writes the YAML; returns the models as the binary reads them (the file's rounding)."""
    with open(path, "w") as f:
        plan_models.write_yaml(models, f)
    return [(n, float(f"{r:.3f}"), float(f"{c:.3f}"), m) for n, r, c, m in models]


def shift_load(models, seed, spread=0.2):
    rng = random.Random(seed)
    return [(n, rps * rng.uniform(1 - spread, 1 + spread), ms, m) for n, rps, ms, m in models]


def plan(inferd, models_file, *extra):
    """The --json answer, and the command's wall and CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run([inferd, "plan", "--models", models_file, *TYPE_FLAGS, "--json", *extra],
                       capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"inferd plan failed ({r.returncode}): {r.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(r.stdout), f"{wall:.2f} / {cpu:.2f}"


def best_single(inferd, models_file):
    r = subprocess.run([inferd, "plan", "--models", models_file, *TYPE_FLAGS],
                       capture_output=True, text=True, check=True)
    line = next(l for l in r.stdout.splitlines() if l.startswith("the best single type:"))
    return line.split("type:")[1].strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inferd", default="build/inferd")
    ap.add_argument("--sizes", default="3000,10000")
    ap.add_argument("--seeds", default="1,2,3")
    a = ap.parse_args()
    print("| models | seed | bound (/h) | plan (/h) | plan / bound | mix | best single type | plan wall / CPU (s) "
          "| after a 20% shift: bound | rebalanced (/h) | / bound | moved | from scratch: moved | rebalance wall / CPU (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in a.sizes.split(",")):
            for seed in (int(x) for x in a.seeds.split(",")):
                path = os.path.join(tmp, f"m{n}_{seed}.yaml")
                models = write_models(plan_models.generate_mixed(n, seed), path)
                result, wall = plan(a.inferd, path)
                cost = check_mixed_plan(result, models)
                bound = lp_bound(models)
                assert abs(bound - result["lower_bound_cost_per_hour"]) <= 1e-6 * bound
                mix = " + ".join(f"{t['nodes']} {t['name']}" for t in result["node_types"] if t["nodes"])
                single = best_single(a.inferd, path)
                running = os.path.join(tmp, "running.json")
                with open(running, "w") as f:
                    json.dump(result, f)
                spath = os.path.join(tmp, f"s{n}_{seed}.yaml")
                shifted = write_models(shift_load(models, seed), spath)
                after, rwall = plan(a.inferd, spath, "--current", running)
                rcost = check_mixed_plan(after, shifted)
                rbound = lp_bound(shifted)
                moved = moved_models(result, after)
                assert moved == after["rebalance"]["moved_models"], (moved, after["rebalance"])
                print(f"| {n} | {seed} | {bound:.2f} | {cost:.2f} | {cost / bound:.3f} | {mix} | {single} "
                      f"| {wall} | {rbound:.2f} | {rcost:.2f} | {rcost / rbound:.3f} "
                      f"| {moved} ({100 * moved / n:.1f}%) | {after['rebalance']['from_scratch_moved_models']} "
                      f"| {rwall} |", flush=True)


if __name__ == "__main__":
    main()
