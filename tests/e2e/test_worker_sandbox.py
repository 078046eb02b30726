"""The worker sandbox beyond handler deaths (docs/TORCHSERVE.md): worker_memory_limit kills a
worker over its resident limit and fails only its batch (500 with the reason), the model answers
again and /metrics counts the workers' memory; `isolation: process` runs a plain TorchScript
model in the same workers, answering as the in-process model does, and a worker killed with
SIGSEGV while its forward runs fails only that batch. No wall-clock bounds are asserted: waits
are for states the server reports (a worker's /proc state), with long deadlines."""

import concurrent.futures
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import SOURCE_DIR, stop_and_check
from inferd_e2e import (assert_same, call, get, infer_json, metric_sum_model, parse_infer_response,
                        parse_metrics, wait_until)

HANDLERS = os.path.join(SOURCE_DIR, "tests", "e2e", "mar_handlers")
MAKE_MAR = os.path.join(SOURCE_DIR, "tools", "make_mar.py")
LONG = {"X-Request-Timeout-Ms": "600000", "Content-Type": "application/json"}
LIMIT_MIB = 600


class Spinner(torch.nn.Module):
    """An MLP whose forward also spins for x[0, 0] rounds past 1000: the test's way to hold a
    forward in the worker while it kills the worker."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 8)
        self.w = torch.nn.Parameter(torch.eye(64) * 0.5)

    def forward(self, x):
        spin = torch.zeros(64, 64)
        rounds = int(x[0, 0]) if bool(x[0, 0] > 1000) else 0
        for _ in range(rounds):
            spin = spin @ self.w + 1.0
        return self.b(torch.relu(self.a(x))) + spin.sum() * 0.0


def write_model(store, name, model_pt, isolation):
    d = store / name
    (d / "1").mkdir(parents=True)
    (d / "1" / "model.pt").write_bytes(model_pt.read_bytes())
    extra = "isolation: process\nworker_memory_limit: 2G\n" if isolation else ""
    (d / "config.yaml").write_text(
        "max_batch_size: 4\n"
        "dynamic_batching: {max_queue_delay_us: 2000, calibrate: false}\n"
        "request_timeout_ms: 600000\nmax_execution_ms: 600000\n"
        "instances: {count: 1, threads: 1}\n"
        "inputs: [{name: x, datatype: FP32, shape: [16]}]\n"
        "outputs: [{name: y, datatype: FP32, shape: [8]}]\n" + extra)


@pytest.fixture(scope="module")
def sandbox_server(server_factory, tmp_path_factory):
    store = tmp_path_factory.mktemp("sandbox-store")
    work = tmp_path_factory.mktemp("sandbox-work")
    (work / "model-config.yaml").write_text(f"workerMemoryLimit: {LIMIT_MIB}M\n")
    r = subprocess.run([sys.executable, MAKE_MAR, "--model-name", "hog", "--export-path", str(store),
                        "--handler", os.path.join(HANDLERS, "hog_handler.py"),
                        "--config-file", str(work / "model-config.yaml")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    torch.manual_seed(0)
    torch.jit.script(Spinner().eval()).save(str(work / "spinner.pt"))
    write_model(store, "mlp", work / "spinner.pt", isolation=False)
    write_model(store, "mlp_proc", work / "spinner.pt", isolation=True)
    old = os.environ.get("INFERD_MAR_CACHE")
    os.environ["INFERD_MAR_CACHE"] = str(tmp_path_factory.mktemp("sandbox-cache"))
    try:
        s = server_factory(store, "sandbox", wait_ready=False)
    finally:
        if old is None:
            del os.environ["INFERD_MAR_CACHE"]
        else:
            os.environ["INFERD_MAR_CACHE"] = old
    for m in ("hog", "mlp", "mlp_proc"):
        wait_until(lambda m=m: get(s.http, f"/v2/models/{m}/ready").status == 200, 180, f"{m} ready")
    yield s
    stop_and_check(s)


def hog(port, body):
    return call(port, "POST", "/predictions/hog", body=json.dumps(body), headers=LONG)


def worker_pids(server, script, model):
    """Live worker processes of `model` in `server` (their command line names the script, the
    model and a folder of the server's store)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(script.encode()) for a in args) and model.encode() in args and \
                any(a.startswith(server.store.encode()) for a in args):
            pids.append(int(entry))
    return pids


def proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_worker_over_its_memory_limit_fails_its_batch_and_the_model_comes_back(sandbox_server):
    s = sandbox_server
    r = hog(s.http, {"x": 1})
    assert r.status == 200, r.body
    samples = parse_metrics(get(s.metrics, "/metrics").body.decode())
    resident = metric_sum_model(samples, "inferd_worker_resident_bytes", "hog")
    assert 0 < resident < LIMIT_MIB << 20, resident  # the worker's memory, counted per model
    r = hog(s.http, {"hog_mib": LIMIT_MIB + 100})
    assert r.status == 500, r.body
    assert b"over worker_memory_limit 600.0 MiB" in r.body and b"killed" in r.body, r.body
    x = torch.ones(1, 16)
    assert infer_json(s.http, "mlp", [("x", x)]).status == 200  # the other models serve
    ok = hog(s.http, {"x": 2})
    assert ok.status == 200, ok.body  # a new worker took the batch, without the leak
    assert json.loads(ok.body)["held_mib"] == 0
    assert get(s.http, "/v2/health/live").status == 200


def test_isolated_torchscript_answers_as_the_in_process_model(sandbox_server):
    s = sandbox_server
    described = json.loads(get(s.management, "/models/mlp_proc").body)[0]
    assert described["status"] != "QUARANTINED"
    rng = np.random.default_rng(5)
    inputs = [torch.from_numpy(rng.normal(size=(n, 16)).astype(np.float32)) for n in (1, 3, 1, 2)]
    for x in inputs:
        _, want = parse_infer_response(infer_json(s.http, "mlp", [("x", x)]))
        _, got = parse_infer_response(infer_json(s.http, "mlp_proc", [("x", x)]))
        assert_same(got["y"], want["y"], rtol=1e-5, what="y")
    # At c=8 the scheduler batches them; each answer is still its own.
    rows = [torch.from_numpy(rng.normal(size=(1, 16)).astype(np.float32)) for _ in range(16)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda x: infer_json(s.http, "mlp_proc", [("x", x)]), rows))
    for x, r in zip(rows, got):
        _, want = parse_infer_response(infer_json(s.http, "mlp", [("x", x)]))
        assert_same(parse_infer_response(r)[1]["y"], want["y"], rtol=1e-5, what="y")
    samples = parse_metrics(get(s.metrics, "/metrics").body.decode())
    assert metric_sum_model(samples, "inferd_worker_resident_bytes", "mlp_proc") > 0


def test_segfault_in_an_isolated_forward_fails_only_its_batch(sandbox_server):
    s = sandbox_server
    [pid] = worker_pids(s, "inferd_tensor_worker.py", "mlp_proc")
    spin = torch.zeros(1, 16)
    spin[0, 0] = 1e9  # a forward that spins until the worker is killed
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(infer_json, s.http, "mlp_proc", [("x", spin)])
        # The worker leaves its wait for a batch (S) once the batch arrives: then it computes.
        wait_until(lambda: proc_state(pid) == "R" or pending.done(), 300, "the forward running")
        assert not pending.done(), pending.result()
        # (No request to another model meanwhile: on one core the one executor is this batch's,
        # as it would be for a long forward in the server.)
        os.kill(pid, signal.SIGSEGV)
        r = pending.result(timeout=600)
    assert r.status == 500, r
    assert b"SIGSEGV" in r.body and b"died while running this batch" in r.body, r.body
    assert infer_json(s.http, "mlp", [("x", torch.ones(1, 16))]).status == 200
    assert get(s.http, "/v2/health/live").status == 200
    x = torch.from_numpy(np.random.default_rng(9).normal(size=(2, 16)).astype(np.float32))
    _, want = parse_infer_response(infer_json(s.http, "mlp", [("x", x)]))
    _, got = parse_infer_response(infer_json(s.http, "mlp_proc", [("x", x)]))
    assert_same(got["y"], want["y"], rtol=1e-5, what="y")  # a new worker serves
    assert worker_pids(s, "inferd_tensor_worker.py", "mlp_proc") != [pid]
