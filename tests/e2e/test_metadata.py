"""KServe v2 server and model metadata, readiness and health."""

import pytest

from inferd_e2e import get

CONFIG = {
    "two_io": ([("a", "FP32", [-1, 4]), ("b", "INT64", [-1])],
               [("a_doubled", "FP32", [-1, 4]), ("b_plus_one", "INT64", [-1])]),
    "tiny_cnn": ([("image", "FP32", [1, 8, 8])], [("logits", "FP32", [10])]),
    "mixed_io": ([("features", "FP32", [-1, 3]), ("weights", "INT32", [3])],
                 [("projected", "FP32", [-1]), ("total", "INT64", [1])]),
}


def test_health(main_server):
    for path in ("/v2/health/live", "/v2/health/ready"):
        r = get(main_server.http, path)
        assert r.status == 200, f"{path}: {r}"


def test_server_metadata(main_server):
    r = get(main_server.http, "/v2")
    assert r.status == 200, r
    doc = r.json()
    assert isinstance(doc.get("name"), str) and doc["name"], doc
    assert isinstance(doc.get("version"), str) and doc["version"], doc
    assert isinstance(doc.get("extensions"), list), doc


def check_tensors(got, want, what):
    assert [t["name"] for t in got] == [n for n, _, _ in want], f"{what}: {got}"
    for t, (name, datatype, dims) in zip(got, want):
        assert t["datatype"] == datatype, f"{what} {name}: {t}"
        # With max_batch_size > 0 the batch dim comes first as -1 (Triton);
        # accept the shape with or without it.
        assert t["shape"] in (dims, [-1] + dims), f"{what} {name}: shape {t['shape']}, config {dims}"


@pytest.mark.parametrize("model", sorted(CONFIG))
@pytest.mark.parametrize("versioned", [False, True])
def test_model_metadata(main_server, model, versioned):
    path = f"/v2/models/{model}" + ("/versions/1" if versioned else "")
    r = get(main_server.http, path)
    assert r.status == 200, f"{path}: {r}"
    doc = r.json()
    assert doc["name"] == model, doc
    assert "1" in [str(v) for v in doc.get("versions", ["1"])], doc
    assert doc.get("platform"), f"{path}: no platform: {doc}"
    inputs, outputs = CONFIG[model]
    check_tensors(doc["inputs"], inputs, f"{path} inputs")
    check_tensors(doc["outputs"], outputs, f"{path} outputs")


@pytest.mark.parametrize("path", ["/v2/models/tiny_cnn/ready", "/v2/models/tiny_cnn/versions/1/ready"])
def test_model_ready(main_server, path):
    r = get(main_server.http, path)
    assert r.status == 200, f"{path}: {r}"


@pytest.mark.parametrize("path", ["/v2/models/nope", "/v2/models/nope/ready",
                                  "/v2/models/tiny_cnn/versions/3", "/v2/models/tiny_cnn/versions/3/ready"])
def test_unknown_model_or_version_metadata(main_server, path):
    r = get(main_server.http, path)
    assert r.status == 404, f"{path}: {r}"
    msg = r.error()
    assert ("nope" in msg) if "nope" in path else ("3" in msg), f"{path}: {msg}"


def test_unknown_route(main_server):
    r = get(main_server.http, "/v3/whatever")
    assert r.status == 404, r
    r.error()
