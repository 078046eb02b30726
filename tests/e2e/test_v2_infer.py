"""KServe v2 infer, JSON and binary tensors, for every test model: random
inputs (several batch sizes, variable dims), outputs compared with the same
TorchScript file run by PyTorch here (FP32 within 1e-5 relative, integers and
bools exact)."""

import http.client
import json
import zlib

import numpy as np
import pytest
import torch

from inferd_e2e import (FLOAT_TYPES, assert_same, binary_request, call, infer_binary,
                        infer_json, parse_infer_response, post, random_tensor)

DTYPES = ["BOOL", "UINT8", "INT8", "INT16", "INT32", "INT64", "FP16", "BF16", "FP32", "FP64"]
OUTPUT_NAMES = {
    "identity_fp32": ["output"],
    "two_io": ["a_doubled", "b_plus_one"],
    "dict_out": ["negated", "sum"],
    "all_dtypes": [f"out_{t.lower()}" for t in DTYPES],
    "thrower": ["doubled"],
    "slow": ["checksum"],
    "tiny_cnn": ["logits"],
    "mixed_io": ["projected", "total"],
}


def make_inputs(model, batch, rng):
    """[(name, tensor)] with the batch dim; variable dims drawn at random."""
    var = int(rng.integers(1, 12))
    if model == "identity_fp32":
        return [("input", random_tensor(rng, "FP32", (batch, var)))]
    if model == "two_io":
        return [("a", random_tensor(rng, "FP32", (batch, var, 4))),
                ("b", random_tensor(rng, "INT64", (batch, int(rng.integers(1, 9)))))]
    if model == "dict_out":
        return [("x", random_tensor(rng, "FP32", (batch, 4)))]
    if model == "all_dtypes":
        return [(f"in_{t.lower()}", random_tensor(rng, t, (batch, var))) for t in DTYPES]
    if model == "thrower":
        return [("x", random_tensor(rng, "FP32", (batch, var)).abs())]
    if model == "slow":
        return [("iterations", torch.from_numpy(rng.integers(1, 6, size=(batch, 1))))]
    if model == "tiny_cnn":
        return [("image", torch.from_numpy(rng.random((batch, 1, 8, 8), dtype=np.float32)))]
    if model == "mixed_io":
        return [("features", random_tensor(rng, "FP32", (batch, var, 3))),
                ("weights", torch.from_numpy(rng.integers(-50, 50, size=(batch, 3),
                                                          dtype=np.int32)))]
    raise KeyError(model)


def reference(refs, model, inputs):
    """{output name: tensor} from PyTorch for the same inputs."""
    with torch.inference_mode():
        out = refs(model)(*[t for _, t in inputs])
    names = OUTPUT_NAMES[model]
    if isinstance(out, dict):
        return {n: out[n] for n in names}
    if isinstance(out, (tuple, list)):
        assert len(out) == len(names)
        return dict(zip(names, out))
    return {names[0]: out}


def check_outputs(doc, outputs, expected, model, rtol=1e-5):
    assert doc["model_name"] == model
    assert str(doc["model_version"]) == "1"
    assert sorted(outputs) == sorted(expected), f"outputs {sorted(outputs)}, expected {sorted(expected)}"
    for name, ref in expected.items():
        assert_same(outputs[name], ref, rtol=rtol, what=f"{model}: output '{name}'")


MODELS = list(OUTPUT_NAMES)


@pytest.mark.parametrize("batch", [1, 3, 6])
@pytest.mark.parametrize("model", MODELS)
def test_json_matches_pytorch(main_server, refs, model, batch):
    rng = np.random.default_rng(zlib.crc32(f"{model}/{batch}/json".encode()))
    for _ in range(2):
        inputs = make_inputs(model, batch, rng)
        resp = infer_json(main_server.http, model, inputs)
        assert resp.status == 200, f"{model}: {resp}"
        assert "inference-header-content-length" not in resp.headers
        doc, outputs = parse_infer_response(resp)
        check_outputs(doc, outputs, reference(refs, model, inputs), model)


@pytest.mark.parametrize("batch", [1, 4, 6])
@pytest.mark.parametrize("model", MODELS)
def test_binary_matches_pytorch(main_server, refs, model, batch):
    rng = np.random.default_rng(zlib.crc32(f"{model}/{batch}/binary".encode()))
    inputs = make_inputs(model, batch, rng)
    expected = reference(refs, model, inputs)
    # Every output binary.
    resp = infer_binary(main_server.http, model, inputs, binary_data_output=True)
    assert "inference-header-content-length" in resp.headers, f"{model}: no binary outputs: {resp}"
    doc, outputs = parse_infer_response(resp)
    assert all("data" not in o for o in doc["outputs"]), "binary_data_output: every output binary"
    check_outputs(doc, outputs, expected, model)
    # Binary inputs, outputs as JSON (no output asks for binary).
    resp = infer_binary(main_server.http, model, inputs)
    doc, outputs = parse_infer_response(resp)
    check_outputs(doc, outputs, expected, model)
    # The first output binary, the others JSON, each named.
    names = OUTPUT_NAMES[model]
    body, headers = binary_request(inputs, binary_outputs=[names[0]])
    split = int(headers["Inference-Header-Content-Length"])
    head = json.loads(body[:split])
    head["outputs"] += [{"name": n} for n in names[1:]]
    new_head = json.dumps(head).encode()
    headers["Inference-Header-Content-Length"] = str(len(new_head))
    resp = post(main_server.http, f"/v2/models/{model}/infer", new_head + body[split:],
                headers=headers)
    doc, outputs = parse_infer_response(resp)
    kinds = {o["name"]: "data" in o for o in doc["outputs"]}
    assert kinds[names[0]] is False, f"{names[0]} was asked binary: {doc}"
    assert all(kinds[n] for n in names[1:]), f"the others were asked as JSON: {doc}"
    check_outputs(doc, outputs, expected, model)


def test_mixed_json_and_binary_inputs(main_server, refs):
    rng = np.random.default_rng(7)
    inputs = make_inputs("two_io", 2, rng)
    body, headers = binary_request(inputs, binary_outputs=["b_plus_one"], json_inputs=("b",))
    resp = post(main_server.http, "/v2/models/two_io/infer", body, headers=headers)
    doc, outputs = parse_infer_response(resp)
    assert [o["name"] for o in doc["outputs"]] == ["b_plus_one"]
    assert_same(outputs["b_plus_one"], reference(refs, "two_io", inputs)["b_plus_one"])


@pytest.mark.parametrize("binary", [False, True])
def test_all_datatypes(main_server, refs, binary):
    """Every datatype through all_dtypes, FP16 and BF16 included, exact."""
    rng = np.random.default_rng(11 + binary)
    for batch, length in [(1, 1), (2, 7), (5, 33)]:
        inputs = [(f"in_{t.lower()}", random_tensor(rng, t, (batch, length))) for t in DTYPES]
        if binary:
            resp = infer_binary(main_server.http, "all_dtypes", inputs, binary_data_output=True)
        else:
            resp = infer_json(main_server.http, "all_dtypes", inputs)
        doc, outputs = parse_infer_response(resp)
        by_name = {o["name"]: o for o in doc["outputs"]}
        expected = reference(refs, "all_dtypes", inputs)
        for t in DTYPES:
            name = f"out_{t.lower()}"
            assert by_name[name]["datatype"] == t, f"{name}: datatype {by_name[name]['datatype']}"
            assert by_name[name]["shape"] == [batch, length]
            # Floats too: x + 1 in the same dtype is deterministic.
            assert_same(outputs[name], expected[name], rtol=0.0, what=name)
        if not binary:
            for t in DTYPES:
                data = by_name[f"out_{t.lower()}"]["data"]
                if t == "BOOL":
                    assert all(isinstance(v, bool) for v in data), "BOOL as JSON true/false"
                elif t not in FLOAT_TYPES:
                    assert all(isinstance(v, int) for v in data), f"{t} as JSON integers"


def test_nested_json_data_is_accepted(main_server, refs):
    """Triton accepts data nested along the shape as well as flat."""
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 7
    req = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [3, 4], "data": x.tolist()}]}
    resp = post(main_server.http, "/v2/models/dict_out/infer", req)
    doc, outputs = parse_infer_response(resp)
    check_outputs(doc, outputs, reference(refs, "dict_out", [("x", x)]), "dict_out")


def test_requested_outputs_and_id(main_server, refs):
    rng = np.random.default_rng(3)
    inputs = make_inputs("two_io", 2, rng)
    resp = infer_json(main_server.http, "two_io", inputs, outputs=["b_plus_one"], id="req-42")
    doc, outputs = parse_infer_response(resp)
    assert doc.get("id") == "req-42"
    assert [o["name"] for o in doc["outputs"]] == ["b_plus_one"]
    assert_same(outputs["b_plus_one"], reference(refs, "two_io", inputs)["b_plus_one"])


def test_explicit_version_and_keep_alive(main_server, refs):
    """Several requests on one connection, with /versions/1 in the path."""
    conn = http.client.HTTPConnection("127.0.0.1", main_server.http, timeout=30)
    rng = np.random.default_rng(5)
    try:
        for i in range(5):
            inputs = make_inputs("tiny_cnn", 1 + i, rng)
            resp = call(main_server.http, "POST", "/v2/models/tiny_cnn/versions/1/infer",
                        body={"inputs": [{"name": "image", "datatype": "FP32",
                                          "shape": list(inputs[0][1].shape),
                                          "data": inputs[0][1].flatten().tolist()}]},
                        conn=conn)
            doc, outputs = parse_infer_response(resp)
            check_outputs(doc, outputs, reference(refs, "tiny_cnn", inputs), "tiny_cnn")
    finally:
        conn.close()
