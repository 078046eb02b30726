"""Every bad input answers its status with a JSON {"error": ...} that names what
was wrong; the next good request succeeds and the server stays healthy."""

import json
import os

import pytest
import torch

from conftest import copy_model, stop_and_check, write_model
from inferd_e2e import (PLAIN_CONFIG, Plain, assert_same, get, infer_binary, infer_json,
                        parse_infer_response, post, wait_until)


def good_identity(server):
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3) / 3
    doc, out = parse_infer_response(infer_json(server.http, "identity_fp32", [("input", x)]))
    assert_same(out["output"], x)


def v2(name, datatype, shape, data):
    return {"name": name, "datatype": datatype, "shape": shape, "data": data}


A_OK = v2("a", "FP32", [1, 2, 4], [1.0] * 8)
B_OK = v2("b", "INT64", [1, 3], [1, 2, 3])

# (case id, model, body (object or bytes), extra headers, status, fragments the message must hold)
CASES = [
    ("malformed_json", "identity_fp32", b'{"inputs": [{"name": "input", ', {}, 400, ["JSON"]),
    ("not_an_object", "identity_fp32", b'[1, 2, 3]', {}, 400, ["object"]),
    ("no_inputs", "identity_fp32", {"outputs": []}, {}, 400, ["inputs"]),
    ("missing_input", "two_io", {"inputs": [A_OK]}, {}, 400, ["'b'", "missing"]),
    ("extra_input", "two_io", {"inputs": [A_OK, B_OK, v2("bogus", "FP32", [1, 1], [0.0])]}, {},
     400, ["'bogus'"]),
    ("wrong_datatype", "two_io", {"inputs": [A_OK, v2("b", "INT32", [1, 3], [1, 2, 3])]}, {},
     400, ["'b'", "INT64", "INT32"]),
    ("unknown_datatype", "identity_fp32", {"inputs": [v2("input", "FP128", [1, 1], [1.0])]}, {},
     400, ["FP128"]),
    ("wrong_fixed_dim", "two_io", {"inputs": [v2("a", "FP32", [1, 2, 3], [1.0] * 6), B_OK]}, {},
     400, ["'a'", "shape"]),
    ("wrong_rank", "tiny_cnn", {"inputs": [v2("image", "FP32", [8, 8], [0.0] * 64)]}, {},
     400, ["'image'", "shape"]),
    ("batch_too_large", "identity_fp32", {"inputs": [v2("input", "FP32", [9, 1], [0.0] * 9)]}, {},
     400, ["'input'", "8"]),
    ("batches_differ", "two_io", {"inputs": [A_OK, v2("b", "INT64", [2, 1], [1, 2])]}, {},
     400, ["batch"]),
    ("data_shorter_than_shape", "identity_fp32",
     {"inputs": [v2("input", "FP32", [1, 5], [1.0, 2.0, 3.0, 4.0])]}, {}, 400, ["'input'", "5"]),
    ("data_longer_than_shape", "identity_fp32",
     {"inputs": [v2("input", "FP32", [1, 2], [1.0, 2.0, 3.0])]}, {}, 400, ["'input'"]),
    ("data_wrong_type", "two_io",
     {"inputs": [A_OK, v2("b", "INT64", [1, 3], [1, "two", 3])]}, {}, 400, ["'b'"]),
    ("int_out_of_range", "all_dtypes", None, {}, 400, ["'in_int8'", "300"]),
    ("unknown_output", "two_io", {"inputs": [A_OK, B_OK], "outputs": [{"name": "nope"}]}, {},
     400, ["'nope'"]),
]


def all_dtypes_body():
    inputs = []
    for t in ["BOOL", "UINT8", "INT8", "INT16", "INT32", "INT64", "FP16", "BF16", "FP32", "FP64"]:
        data = [True] if t == "BOOL" else [1.0] if t.startswith(("FP", "BF")) else [1]
        inputs.append(v2(f"in_{t.lower()}", t, [1, 1], data))
    inputs[2]["data"] = [300]  # INT8
    return {"inputs": inputs}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_request(main_server, case):
    _, model, body, headers, status, fragments = case
    if body is None:
        body = all_dtypes_body()
    if isinstance(body, bytes):
        headers = {"Content-Type": "application/json", **headers}
    r = post(main_server.http, f"/v2/models/{model}/infer", body, headers=headers)
    assert r.status == status, f"sent {body!r}: expected {status}, got {r}"
    msg = r.error()
    for f in fragments:
        assert f in msg, f"message {msg!r} does not name {f!r}"
    good_identity(main_server)


def binary_body(inputs, blobs, header_length_delta=0):
    head = json.dumps({"inputs": inputs}).encode()
    return head + b"".join(blobs), {"Inference-Header-Content-Length":
                                    str(len(head) + header_length_delta)}


BINARY_CASES = [
    # binary_data_size 16 but only 12 bytes follow the header
    ("sizes_exceed_body",
     [{"name": "input", "datatype": "FP32", "shape": [1, 4], "parameters": {"binary_data_size": 16}}],
     [b"\0" * 12], 0, ["binary", "16", "12"]),
    # 8 bytes more than the inputs claim
    ("bytes_left_over",
     [{"name": "input", "datatype": "FP32", "shape": [1, 2], "parameters": {"binary_data_size": 8}}],
     [b"\0" * 16], 0, ["binary", "8", "16"]),
    # size consistent with the body but not with the shape
    ("size_not_shape",
     [{"name": "input", "datatype": "FP32", "shape": [1, 4], "parameters": {"binary_data_size": 12}}],
     [b"\0" * 12], 0, ["'input'", "12", "16"]),
    # header length past the body
    ("header_length_past_body",
     [{"name": "input", "datatype": "FP32", "shape": [1, 1], "parameters": {"binary_data_size": 4}}],
     [b"\0" * 4], 100, ["Inference-Header-Content-Length"]),
]


@pytest.mark.parametrize("case", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_bad_binary_request(main_server, case):
    _, inputs, blobs, delta, fragments = case
    body, headers = binary_body(inputs, blobs, delta)
    r = post(main_server.http, "/v2/models/identity_fp32/infer", body, headers=headers)
    assert r.status == 400, f"sent {body!r} with {headers}: expected 400, got {r}"
    msg = r.error()
    for f in fragments:
        assert f in msg, f"message {msg!r} does not name {f!r}"
    good_identity(main_server)


def test_binary_size_without_header(main_server):
    body = {"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 1],
                        "parameters": {"binary_data_size": 4}}]}
    r = post(main_server.http, "/v2/models/identity_fp32/infer", body)
    assert r.status == 400, r
    assert "Inference-Header-Content-Length" in r.error(), r


@pytest.mark.parametrize("path,fragment", [
    ("/v2/models/no_such_model/infer", "no_such_model"),
    ("/v2/models/identity_fp32/versions/7/infer", "7"),
])
def test_unknown_model_or_version(main_server, path, fragment):
    r = post(main_server.http, path, {"inputs": [v2("input", "FP32", [1, 1], [1.0])]})
    assert r.status == 404, f"{path}: {r}"
    assert fragment in r.error(), r
    good_identity(main_server)


def test_model_that_throws(main_server):
    x = torch.tensor([[1.0, -2.0, 3.0]])
    r = infer_json(main_server.http, "thrower", [("x", x)])
    assert r.status == 500, f"a negative input makes thrower raise: expected 500, got {r}"
    assert "negative input" in r.error(), r
    # The next good requests, to it and to others, succeed.
    doc, out = parse_infer_response(infer_json(main_server.http, "thrower", [("x", x.abs())]))
    assert_same(out["doubled"], x.abs() * 2)
    good_identity(main_server)
    r = post(main_server.http, "/predictions/thrower", [[-1.0]])
    assert r.status == 500 and "negative input" in r.error(), r
    r = post(main_server.http, "/predictions/thrower", [[1.0]])
    assert r.status == 200 and r.json() == [[2.0]], r


def test_errors_keep_the_connection(main_server):
    """A 400 or 404 on a keep-alive connection leaves it usable."""
    import http.client
    from inferd_e2e import call
    conn = http.client.HTTPConnection("127.0.0.1", main_server.http, timeout=30)
    try:
        for body, path, status in [(b'{"inputs": [', "/v2/models/identity_fp32/infer", 400),
                                   ({"inputs": []}, "/v2/models/nope/infer", 404),
                                   ({"inputs": [v2("input", "FP32", [1, 2], [1.5, 2.5])]},
                                    "/v2/models/identity_fp32/infer", 200)]:
            r = call(main_server.http, "POST", path, body, conn=conn,
                     headers={"Content-Type": "application/json"})
            assert r.status == status, f"{path}: {r}"
    finally:
        conn.close()


def test_wrong_method(main_server):
    r = get(main_server.http, "/v2/models/identity_fp32/infer")
    assert r.status in (404, 405), r
    r.error()


def test_still_healthy_after_errors(main_server):
    for path in ("/v2/health/live", "/v2/health/ready", "/ping"):
        assert get(main_server.http, path).status == 200, path
    good_identity(main_server)


# ----------------------------------------------------------- body limit: 413

@pytest.fixture(scope="module")
def small_body_server(server_factory, test_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("limit-store")
    copy_model(test_store, "identity_fp32", store)
    s = server_factory(store, "body-limit", args=["--body-limit", "4096"])
    yield s
    stop_and_check(s)


def test_body_too_large(small_body_server):
    s = small_body_server
    big = torch.zeros(1, 2000)  # about 8 KB of JSON
    r = infer_json(s.http, "identity_fp32", [("input", big)])
    assert r.status == 413, f"a {len(json.dumps(big.tolist()))}-byte body past --body-limit 4096: {r}"
    msg = r.error()
    assert "4096" in msg or "limit" in msg or "large" in msg, msg
    # Binary too.
    r = infer_binary(s.http, "identity_fp32", [("input", torch.zeros(1, 1500))])
    assert r.status == 413, r
    # Under the limit still works.
    small = torch.ones(1, 10)
    doc, out = parse_infer_response(infer_json(s.http, "identity_fp32", [("input", small)]))
    assert_same(out["output"], small)
    assert get(s.http, "/v2/health/ready").status == 200


# --------------------------------------------- models that fail to load

# model -> a fragment its error must show
BROKEN = {
    "bad_config": "max_batch_size",
    "no_version": "model.pt",
    "not_torchscript": "model.pt",
    "bad_datatype": "FP33",
}


@pytest.fixture(scope="module")
def broken_server(server_factory, test_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("broken-store")
    copy_model(test_store, "identity_fp32", store)
    module = torch.jit.script(Plain())
    write_model(store, "bad_config", module,
                PLAIN_CONFIG.replace("max_batch_size: 4", "max_batch_size: lots"))
    write_model(store, "bad_datatype", module, PLAIN_CONFIG.replace("datatype: FP32, shape: [-1]}]\noutputs",
                                                                    "datatype: FP33, shape: [-1]}]\noutputs"))
    os.makedirs(store / "no_version")
    (store / "no_version" / "config.yaml").write_text(PLAIN_CONFIG)
    os.makedirs(store / "not_torchscript" / "1")
    (store / "not_torchscript" / "config.yaml").write_text(PLAIN_CONFIG)
    (store / "not_torchscript" / "1" / "model.pt").write_bytes(b"this is not a TorchScript zip\n" * 10)
    s = server_factory(store, "broken", wait_ready=False)
    wait_until(lambda: get(s.http, "/v2/models/identity_fp32/ready").status == 200, 60,
               "identity_fp32 ready")

    def settled():
        for m in BROKEN:
            r = get(s.http, f"/v2/models/{m}/ready")
            if r.status == 200 or BROKEN[m] not in r.body.decode("utf-8", "replace"):
                return False
        return True

    wait_until(settled, 60, "every broken model reported with its error")
    yield s
    stop_and_check(s)


@pytest.mark.parametrize("model", sorted(BROKEN))
def test_failed_model_is_reported(broken_server, model):
    s = broken_server
    fragment = BROKEN[model]
    r = get(s.http, f"/v2/models/{model}/ready")
    assert r.status != 200, r
    assert fragment in r.body.decode(), f"ready of {model} should show its error ({fragment}): {r}"
    r = get(s.http, f"/v2/models/{model}")
    assert fragment in r.body.decode(), f"metadata of {model} should show its error ({fragment}): {r}"
    r = infer_json(s.http, model, [("x", torch.ones(1, 2))])
    assert r.status in (503, 404), f"infer on a model that failed to load: {r}"
    assert model in r.error() or fragment in r.error(), r
    # The others serve.
    good_identity(s)
    assert get(s.http, "/v2/health/live").status == 200
