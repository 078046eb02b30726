"""`backend: xgboost` end to end: the wine model trained by tools/make_xgboost_models.py,
served by the real binary, answers what python3-xgboost predicts for the same rows (1e-6),
one row at a time, many rows in one request and from concurrent requests (batched across
requests); bad input and configs the backend cannot honour are refused with the reason."""

import concurrent.futures
import json
import os
import subprocess

import numpy as np
import pytest
import torch

from conftest import SOURCE_DIR, stop_and_check
from inferd_e2e import get, infer_binary, infer_json, parse_infer_response, wait_until

xgb = pytest.importorskip("xgboost")

MODEL = "wine_xgb"


@pytest.fixture(scope="module")
def xgb_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("xgb-store")
    r = subprocess.run(["/usr/bin/python3", os.path.join(SOURCE_DIR, "tools", "make_xgboost_models.py"),
                        "--store", str(store)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    config = (store / MODEL / "config.yaml").read_text()
    # What the backend does not support is refused with the file and key named.
    for name, old, new in [("wine_bf16", "instances: auto", "instances: auto\nprecision: bf16"),
                           ("wine_frozen", "instances: auto", "instances: auto\nvariants: frozen"),
                           ("wine_12", "shape: [13]", "shape: [12]"),
                           ("wine_4", "shape: [3]", "shape: [4]")]:
        d = store / name
        (d / "1").mkdir(parents=True)
        (d / "1" / "model.json").write_bytes((store / MODEL / "1" / "model.json").read_bytes())
        (d / "config.yaml").write_text(config.replace(old, new))
    return store


BROKEN = {
    "wine_bf16": "wine_bf16/config.yaml: precision: the xgboost backend supports fp32, got 'bf16'",
    "wine_frozen": "wine_frozen/config.yaml: variants: the xgboost backend has no execution variants",
    "wine_12": "inputs[0].shape: [12] in config.yaml, but the model in",
    "wine_4": "outputs[0].shape: [4] in config.yaml, but the model predicts 3 value(s) per item",
}


@pytest.fixture(scope="module")
def xgb_server(server_factory, xgb_store):
    s = server_factory(xgb_store, "xgboost", wait_ready=False)
    wait_until(lambda: get(s.http, f"/v2/models/{MODEL}/ready").status == 200, 60, "wine_xgb ready")

    def settled():
        return all(BROKEN[m].encode() in get(s.http, f"/v2/models/{m}").body for m in BROKEN)

    wait_until(settled, 60, "the misconfigured models reported")
    yield s
    stop_and_check(s)


@pytest.fixture(scope="module")
def holdout(xgb_store):
    with open(xgb_store / MODEL / "1" / "holdout.json") as f:
        rows = np.asarray(json.load(f)["rows"], dtype=np.float32)
    booster = xgb.Booster()
    booster.load_model(str(xgb_store / MODEL / "1" / "model.json"))
    reference = booster.predict(xgb.DMatrix(rows))
    assert reference.shape == (len(rows), 3)
    return rows, reference


def probabilities(resp):
    _, outputs = parse_infer_response(resp)
    return outputs["probabilities"].numpy()


def test_answers_match_python_xgboost(xgb_server, holdout):
    rows, reference = holdout
    # All held-out rows in one request: one prediction call for the batch.
    got = probabilities(infer_json(xgb_server.http, MODEL, [("features", torch.from_numpy(rows))]))
    assert got.shape == reference.shape
    assert np.abs(got - reference).max() <= 1e-6, np.abs(got - reference).max()
    assert (got.argmax(1) == reference.argmax(1)).all()
    # The binary extension carries the same floats.
    got = probabilities(infer_binary(xgb_server.http, MODEL, [("features", torch.from_numpy(rows[:5]))],
                                     binary_outputs=["probabilities"]))
    assert np.abs(got - reference[:5]).max() <= 1e-6


def test_concurrent_single_rows_match(xgb_server, holdout):
    rows, reference = holdout

    def one(i):
        return i, probabilities(infer_json(xgb_server.http, MODEL,
                                           [("features", torch.from_numpy(rows[i:i + 1]))]))

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for i, got in pool.map(one, range(len(rows))):
            assert got.shape == (1, 3)
            assert np.abs(got[0] - reference[i]).max() <= 1e-6, (i, got, reference[i])


def test_bad_input_is_refused_and_server_goes_on(xgb_server, holdout):
    rows, reference = holdout
    r = infer_json(xgb_server.http, MODEL, [("features", torch.zeros(2, 12))])
    assert r.status == 400, r
    assert "features" in r.error() and "13" in r.error(), r.error()
    r = infer_json(xgb_server.http, MODEL, [("features", torch.zeros(2, 13, dtype=torch.int32))])
    assert r.status == 400, r
    got = probabilities(infer_json(xgb_server.http, MODEL, [("features", torch.from_numpy(rows[:1]))]))
    assert np.abs(got - reference[:1]).max() <= 1e-6


@pytest.mark.parametrize("model", sorted(BROKEN))
def test_unsupported_config_is_named(xgb_server, model):
    r = get(xgb_server.http, f"/v2/models/{model}/ready")
    assert r.status != 200, r
    r = get(xgb_server.http, f"/v2/models/{model}")
    assert BROKEN[model] in r.body.decode(), f"{model}: expected '{BROKEN[model]}' in {r}"
