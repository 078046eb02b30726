"""TorchServe's inference API: GET /ping, POST /predictions/{model}[/{version}]
with a nested-list body (single-input models) or an object of input name ->
nested list, compared with PyTorch."""

import numpy as np
import pytest
import torch

from inferd_e2e import assert_same, get, post


def answer_tensor(value, dtype):
    return torch.tensor(value, dtype=dtype)


def test_ping(main_server):
    r = get(main_server.http, "/ping")
    assert r.status == 200, r
    assert r.json().get("status") == "Healthy", r


@pytest.mark.parametrize("path", ["/predictions/identity_fp32", "/predictions/identity_fp32/1"])
def test_single_input_with_batch_dim(main_server, path):
    x = torch.from_numpy(np.random.default_rng(1).normal(size=(3, 5)).astype(np.float32))
    r = post(main_server.http, path, x.tolist())
    assert r.status == 200, r
    assert_same(answer_tensor(r.json(), torch.float32), x, what=path)


@pytest.mark.parametrize("key", ["data", "body", "input"])
def test_single_input_named_in_an_object(main_server, key):
    """TorchServe handlers read the only input from "data" or "body"; its own name works too."""
    x = [[0.25, -1.0, 8.0]]
    r = post(main_server.http, "/predictions/identity_fp32", {key: x})
    assert r.status == 200, r
    assert r.json() == x, r


def test_single_input_without_batch_dim(main_server, refs):
    """An item without the batch dim is answered without it."""
    img = torch.from_numpy(np.random.default_rng(2).random((1, 8, 8), dtype=np.float32))
    r = post(main_server.http, "/predictions/tiny_cnn", img.tolist())
    assert r.status == 200, r
    with torch.inference_mode():
        ref = refs("tiny_cnn")(img.unsqueeze(0))[0]
    assert_same(answer_tensor(r.json(), torch.float32), ref, what="tiny_cnn logits")


@pytest.mark.parametrize("path", ["/predictions/two_io", "/predictions/two_io/1"])
def test_object_of_inputs(main_server, refs, path):
    rng = np.random.default_rng(3)
    a = torch.from_numpy(rng.normal(size=(2, 3, 4)).astype(np.float32))
    b = torch.from_numpy(rng.integers(-1000, 1000, size=(2, 5)))
    r = post(main_server.http, path, {"a": a.tolist(), "b": b.tolist()})
    assert r.status == 200, r
    doc = r.json()
    assert isinstance(doc, dict) and sorted(doc) == ["a_doubled", "b_plus_one"], doc
    with torch.inference_mode():
        ra, rb = refs("two_io")(a, b)
    assert_same(answer_tensor(doc["a_doubled"], torch.float32), ra, what="a_doubled")
    assert_same(answer_tensor(doc["b_plus_one"], torch.int64), rb, what="b_plus_one")


def test_dict_outputs_and_no_batch_dim(main_server, refs):
    x = torch.tensor([1.5, -2.25, 3.0, 0.125])
    r = post(main_server.http, "/predictions/dict_out", {"x": x.tolist()})
    assert r.status == 200, r
    doc = r.json()
    with torch.inference_mode():
        ref = refs("dict_out")(x.unsqueeze(0))
    assert_same(answer_tensor(doc["negated"], torch.float32), ref["negated"][0], what="negated")
    assert_same(answer_tensor(doc["sum"], torch.float32), ref["sum"][0], what="sum")


def test_mixed_io_two_datatypes(main_server, refs):
    rng = np.random.default_rng(4)
    f = torch.from_numpy(rng.normal(size=(4, 2, 3)).astype(np.float32))
    w = torch.from_numpy(rng.integers(-9, 9, size=(4, 3), dtype=np.int32))
    r = post(main_server.http, "/predictions/mixed_io", {"features": f.tolist(), "weights": w.tolist()})
    assert r.status == 200, r
    doc = r.json()
    with torch.inference_mode():
        p, t = refs("mixed_io")(f, w)
    assert_same(answer_tensor(doc["projected"], torch.float32), p, what="projected")
    assert_same(answer_tensor(doc["total"], torch.int64), t, what="total")


def test_errors(main_server):
    r = post(main_server.http, "/predictions/two_io", {"a": [[[1, 2, 3, 4]]]})
    assert r.status == 400, r
    assert "'b'" in r.error(), r
    r = post(main_server.http, "/predictions/no_such_model", [[1.0]])
    assert r.status == 404, r
    assert "no_such_model" in r.error(), r
    r = post(main_server.http, "/predictions/identity_fp32/9", [[1.0]])
    assert r.status == 404, r
    assert "9" in r.error(), r
    r = post(main_server.http, "/predictions/identity_fp32", b"[[1.0, 2.0",
             headers={"Content-Type": "application/json"})
    assert r.status == 400, r
    assert "JSON" in r.error(), r
    # The server still answers.
    r = post(main_server.http, "/predictions/identity_fp32", [[1.0, 2.0]])
    assert r.status == 200 and r.json() == [[1.0, 2.0]], r
