"""`inferd plan --profile-store`, the real binary on real TorchScript models:
the memory it measures for each model is checked against the bytes of the
model's parameters and buffers counted here with PyTorch; core_ms is positive
and larger for a model with 10,000x the arithmetic; the saved models file is
what was planned; a model that cannot load and an rps file that leaves a model
out are named, exit 2. No timing is asserted, only an order of magnitudes.
"""

import json
import os
import re
import subprocess

import pytest
import torch

from conftest import copy_model, write_model

MI = 2**20

MLP_CONFIG = """\
backend: torchscript
max_batch_size: 1
inputs:  [{name: x, datatype: FP32, shape: [1024]}]
outputs: [{name: y, datatype: FP32, shape: [1000]}]
"""

EMBED_CONFIG = """\
backend: torchscript
max_batch_size: 1
inputs:  [{name: ids, datatype: INT64, shape: [-1]}]
outputs: [{name: pooled, datatype: FP32, shape: [128]}]
"""


class Pool(torch.nn.Module):
    """Token ids -> the mean of their embeddings (a text model's first layer)."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(30000, 128)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embed(ids).mean(1)


@pytest.fixture(scope="module")
def profile_store(test_store, tmp_path_factory):
    torch.manual_seed(0)
    store = tmp_path_factory.mktemp("profile-store")
    copy_model(test_store, "tiny_cnn", store)
    # ~8.4M parameters (33.6 MB) plus a BatchNorm's buffers.
    mlp = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.BatchNorm1d(2048),
                              torch.nn.ReLU(), torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                              torch.nn.Linear(2048, 1000)).eval()
    write_model(store, "mlp", torch.jit.script(mlp), MLP_CONFIG)
    write_model(store, "embed", torch.jit.script(Pool().eval()), EMBED_CONFIG)
    return store


def weight_bytes(store, name):
    m = torch.jit.load(os.path.join(str(store), name, "1", "model.pt"))
    tensors = list(m.parameters()) + list(m.buffers())
    return sum(t.numel() * t.element_size() for t in tensors)


def profile(inferd_bin, store, tmp_path, rps_text, *args):
    rps = tmp_path / "rps.yaml"
    rps.write_text(rps_text)
    saved = tmp_path / "models.yaml"
    r = subprocess.run([inferd_bin, "plan", "--profile-store", str(store), "--rps", str(rps),
                        "--save-models", str(saved), "--profile-runs", "7",
                        "--node-cores", "16", "--node-memory", "64Gi", *args],
                       capture_output=True, text=True, timeout=300)
    return r, saved


def saved_models(path):
    """name -> (rps, core_ms, memory bytes, comment) from the saved models file."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    out = {}
    for line in path.read_text().splitlines():
        m = re.match(r"  - \{name: (\w+), rps: ([\d.]+), core_ms: ([\d.]+), memory: (\d+)(\w*)\}"
                     r"  # (.*)", line)
        if m:
            out[m[1]] = (float(m[2]), float(m[3]), int(m[4]) * units.get(m[5], 1), m[6])
    return out


def test_profile_measures_memory_and_core_ms_of_real_models(inferd_bin, profile_store, tmp_path):
    r, saved = profile(inferd_bin, profile_store, tmp_path,
                       "tiny_cnn: 100\nmlp: 20\nembed: 50\n", "--json")
    assert r.returncode == 0, r.stderr
    models = saved_models(saved)
    assert sorted(models) == ["embed", "mlp", "tiny_cnn"], saved.read_text()

    for name, (rps, core_ms, memory, comment) in models.items():
        weights = weight_bytes(profile_store, name)
        # One loaded copy holds at least its weights; the resident memory its
        # load and forwards add (frozen graph, working memory, allocator
        # slack) stays within 4x the weights plus 64 MiB, far below the whole
        # process (~400 MB resident with libtorch).
        assert weights <= memory <= 4 * weights + 64 * MI, (name, weights, memory, comment)
        assert core_ms > 0, (name, comment)
    assert weight_bytes(profile_store, "mlp") > 30 * MI
    assert "ids [1,1]" in models["embed"][3]  # a variable dim is 1 for a model with no tokenizer
    # ~8.4M multiply-adds against ~3,500: the order holds on any load, since
    # it is CPU time of the forward's own thread.
    assert models["tiny_cnn"][1] < models["mlp"][1]

    plan = json.loads(r.stdout)
    planned = {m["name"]: m for n in plan["nodes"] for m in n["models"]}
    for name, (rps, core_ms, memory, _) in models.items():
        assert planned[name]["rps"] == pytest.approx(rps)
        assert planned[name]["cores"] == pytest.approx(rps * core_ms / 1000, rel=1e-6)
        assert planned[name]["memory_bytes"] == memory
    for name in models:
        assert f"profiled {name}: core_ms" in r.stderr

    # The saved file plans the same without profiling.
    again = subprocess.run([inferd_bin, "plan", "--models", str(saved), "--node-cores", "16",
                            "--node-memory", "64Gi", "--json"], capture_output=True, text=True,
                           timeout=60)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["nodes"] == plan["nodes"]


def test_batched_core_ms_is_the_cost_per_item_at_the_calibrated_size(inferd_bin, profile_store,
                                                                     tmp_path):
    r, saved = profile(inferd_bin, profile_store, tmp_path, "tiny_cnn: 100\nmlp: 20\nembed: 50\n",
                       "--profile-batched")
    assert r.returncode == 0, r.stderr
    models = saved_models(saved)
    assert sorted(models) == ["embed", "mlp", "tiny_cnn"], saved.read_text()
    for name, (_, core_ms, _, comment) in models.items():
        m = re.search(r"batch (\d+) ([\d.]+) ms/item", comment)
        assert m, comment
        assert float(m[2]) == core_ms
        # tiny_cnn batches up to 8 (tools/models_test.py); the others have max_batch_size 1.
        assert int(m[1]) in ((1, 2, 4, 8) if name == "tiny_cnn" else (1,)), comment


def test_a_model_that_cannot_load_is_named_exit_2(inferd_bin, profile_store, tmp_path):
    store = tmp_path / "store"
    copy_model(profile_store, "tiny_cnn", store)
    copy_model(profile_store, "tiny_cnn", store, new_name="broken")
    (store / "broken" / "1" / "model.pt").write_bytes(b"not a TorchScript archive")
    r, saved = profile(inferd_bin, store, tmp_path, "tiny_cnn: 1\nbroken: 1\n")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "model 'broken'" in r.stderr and "model.pt" in r.stderr, r.stderr
    assert "profiled tiny_cnn" in r.stderr  # the others are still measured
    assert not saved.exists()


def test_rps_must_name_every_model_and_only_them(inferd_bin, profile_store, tmp_path):
    r, _ = profile(inferd_bin, profile_store, tmp_path, "tiny_cnn: 1\nmlp: 2\n")
    assert r.returncode == 2
    assert "no peak req/s for embed" in r.stderr, r.stderr
    r, _ = profile(inferd_bin, profile_store, tmp_path, "tiny_cnn: 1\nmlp: 2\nembed: 1\nbert: 3\n")
    assert r.returncode == 2
    assert "rps.yaml:4: model 'bert' is not in the model store" in r.stderr, r.stderr
    r = subprocess.run([inferd_bin, "plan", "--node-cores", "16", "--node-memory", "64Gi"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--models FILE or --profile-store DIR" in r.stderr, r.stderr
    r = subprocess.run([inferd_bin, "plan", "--models", "m.yaml", "--rps", "rps.yaml",
                        "--node-cores", "16", "--node-memory", "64Gi"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "--rps requires --profile-store" in r.stderr, r.stderr
