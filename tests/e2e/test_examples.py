"""The example store (make models).

Models with a `preprocess:` step take raw payloads (an image) on the server,
not tensors; to send the same tensors to the server and to PyTorch, the model
files are served from a tmp store whose configs drop preprocess/postprocess.
  - digits_cnn: the held-out accuracy through the server (v2 JSON tensors)
    equals PyTorch's on the same inputs, exactly; and through the real example
    store, PNG by PNG on /predictions, the top label equals PyTorch's argmax.
  - resnet18, mobilenet_v3_small: v2 binary, outputs within 1e-4 relative.
"""

import http.client
import json
import os

import numpy as np
import pytest
import torch

from conftest import load_reference, stop_and_check
from inferd_e2e import (assert_same, bytes_elements, call, infer_binary, infer_json,
                        parse_infer_response)

MODELS = ["digits_cnn", "resnet18", "mobilenet_v3_small"]


def tensor_config(text):
    """The config without its preprocess/postprocess lines (one-line flow maps)."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith(("preprocess:", "postprocess:")))


@pytest.fixture(scope="module")
def tensor_store(example_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("example-tensors")
    for m in MODELS:
        src = os.path.join(example_store, m)
        os.makedirs(store / m / "1")
        os.symlink(os.path.join(src, "1", "model.pt"), store / m / "1" / "model.pt")
        with open(os.path.join(src, "config.yaml")) as f:
            text = tensor_config(f.read())
        assert "preprocess" not in text.replace("# ", "")
        (store / m / "config.yaml").write_text(text)
    return store


@pytest.fixture(scope="module")
def tensor_server(server_factory, tensor_store):
    s = server_factory(tensor_store, "example-tensors")
    yield s
    stop_and_check(s)


@pytest.fixture(scope="module")
def digits_test_set(example_store):
    data = np.load(os.path.join(example_store, "digits_cnn", "test_set.npz"))
    images = torch.from_numpy(data["images"].astype(np.float32) / np.float32(255)).unsqueeze(1)
    labels = torch.from_numpy(data["labels"])
    with torch.inference_mode():
        logits = load_reference(example_store, "digits_cnn")(images)
    return images, labels, logits


def test_digits_accuracy_through_server(tensor_server, digits_test_set, example_store, out_dir):
    images, labels, py_logits = digits_test_set
    n = len(labels)
    server_logits = []
    for start in range(0, n, 32):
        r = infer_json(tensor_server.http, "digits_cnn", [("image", images[start:start + 32])])
        doc, out = parse_infer_response(r)
        server_logits.append(out["logits"])
    server_logits = torch.cat(server_logits)
    assert_same(server_logits, py_logits, rtol=1e-5, what="digits_cnn logits")
    server_pred, py_pred = server_logits.argmax(1), py_logits.argmax(1)
    assert torch.equal(server_pred, py_pred), \
        f"predictions differ at {(server_pred != py_pred).nonzero().flatten().tolist()}"
    server_acc = (server_pred == labels).double().mean().item()
    py_acc = (py_pred == labels).double().mean().item()
    assert server_acc == py_acc
    correct = int((server_pred == labels).sum())
    report = {"model": "digits_cnn", "test_size": n, "correct": correct,
              "accuracy_through_server": round(server_acc, 6), "accuracy_pytorch": round(py_acc, 6),
              "inputs": "test_set.npz images / 255 as v2 JSON FP32 [32, 1, 8, 8] tensors"}
    path = os.path.join(out_dir, "e2e_digits_accuracy.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"\ndigits_cnn held-out accuracy through the server: {server_acc:.4f} ({correct}/{n}); "
          f"PyTorch on the same inputs: {py_acc:.4f}; written to {path}")
    with open(os.path.join(example_store, "digits_cnn", "accuracy.json")) as f:
        recorded = json.load(f)["test_accuracy"]
    assert abs(server_acc - recorded) < 1e-4, f"accuracy.json (make_models) says {recorded}"


@pytest.fixture(scope="module")
def digits_raw_server(server_factory, example_store):
    s = server_factory(example_store, "example-digits", args=["--models", "digits_cnn"])
    yield s
    stop_and_check(s)


def test_digits_png_through_preprocess(digits_raw_server, digits_test_set, example_store, out_dir):
    """The PNGs of the held-out set as raw bodies: the server decodes, scales
    by 1/255 and answers the top labels; the top one is PyTorch's argmax."""
    _, labels, py_logits = digits_test_set
    # --models digits_cnn: the other models of the store are known but not loaded.
    r = call(digits_raw_server.http, "GET", "/v2/models/resnet18/ready")
    assert r.status == 503 and "resnet18" in r.error(), r
    with open(os.path.join(example_store, "digits_cnn", "test_set.json")) as f:
        files = json.load(f)["files"]
    assert len(files) == len(labels)
    conn = http.client.HTTPConnection("127.0.0.1", digits_raw_server.http, timeout=30)
    preds = []
    try:
        for name in files:
            with open(os.path.join(example_store, "digits_cnn", "samples", name), "rb") as f:
                png = f.read()
            r = call(digits_raw_server.http, "POST", "/predictions/digits_cnn", png,
                     headers={"Content-Type": "image/png"}, conn=conn)
            assert r.status == 200, f"{name}: {r}"
            scores = r.json()
            assert isinstance(scores, dict) and len(scores) == 3, f"{name}: top-3 expected: {scores}"
            preds.append(int(max(scores, key=scores.get)))
    finally:
        conn.close()
    preds = torch.tensor(preds)
    py_pred = py_logits.argmax(1)
    assert torch.equal(preds, py_pred), \
        f"PNG predictions differ at {(preds != py_pred).nonzero().flatten().tolist()}"
    acc = (preds == labels).double().mean().item()
    print(f"\ndigits_cnn held-out accuracy from PNGs through the server: {acc:.4f}")
    with open(os.path.join(out_dir, "e2e_digits_png_accuracy.json"), "w") as f:
        json.dump({"model": "digits_cnn", "test_size": len(files), "accuracy_from_png": round(acc, 6),
                   "inputs": "samples/*.png as raw bodies on POST /predictions/digits_cnn"}, f)


@pytest.mark.parametrize("binary_scores", [False, True])
def test_digits_png_batch_as_v2_bytes(digits_raw_server, digits_test_set, example_store,
                                      binary_scores):
    """Eight PNGs as one v2 BYTES input (binary extension): labels and scores
    [8, 3] come back, the first label of each item PyTorch's argmax."""
    _, labels, py_logits = digits_test_set
    with open(os.path.join(example_store, "digits_cnn", "test_set.json")) as f:
        files = json.load(f)["files"]
    for start in (0, 8, 440):
        pngs = []
        for name in files[start:start + 8]:
            with open(os.path.join(example_store, "digits_cnn", "samples", name), "rb") as f:
                pngs.append(f.read())
        blob = bytes_elements(pngs)
        head = {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [len(pngs)],
                            "parameters": {"binary_data_size": len(blob)}}],
                "outputs": [{"name": "labels"},
                            {"name": "scores", "parameters": {"binary_data": binary_scores}}]}
        header = json.dumps(head).encode()
        r = call(digits_raw_server.http, "POST", "/v2/models/digits_cnn/infer", header + blob,
                 headers={"Inference-Header-Content-Length": str(len(header)),
                          "Content-Type": "application/octet-stream"})
        doc, out = parse_infer_response(r)
        n = len(pngs)
        shapes = {o["name"]: o["shape"] for o in doc["outputs"]}
        assert shapes == {"labels": [n, 3], "scores": [n, 3]}, doc["outputs"]
        top = [int(out["labels"][i * 3]) for i in range(n)]
        want = py_logits[start:start + n].argmax(1).tolist()
        assert top == want, f"items {start}..{start + n - 1}: top labels {top}, PyTorch {want}"
        scores = out["scores"]
        assert bool((scores[:, :-1] >= scores[:, 1:]).all()), f"scores not descending: {scores}"
        # topk softmaxes the logits first: the scores are PyTorch's softmax, top 3.
        ref = torch.softmax(py_logits[start:start + n], 1).topk(3, 1).values
        assert_same(scores, ref, rtol=1e-5, what="top-3 scores")


@pytest.mark.parametrize("model", ["resnet18", "mobilenet_v3_small"])
def test_imagenet_models_binary(tensor_server, example_store, model):
    rng = np.random.default_rng(18)
    x = torch.from_numpy(rng.normal(size=(1, 3, 224, 224)).astype(np.float32))
    with torch.inference_mode():
        ref = load_reference(example_store, model)(x)
    r = infer_binary(tensor_server.http, model, [("input", x)], binary_outputs=["logits"])
    doc, out = parse_infer_response(r)
    assert doc["outputs"][0]["name"] == "logits"
    assert_same(out["logits"], ref, rtol=1e-4, what=f"{model} logits")
    err = (out["logits"] - ref).abs().max().item() / ref.abs().max().item()
    print(f"\n{model}: max abs error / max abs value = {err:.2e}")
