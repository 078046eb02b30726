"""`inferd optimize` (issue 37, part 1), the real binary on a small store written here: a
traced MLP and a traced tiny CNN (both export; their products get int8 weights, the CNN's
convolution stays fp32) and a scripted nn.TransformerEncoder (the exporter refuses it: it
keeps its TorchScript, with the reason in the table). Checked: the candidate files beside
model.pt and the report, the printed table (results, errors against model.pt, top-1), that
model.pt is never changed, that a second run makes and writes nothing (same bytes, same
mtimes), that a store it cannot write is refused with exit code 3 before anything is
written, and that the server still serves the store and lists each version's files in
`GET /v2/models/{m}` (`candidates`). Skipped when the binary has no onnxruntime backend
(scripts/setup.sh installs ONNX Runtime), as test_onnxruntime.py is."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
import torch

from conftest import stop_and_check, write_model
from inferd_e2e import assert_same, get, infer_json, parse_infer_response

CANDIDATES = ["model.onnx", "model.opt.onnx", "model.int8.onnx"]
EXPORTED = ["mlp", "cnn"]
MODELS = EXPORTED + ["encoder"]

MLP_CONFIG = """backend: torchscript
max_batch_size: 4
inputs:  [{name: features, datatype: FP32, shape: [16]}]
outputs: [{name: logits, datatype: FP32, shape: [10]}]
"""
CNN_CONFIG = """backend: torchscript
max_batch_size: 4
inputs:  [{name: image, datatype: FP32, shape: [1, 8, 8]}]
outputs: [{name: logits, datatype: FP32, shape: [10]}]
"""
ENCODER_CONFIG = """backend: torchscript
max_batch_size: 4
inputs:  [{name: ids, datatype: INT64, shape: [-1]}]
outputs: [{name: scores, datatype: FP32, shape: [4]}]
"""


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(50, 16)
        layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 1)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.embed(ids)).mean(1))


def write_store(store):
    torch.manual_seed(37)
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    write_model(store, "mlp", torch.jit.trace(mlp.eval(), torch.rand(1, 16)), MLP_CONFIG)
    cnn = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(4 * 6 * 6, 10))
    write_model(store, "cnn", torch.jit.trace(cnn.eval(), torch.rand(1, 1, 8, 8)), CNN_CONFIG)
    write_model(store, "encoder", torch.jit.script(Encoder().eval()), ENCODER_CONFIG)


def optimize(inferd_bin, store, *args, prefix=()):
    return subprocess.run([*prefix, inferd_bin, "optimize", "--model-store", str(store), *args],
                          capture_output=True, text=True, timeout=300)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def snapshot(store):
    """Every file of every version folder: (size, mtime_ns, digest)."""
    files = {}
    for m in MODELS:
        d = os.path.join(store, m, "1")
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            st = os.stat(p)
            files[f"{m}/{name}"] = (st.st_size, st.st_mtime_ns, sha256(p))
    return files


def table_rows(stdout, model):
    """The printed rows of one model: {candidate: line}."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(f"model {model} version 1:"))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("  "):
            break
        rows[line.split()[0]] = line
    return rows


@pytest.fixture(scope="module")
def optimized(inferd_bin, tmp_path_factory):
    store = tmp_path_factory.mktemp("optimize-store")
    write_store(store)
    before = {m: sha256(store / m / "1" / "model.pt") for m in MODELS}
    r = optimize(inferd_bin, store)
    if "has no onnxruntime backend" in r.stderr:
        pytest.skip("ONNX Runtime not installed: the binary says: " + r.stderr.strip() +
                    " (scripts/setup_onnxruntime.sh)")
    assert r.returncode == 0, r.stdout + r.stderr
    return store, before, r


def test_candidates_are_written_beside_model_pt(optimized):
    store, before, r = optimized
    for m in EXPORTED:
        for name in CANDIDATES + ["optimize.json"]:
            assert (store / m / "1" / name).is_file(), f"{m}: no {name}\n{r.stdout}{r.stderr}"
    # The exporter refuses the scripted encoder: it keeps its TorchScript, and its report says why.
    assert sorted(os.listdir(store / "encoder" / "1")) == ["model.pt", "optimize.json"]
    for m in MODELS:
        assert sha256(store / m / "1" / "model.pt") == before[m], f"{m}: model.pt changed"
        leftovers = [n for n in os.listdir(store / m / "1") if n.startswith(".")]
        assert not leftovers, f"{m}: temporary files left: {leftovers}"


def test_the_table_and_the_report(optimized):
    store, _, r = optimized
    for m in EXPORTED:
        rows = table_rows(r.stdout, m)
        assert set(rows) == {"torchscript", "onnx", "onnx_optimized", "onnx_int8"}, r.stdout
        assert "model.pt" in rows["torchscript"] and "the reference" in rows["torchscript"]
        assert "exported (opset 17)" in rows["onnx"], rows["onnx"]
        assert "extended fusions" in rows["onnx_optimized"], rows["onnx_optimized"]
        assert "int8: " in rows["onnx_int8"] and "(per-column)" in rows["onnx_int8"], rows["onnx_int8"]
        # 4 drawn samples alone, each a [1, 10] classifier output: top-1 counted on all.
        for c in ("onnx", "onnx_optimized"):
            assert " 4/4 " in rows[c], rows[c]
        report = json.loads((store / m / "1" / "optimize.json").read_text())
        assert report["samples"] == 4 and report["sample_source"] == "drawn for the declared shapes"
        by = {c["candidate"]: c for c in report["candidates"]}
        assert by["torchscript"]["compared"] and by["torchscript"]["present"]
        for c in ("onnx", "onnx_optimized"):
            assert by[c]["compared"], by[c]
            assert by[c]["max_rel_error"] < 1e-4, by[c]
            assert by[c]["top1_agreed"] == by[c]["top1_checked"] == 4, by[c]
        # int8 weights and activations: about 1% of the largest logit, never 10%.
        assert by["onnx_int8"]["compared"], by["onnx_int8"]
        assert 0 < by["onnx_int8"]["max_rel_error"] < 0.1, by["onnx_int8"]
    cnn = json.loads((store / "cnn" / "1" / "optimize.json").read_text())
    int8 = next(c for c in cnn["candidates"] if c["candidate"] == "onnx_int8")
    assert int8["result"] == "int8: 1 MatMul/Gemm (per-column); fp32: 1 Conv", int8

    rows = table_rows(r.stdout, "encoder")
    assert "not exported: " in rows["onnx"] and "is not supported" in rows["onnx"], rows["onnx"]
    assert "not made: no ONNX export" in rows["onnx_optimized"], rows["onnx_optimized"]
    assert "not made: no ONNX export" in rows["onnx_int8"], rows["onnx_int8"]
    report = json.loads((store / "encoder" / "1" / "optimize.json").read_text())
    by = {c["candidate"]: c for c in report["candidates"]}
    assert by["torchscript"]["compared"] and not by["onnx"]["present"]


def test_a_second_run_makes_and_writes_nothing(inferd_bin, optimized):
    store, _, first = optimized
    files = snapshot(store)
    r = optimize(inferd_bin, store)
    assert r.returncode == 0, r.stdout + r.stderr
    for m in MODELS:
        assert f"model {m} version 1:" in r.stdout and "up to date" in r.stdout, r.stdout
    assert "exporting" not in r.stderr, r.stderr
    assert snapshot(store) == files
    # The same table, read back from the reports.
    for m in MODELS:
        assert table_rows(r.stdout, m) == table_rows(first.stdout, m), r.stdout


def test_a_store_it_cannot_write_is_refused(inferd_bin, tmp_path):
    # Root writes through any mode bits: the refusal is checked as nobody (setpriv).
    prefix = ()
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: no user to whom the store is read-only")
        prefix = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    store = tempfile.mkdtemp(prefix="inferd-readonly-store-")
    try:
        os.chmod(store, 0o755)
        torch.manual_seed(1)
        mlp = torch.nn.Sequential(torch.nn.Linear(16, 10))
        write_model(store, "mlp", torch.jit.trace(mlp.eval(), torch.rand(1, 16)), MLP_CONFIG)
        for d in (os.path.join(store, "mlp", "1"), os.path.join(store, "mlp"), store):
            os.chmod(d, 0o555)
        r = optimize(inferd_bin, store, prefix=prefix)
        assert r.returncode == 3, r.stdout + r.stderr
        assert "cannot write into" in r.stderr and os.path.join("mlp", "1") in r.stderr, r.stderr
        assert "nothing was written" in r.stderr, r.stderr
        assert sorted(os.listdir(os.path.join(store, "mlp", "1"))) == ["model.pt"]
    finally:
        for d in (store, os.path.join(store, "mlp"), os.path.join(store, "mlp", "1")):
            os.chmod(d, 0o755)
        shutil.rmtree(store)


def test_the_server_serves_the_store_and_lists_the_candidates(server_factory, optimized):
    store, _, _ = optimized
    s = server_factory(store, "optimized")
    try:
        x = torch.from_numpy(np.random.default_rng(37).normal(size=(2, 16)).astype(np.float32))
        resp = infer_json(s.http, "mlp", [("features", x)])
        assert resp.status == 200, resp.body
        _, got = parse_infer_response(resp)
        with torch.no_grad():
            ref = torch.jit.load(str(store / "mlp" / "1" / "model.pt"))(x)
        assert_same(got["logits"], ref)
        meta = json.loads(get(s.http, "/v2/models/mlp").body)
        files = {c["file"]: c for c in meta["candidates"]}
        assert set(files) == {"model.pt", "model.onnx", "model.opt.onnx", "model.int8.onnx"}, meta
        assert files["model.pt"]["served"] and files["model.pt"]["kind"] == "torchscript"
        assert [files[f]["kind"] for f in CANDIDATES] == ["onnx", "onnx_optimized", "onnx_int8"]
        assert not any(files[f]["served"] for f in CANDIDATES)
        assert files["model.onnx"]["bytes"] == (store / "mlp" / "1" / "model.onnx").stat().st_size
        meta = json.loads(get(s.http, "/v2/models/encoder").body)
        assert [c["file"] for c in meta["candidates"]] == ["model.pt"], meta
    finally:
        stop_and_check(s)


def test_a_users_own_model_onnx_is_never_overwritten(inferd_bin, tmp_path):
    """A model.onnx that inferd optimize did not write (no optimize.json of ours lists it) is
    the user's: kept byte for byte, on the first run and the next; the candidates are made
    from a new export (kept under a temporary name, removed after) and the table says so."""
    torch.manual_seed(2)
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    write_model(tmp_path, "mlp", torch.jit.trace(mlp.eval(), torch.rand(1, 16)), MLP_CONFIG)
    own = tmp_path / "mlp" / "1" / "model.onnx"
    own.write_bytes(b"the user's own ONNX file, not a graph inferd wrote")
    for run in (1, 2):
        r = optimize(inferd_bin, tmp_path)
        if "has no onnxruntime backend" in r.stderr:
            pytest.skip("ONNX Runtime not installed: " + r.stderr.strip())
        assert r.returncode == 0, r.stdout + r.stderr
        assert own.read_bytes() == b"the user's own ONNX file, not a graph inferd wrote", \
            f"run {run} changed the user's model.onnx"
        files = sorted(os.listdir(tmp_path / "mlp" / "1"))
        assert files == ["model.int8.onnx", "model.onnx", "model.opt.onnx", "model.pt",
                         "optimize.json"], f"run {run}: {files}"
    report = json.loads((tmp_path / "mlp" / "1" / "optimize.json").read_text())
    onnx = next(c for c in report["candidates"] if c["candidate"] == "onnx")
    assert not onnx["present"] and "is kept" in onnx["result"], onnx
