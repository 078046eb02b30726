"""`inferd plan` v2 (issue 31), the real binary:
  - the cheapest mix of node types for issue 31's 3,000 mixed models
    (tools/plan_models.py --scenario mixed), every node checked here against
    its type's usable share and the LP bound recomputed here: within 1.10x;
  - a rebalance (--current) after a 20% load shift: valid, within 1.10x of the
    bound, moving at most 10% of the models (counted here from the two plans);
  - --from-metrics against a real inferd serving the example store: rps and
    CPU per request from its /metrics over a window, the saved models file
    planned; the requests it counted checked against the client's answers,
    memory from a one-model server's resident gauge, or from --models.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time

import yaml

from conftest import SOURCE_DIR
from inferd_e2e import Server, post

sys.path.insert(0, os.path.join(SOURCE_DIR, "tools"))
import plan_models  # noqa: E402

from plan_mixed_sim import (TYPE_FLAGS, check_mixed_plan, lp_bound, moved_models,  # noqa: E402
                            shift_load, write_models)


def run_plan(inferd_bin, *args, timeout=300):
    return subprocess.run([inferd_bin, "plan", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_three_thousand_mixed_models_within_ten_percent_of_the_cost_bound(inferd_bin, tmp_path):
    models = write_models(plan_models.generate_mixed(3000, 1), tmp_path / "models.yaml")
    r = run_plan(inferd_bin, "--models", str(tmp_path / "models.yaml"), *TYPE_FLAGS, "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    cost = check_mixed_plan(result, models)
    bound = lp_bound(models)
    assert abs(result["lower_bound_cost_per_hour"] - bound) <= 1e-6 * bound
    assert bound <= cost <= 1.10 * bound, (cost, bound)
    assert len({n["type"] for n in result["nodes"]}) >= 2  # a mix, not one type
    # The text report states the same cost, bound and mix.
    r = run_plan(inferd_bin, "--models", str(tmp_path / "models.yaml"), *TYPE_FLAGS)
    assert r.returncode == 0, r.stderr
    assert f"cost: {cost:.2f}/h; lower bound {bound:.2f}/h" in r.stdout, r.stdout[:2000]
    assert "the best single type:" in r.stdout


def test_a_rebalance_after_a_load_shift_moves_few_models(inferd_bin, tmp_path):
    base = plan_models.generate_mixed(1000, 2)
    write_models(base, tmp_path / "models.yaml")
    r = run_plan(inferd_bin, "--models", str(tmp_path / "models.yaml"), *TYPE_FLAGS, "--json")
    assert r.returncode == 0, r.stderr
    (tmp_path / "running.json").write_text(r.stdout)
    running = json.loads(r.stdout)
    shifted = write_models(shift_load(base, 3), tmp_path / "shifted.yaml")
    r = run_plan(inferd_bin, "--models", str(tmp_path / "shifted.yaml"), *TYPE_FLAGS, "--json",
                 "--current", str(tmp_path / "running.json"))
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    cost = check_mixed_plan(result, shifted)
    assert cost <= 1.10 * lp_bound(shifted), (cost, lp_bound(shifted))
    moved = moved_models(running, result)
    rb = result["rebalance"]
    assert rb["moved_models"] == moved
    assert moved <= 0.10 * len(base), moved
    assert rb["overloaded_nodes"] > 0  # the shift did push nodes past their share
    assert rb["from_scratch_moved_models"] > moved


def digits_png(example_store):
    with open(os.path.join(example_store, "digits_cnn", "samples", "0000_4.png"), "rb") as f:
        return f.read()


def image_to(port, model, data, kind):
    return post(port, f"/predictions/{model}", data, headers={"Content-Type": f"image/{kind}"})


def drive(send, stop, done, key, errors):
    while not stop.is_set():
        r = send()
        if r.status != 200:
            errors.append(r)
            return
        done.setdefault(key, []).append(time.monotonic())


def measure(inferd_bin, server, senders, tmp_path, *extra, window=3):
    """Runs `plan --from-metrics` while `senders` keep the server busy; returns
    its result, when it ran, and when each model's answers came."""
    stop, done, threads, errors = threading.Event(), {}, [], []
    for key, send in senders.items():
        threads.append(threading.Thread(target=drive, args=(send, stop, done, key, errors)))
    for t in threads:
        t.start()
    time.sleep(0.5)  # traffic flowing before the first scrape
    start = time.monotonic()
    try:
        r = run_plan(inferd_bin, "--from-metrics", f"http://127.0.0.1:{server.metrics}/metrics",
                     "--metrics-window", str(window), "--save-models",
                     str(tmp_path / "measured.yaml"), *TYPE_FLAGS, "--json", *extra, timeout=120)
        end = time.monotonic()
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors
    return r, (start, end), done


def assert_requests_match(saved_line, done, span):
    """The requests the planner counted in its window (the saved line's comment)
    against the client's: the window lies somewhere inside the planner's run,
    so the count must lie between the fewest and the most answers the client
    got in any stretch of that length within the run (10% and 2 requests of slack)."""
    m = re.search(r"(\d+) requests in ([\d.]+) s", saved_line)
    assert m, saved_line
    counted, window = int(m.group(1)), float(m.group(2))
    start, end = span
    counts = []
    s = start
    while s + window <= end:
        counts.append(sum(1 for t in done if s <= t <= s + window))
        s += 0.05
    assert counts, (span, window)
    assert 0.9 * min(counts) - 2 <= counted <= 1.1 * max(counts) + 2, (counted, min(counts),
                                                                        max(counts))


def saved_models(path):
    """name -> (the model's figures, its line with the comment)."""
    with open(path) as f:
        text = f.read()
    lines = {line.split("name: ")[1].split(",")[0]: line for line in text.splitlines()
             if "{name: " in line}
    return {m["name"]: (m, lines[m["name"]]) for m in yaml.safe_load(text)["models"]}


def test_from_metrics_of_a_one_model_server(inferd_bin, example_store, tmp_path):
    server = Server(inferd_bin, example_store, tmp_path / "s1", args=["--models", "digits_cnn"])
    png = digits_png(example_store)
    server.start()
    try:
        r, span, done = measure(
            inferd_bin, server,
            {"digits_cnn": lambda: image_to(server.http, "digits_cnn", png, "png")}, tmp_path)
        assert r.returncode == 0, r.stderr
        import urllib.request
        metrics = urllib.request.urlopen(
            f"http://127.0.0.1:{server.metrics}/metrics", timeout=10).read().decode()
    finally:
        server.stop()
    resident = next(float(line.split()[1]) for line in metrics.splitlines()
                    if line.startswith("inferd_model_resident_bytes "))
    m, line = saved_models(tmp_path / "measured.yaml")["digits_cnn"]
    assert_requests_match(line, done["digits_cnn"], span)
    assert m["core_ms"] > 0
    # A digits forward is tens of microseconds; with HTTP and the PNG decode a
    # request costs well under 50 ms of CPU on any machine.
    assert m["core_ms"] < 50, m
    assert m["memory"] == int(resident)
    result = json.loads(r.stdout)
    assert [mm["name"] for n in result["nodes"] for mm in n["models"]] == ["digits_cnn"]


def test_from_metrics_splits_cpu_by_model_with_memory_from_a_file(inferd_bin, example_store,
                                                                  tmp_path):
    with open(os.path.join(SOURCE_DIR, "examples", "images", "cat.jpg"), "rb") as f:
        jpeg = f.read()
    png = digits_png(example_store)
    server = Server(inferd_bin, example_store, tmp_path / "s2",
                    args=["--models", "digits_cnn,mobilenet_v3_small"])
    server.start()
    try:
        senders = {"digits_cnn": lambda: image_to(server.http, "digits_cnn", png, "png"),
                   "mobilenet_v3_small": lambda: image_to(server.http, "mobilenet_v3_small", jpeg,
                                                          "jpeg")}
        # Without a models file the memory of two models on one server is unknown.
        r, _, _ = measure(inferd_bin, server, senders, tmp_path, window=1)
        assert r.returncode == 2
        assert "no memory for" in r.stderr and "--models FILE" in r.stderr, r.stderr
        base = tmp_path / "base.yaml"
        base.write_text("models:\n"
                        "  - {name: digits_cnn, rps: 1, core_ms: 1, memory: 1Mi}\n"
                        "  - {name: mobilenet_v3_small, rps: 1, core_ms: 1, memory: 64Mi}\n"
                        "  - {name: resnet18, rps: 7, core_ms: 50, memory: 96Mi}\n")
        r, span, done = measure(inferd_bin, server, senders, tmp_path, "--models", str(base))
        assert r.returncode == 0, r.stderr
    finally:
        server.stop()
    saved = saved_models(tmp_path / "measured.yaml")
    m = {name: figures for name, (figures, _) in saved.items()}
    assert m["digits_cnn"]["memory"] == 2**20 and m["mobilenet_v3_small"]["memory"] == 64 * 2**20
    # resnet18 is served by no scraped server: the file's figures stand.
    assert m["resnet18"]["rps"] == 7 and m["resnet18"]["core_ms"] == 50
    for name in ("digits_cnn", "mobilenet_v3_small"):
        assert_requests_match(saved[name][1], done[name], span)
    # A mobilenet request (JPEG decode, resize, 56 MFLOPs) costs far more CPU
    # than a digits one (an 8x8 PNG, 0.1 MFLOPs): the split must see it.
    assert m["mobilenet_v3_small"]["core_ms"] > 3 * m["digits_cnn"]["core_ms"], m
    result = json.loads(r.stdout)
    assert sorted(mm["name"] for n in result["nodes"] for mm in n["models"]) == [
        "digits_cnn", "mobilenet_v3_small", "resnet18"]
