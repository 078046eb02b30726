"""A lone request uses every core (issue 37, part 3), the real binary: when a model's queue
holds one request and nothing else is queued, the executor that takes it runs it on the cores
of the executors idle at that moment (parked meanwhile); under load each executor keeps its
own core. ONNX Runtime models are widened; TorchScript models are not (TorchModel::RunsWide). Asserted on the server's own accounting, never on time:

  - inferd_lone_wide_batches_total{model} counts the batches run wide: ONNX Runtime requests
    sent one at a time run wide (the model's second session, as wide as all executors) when
    the server has 2 or more usable cores, and never on one (CI confines the suite to one
    core); TorchScript's never;
  - inferd_compute_threads_peak, the most intra-op threads that ran batches at once, never
    exceeds the usable cores, alone or under load;
  - the answers run wide equal those run narrow (8 at once, batched) within 1e-4;
  - `--widen-lone-requests=false` keeps every request on its own executor's core.
The ONNX half is skipped when the binary has no onnxruntime backend."""

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import SOURCE_DIR, stop_and_check
from inferd_e2e import get, parse_metrics, post, wait_until
from test_threads import usable_cores

TORCH = "mobilenet_v3_small"
ONNX = TORCH + "_onnx"
LONE = 8


@pytest.fixture(scope="module")
def store(example_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("lone-store")
    src = os.path.join(example_store, TORCH)
    os.makedirs(store / TORCH / "1")
    for name in ("config.yaml", "labels.txt"):
        shutil.copyfile(os.path.join(src, name), store / TORCH / name)
    shutil.copyfile(os.path.join(src, "1", "model.pt"), store / TORCH / "1" / "model.pt")
    r = subprocess.run(["/usr/bin/python3", os.path.join(SOURCE_DIR, "tools", "make_onnx_models.py"),
                        "--store", str(store), "--models", TORCH],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return store


@pytest.fixture(scope="module")
def image():
    with open(os.path.join(SOURCE_DIR, "examples", "images", "cat.jpg"), "rb") as f:
        return f.read()


def start(server_factory, store, name, args=()):
    # Long deadlines: the suite may run under ASan on one core.
    s = server_factory(store, name, args=list(args), wait_ready=False)
    wait_until(lambda: get(s.http, f"/v2/models/{TORCH}/ready").status == 200, 300, "torch ready")
    served = [TORCH]
    meta = None

    def onnx_settled():
        nonlocal meta
        if get(s.http, f"/v2/models/{ONNX}/ready").status == 200:
            return "ready"
        meta = get(s.http, f"/v2/models/{ONNX}").body.decode()
        return "failed" if '"error"' in meta else None

    if wait_until(onnx_settled, 300, f"{ONNX} ready or failed") == "ready":
        served.append(ONNX)
    else:
        assert "is not built into this binary" in meta, meta
    return s, served


def metrics(s):
    return parse_metrics(get(s.metrics, "/metrics").body.decode())


def value(samples, name, **labels):
    return sum(v for n, l, v in samples
               if n == name and all(l.get(k) == val for k, val in labels.items()))


def classify(s, model, image):
    r = post(s.http, f"/predictions/{model}", image, headers={"Content-Type": "image/jpeg"},
             timeout=300)
    assert r.status == 200, r
    return r.json()


def assert_close(a, b, what):
    assert list(a) == list(b), f"{what}: top-5 {a} != {b}"
    for label in a:
        assert abs(a[label] - b[label]) <= 1e-4, f"{what}: {label} {a[label]} != {b[label]}"


def test_a_lone_request_runs_on_every_idle_core_and_answers_the_same(server_factory, store,
                                                                     image, inferd_bin):
    cores = usable_cores(inferd_bin)
    s, served = start(server_factory, store, "lone")
    for model in served:
        lone = [classify(s, model, image) for _ in range(LONE)]  # one at a time
        with ThreadPoolExecutor(8) as pool:
            loaded = list(pool.map(lambda _: classify(s, model, image), range(32)))
        for i, answer in enumerate(lone + loaded):
            assert_close(answer, lone[0], f"{model}: answer {i} against the first lone one")
        m = metrics(s)
        wide = value(m, "inferd_lone_wide_batches_total", model=model)
        report = (f"{model}: usable cores {cores}, wide batches {wide}, compute threads peak "
                  f"{value(m, 'inferd_compute_threads_peak')}")
        print(report)
        if model == TORCH:
            # TorchScript is not widened (TorchModel::RunsWide: measured slower on a shared
            # machine); its lone requests stay on their executor's core.
            assert wide == 0, report
        elif cores >= 2:
            # Each lone request finds the other executors idle once they have answered the
            # previous one; one that is still finishing its accounting may run one narrow.
            assert wide >= 1, report
        else:
            assert wide == 0, report
        assert 1 <= value(m, "inferd_compute_threads_peak") <= cores, report
    assert value(metrics(s), "inferd_compute_threads") == 0
    stop_and_check(s)


def test_turned_off_every_request_keeps_its_core(server_factory, store, image, inferd_bin):
    s, served = start(server_factory, store, "lone-off", ["--widen-lone-requests=false"])
    for model in served:
        for _ in range(4):
            classify(s, model, image)
    m = metrics(s)
    assert value(m, "inferd_lone_wide_batches_total") == 0
    # Each request on its own executor: at most one thread per executor.
    assert value(m, "inferd_compute_threads_peak") <= usable_cores(inferd_bin)
    stop_and_check(s)
