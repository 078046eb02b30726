"""`backend: onnxruntime` end to end: the ONNX copy of MobileNetV3-small that
tools/make_onnx_models.py exports from the example store's TorchScript file answers
what PyTorch computes with the TorchScript copy of the same weights (tensors, batched,
concurrent), and through the same image pre/post-processing gives the same labels as
the TorchScript copy served beside it. Skipped when the binary has no onnxruntime
backend (scripts/setup.sh installs ONNX Runtime; docs/CONFIG.md)."""

import concurrent.futures
import json
import os
import shutil
import subprocess

import numpy as np
import pytest
import torch

from conftest import SOURCE_DIR, load_reference, stop_and_check
from inferd_e2e import (assert_same, call, get, infer_binary, infer_json, parse_infer_response,
                        wait_until)

MODEL = "mobilenet_v3_small"
ONNX = MODEL + "_onnx"
TENSORS = "onnx_tensors"  # the ONNX copy without pre/post-processing: tensors in, logits out


@pytest.fixture(scope="module")
def onnx_store(example_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("onnx-store")
    src = os.path.join(example_store, MODEL)
    os.makedirs(store / MODEL / "1")
    for name in ("config.yaml", "labels.txt"):
        shutil.copyfile(os.path.join(src, name), store / MODEL / name)
    shutil.copyfile(os.path.join(src, "1", "model.pt"), store / MODEL / "1" / "model.pt")
    r = subprocess.run(["/usr/bin/python3", os.path.join(SOURCE_DIR, "tools", "make_onnx_models.py"),
                        "--store", str(store), "--models", MODEL],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (store / ONNX / "1" / "model.onnx").exists(), r.stdout + r.stderr
    config = (store / ONNX / "config.yaml").read_text()
    for name, text in [(TENSORS, "\n".join(l for l in config.splitlines()
                                           if not l.startswith(("preprocess", "postprocess")))),
                       # A config naming an input the graph does not have is refused with the reason.
                       ("onnx_wrong_input", config.replace("name: input,", "name: image,"))]:
        os.makedirs(store / name / "1")
        shutil.copyfile(store / ONNX / "1" / "model.onnx", store / name / "1" / "model.onnx")
        (store / name / "config.yaml").write_text(text + "\n")
    return store



@pytest.fixture(scope="module")
def onnx_server(server_factory, onnx_store):
    s = server_factory(onnx_store, "onnxruntime", wait_ready=False)
    wait_until(lambda: get(s.http, f"/v2/models/{MODEL}/ready").status == 200, 120, "torch copy ready")
    # Ready, or failed with the reason in its metadata: only the server's own
    # "not built into this binary" skips; any other failure fails below.
    def settled():
        if get(s.http, f"/v2/models/{ONNX}/ready").status == 200:
            return "ready"
        meta = get(s.http, f"/v2/models/{ONNX}")
        try:
            return json.loads(meta.body).get("error")
        except ValueError:
            return None

    state = wait_until(settled, 120, f"{ONNX} ready or failed")
    if "is not built into this binary" in state and "backend 'onnxruntime'" in state:
        stop_and_check(s)
        pytest.skip("ONNX Runtime not installed: the server says: " + state +
                    "; the onnxruntime backend is not built (scripts/setup_onnxruntime.sh)")
    for m in (ONNX, TENSORS):
        wait_until(lambda: get(s.http, f"/v2/models/{m}/ready").status == 200, 120, f"{m} ready")
    yield s
    stop_and_check(s)


def test_onnx_matches_torchscript_of_same_weights(onnx_server, onnx_store):
    rng = np.random.default_rng(28)
    x = torch.from_numpy(rng.normal(size=(3, 3, 224, 224)).astype(np.float32))
    with torch.inference_mode():
        ref = load_reference(onnx_store, MODEL)(x)
    _, out = parse_infer_response(infer_binary(onnx_server.http, TENSORS, [("input", x)],
                                               binary_outputs=["logits"]))
    assert_same(out["logits"], ref, rtol=1e-4, what="ONNX logits vs TorchScript")
    assert (out["logits"].argmax(1) == ref.argmax(1)).all()

    def one(i):
        return i, parse_infer_response(infer_json(onnx_server.http, TENSORS,
                                                  [("input", x[i:i + 1])]))[1]

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        for i, got in pool.map(one, [0, 1, 2, 0, 1, 2]):
            assert_same(got["logits"], ref[i:i + 1], rtol=1e-4, what=f"row {i} alone")


def test_same_labels_through_the_image_pipeline(onnx_server):
    for image in ("cat.jpg", "grace_hopper.jpg"):
        with open(os.path.join(SOURCE_DIR, "examples", "images", image), "rb") as f:
            body = f.read()
        answers = {}
        for m in (MODEL, ONNX):
            r = call(onnx_server.http, "POST", f"/predictions/{m}", body,
                     headers={"Content-Type": "image/jpeg"})
            assert r.status == 200, r
            answers[m] = r.json()
        torch_top, onnx_top = answers[MODEL], answers[ONNX]
        assert list(torch_top) == list(onnx_top), (image, torch_top, onnx_top)
        for label in torch_top:
            assert abs(torch_top[label] - onnx_top[label]) <= 1e-4, (image, torch_top, onnx_top)


def test_config_that_does_not_fit_the_graph_is_named(onnx_server):
    r = get(onnx_server.http, "/v2/models/onnx_wrong_input")
    assert "the graph's input 'input' is not in config.yaml" in r.body.decode(), r
    assert get(onnx_server.http, "/v2/models/onnx_wrong_input/ready").status != 200
