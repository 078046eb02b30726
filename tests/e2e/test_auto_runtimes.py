"""`precision: auto` across runtimes (issue 37, part 2), the real binary: `inferd optimize`
writes the ONNX candidates beside the test store's text_classifier (DeBERTa-style,
SentencePiece, INT64 ids and mask of variable length), and the server, loading it with
`precision: auto`, measures torch fp32 / bf16 / int8 and ONNX Runtime fp32 / int8 under the
one accuracy guard and serves the fastest it kept (backend/runtime_choice.h).

  - text_auto: the report in GET /v2/models/{m}, /metrics and `inferd topology --calibrate`
    lists every candidate with its runtime, precision, file, ms per item, ms alone, error and
    verdict; one is chosen and its file is the one marked served.
  - Held-out texts of mixed lengths, 8 at a time (batches form and are cut by length), answer
    what PyTorch computes on each text alone, within the chosen candidate's tolerance.
  - text_tight: `precision_tolerance: 1e-4` refuses the int8 candidates; int8 is not served.
  - text_onnx: the optimized graph served as `backend: onnxruntime` with the same text
    pre/post-processing: the same inputs (variable lengths, int64 ids, masks) whichever
    runtime the choice lands on.
Skipped when the binary has no onnxruntime backend, as test_onnxruntime.py and
test_optimize.py are."""

import json
import os
import shutil
import subprocess

import pytest
import sentencepiece as spm
import torch

from conftest import copy_model, stop_and_check
from inferd_e2e import get, parse_metrics
from test_text import post_all

MODELS = ["text_auto", "text_tight", "text_onnx"]
CANDIDATES = {("torchscript", "fp32"), ("torchscript", "bf16"), ("torchscript", "int8"),
              ("onnxruntime", "fp32"), ("onnxruntime", "int8")}
FILES = {"torchscript": "model.pt", ("onnxruntime", "fp32"): "model.opt.onnx",
         ("onnxruntime", "int8"): "model.int8.onnx"}
MAX_LENGTH = 256
TEXTS = 48


@pytest.fixture(scope="module")
def store(inferd_bin, test_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("auto-runtimes-store")
    copy_model(test_store, "text_classifier", store, "text_auto", extra_config="precision: auto\n")
    copy_model(test_store, "text_classifier", store, "text_tight",
               extra_config="precision: auto\nprecision_tolerance: 1e-4\n")
    r = subprocess.run([inferd_bin, "optimize", "--model-store", str(store),
                        "--models", "text_auto,text_tight"],
                       capture_output=True, text=True, timeout=300)
    if "has no onnxruntime backend" in r.stderr:
        pytest.skip("ONNX Runtime not installed: the binary says: " + r.stderr.strip() +
                    " (scripts/setup_onnxruntime.sh)")
    assert r.returncode == 0, r.stdout + r.stderr
    for m in ("text_auto", "text_tight"):
        for f in ("model.onnx", "model.opt.onnx", "model.int8.onnx"):
            assert (store / m / "1" / f).is_file(), f"{m}: no {f}\n{r.stdout}{r.stderr}"
    # The same graph as a model of its own, served by the onnxruntime backend.
    copy_model(test_store, "text_classifier", store, "text_onnx")
    os.remove(store / "text_onnx" / "1" / "model.pt")
    shutil.copyfile(store / "text_auto" / "1" / "model.opt.onnx",
                    store / "text_onnx" / "1" / "model.onnx")
    config = (store / "text_onnx" / "config.yaml").read_text()
    (store / "text_onnx" / "config.yaml").write_text(
        config.replace("backend: torchscript", "backend: onnxruntime"))
    return store


@pytest.fixture(scope="module")
def server(server_factory, store):
    s = server_factory(store, "auto-runtimes")
    yield s
    stop_and_check(s)


@pytest.fixture(scope="module")
def held_out(store):
    with open(store / "text_auto" / "held_out.json") as f:
        data = json.load(f)
    texts = sorted(data["texts"], key=len)
    step = max(1, len(texts) // TEXTS)
    return texts[::step][:TEXTS], data["labels"]


def precision(server, model):
    r = get(server.http, f"/v2/models/{model}")
    assert r.status == 200, r.body
    doc = json.loads(r.body)
    assert doc["state"] == "READY", doc
    return doc, doc["precision"]


def by_candidate(p):
    return {(c["runtime"], c["precision"]): c for c in p["candidates"]}


def logits_alone(store, model, sp, texts):
    """PyTorch fp32 on each text alone: [n, classes] logits."""
    m = torch.jit.load(str(store / model / "1" / "model.pt")).eval()
    rows = []
    with torch.inference_mode():
        for text in texts:
            ids = [sp.bos_id()] + sp.encode(text)[:MAX_LENGTH - 2] + [sp.eos_id()]
            x = torch.tensor([ids])
            rows.append(m(x, torch.ones_like(x))[0])
    return torch.stack(rows)


def check_within(answers, logits, labels, tolerance):
    """The guard's measure, through the server: a logit may move by tolerance x the largest
    |logit|, so a probability by half that (softmax's Jacobian); top-1 must agree wherever
    PyTorch's top-2 margin is clear of that."""
    scale = logits.abs().max().item()
    bound = tolerance * scale / 2 + 1e-4
    probs = torch.softmax(logits, 1)
    for i, (answer, p, z) in enumerate(zip(answers, probs, logits)):
        top2 = torch.topk(z, 2).values
        if (top2[0] - top2[1]).item() > tolerance * scale:
            assert max(answer, key=answer.get) == labels[int(p.argmax())], (i, answer, p)
        for label, score in answer.items():
            assert abs(score - float(p[labels.index(label)])) <= bound, (i, label, score, p)


def test_the_report_lists_every_candidate_and_serves_one(server, store):
    doc, p = precision(server, "text_auto")
    assert p["requested"] == "auto", p
    shown = by_candidate(p)
    assert set(shown) == CANDIDATES, p
    for key, c in shown.items():
        for field in ("runtime", "precision", "file", "ms_per_item", "ms_alone", "ms_served",
                      "max_rel_error", "tolerance", "verdict"):
            assert field in c, (field, c)
        assert c["file"] == FILES.get(key, FILES["torchscript"]), c
        if c["built"] and not c["verdict"].startswith("refused"):
            assert c["ms_per_item"] > 0 and c["ms_alone"] > 0 and c["ms_served"] > 0, c
        elif not c["built"]:
            assert c["verdict"].startswith("not built"), c
    # The ONNX files exported and the int8 rewrite are within the default tolerances here.
    for key in (("onnxruntime", "fp32"), ("onnxruntime", "int8")):
        assert shown[key]["built"] and shown[key]["verdict"].startswith(("chosen", "accepted")), p
        assert 0 < shown[key]["max_rel_error"] <= shown[key]["tolerance"], shown[key]
    chosen = [k for k, c in shown.items() if c["verdict"].startswith("chosen")]
    assert chosen == [(p["runtime"], p["chosen"])], p
    assert p["file"] == shown[chosen[0]]["file"], p
    assert p["served_batch"] == 16 and 1 < p["timed_batch"] <= 8, p  # max_batch_size 16
    served_files = [f["file"] for f in doc["candidates"] if f["served"]]
    assert served_files == [p["file"]], doc["candidates"]

    series = {}
    for name, labels, value in parse_metrics(get(server.metrics, "/metrics").body.decode()):
        if name.startswith("inferd_model_precision") and labels.get("model") == "text_auto":
            series.setdefault(name, {})[(labels["runtime"], labels["precision"])] = value
    served = series["inferd_model_precision_served"]
    assert set(served) == CANDIDATES, series
    assert [k for k, v in served.items() if v == 1] == chosen, series
    for key in (("onnxruntime", "fp32"), ("onnxruntime", "int8")):
        assert series["inferd_model_precision_candidate_kept"][key] == 1, series
        assert series["inferd_model_precision_candidate_ms_alone"][key] == pytest.approx(
            shown[key]["ms_alone"], rel=1e-6), series
        assert series["inferd_model_precision_candidate_max_relative_error"][key] == \
            pytest.approx(shown[key]["max_rel_error"], rel=1e-6), series
    print(f"\ntext_auto serves {p['chosen']} on {p['runtime']} ({p['file']}): " +
          "; ".join(f"{r} {q} {c['ms_per_item']:.3f} ms/item, {c['ms_alone']:.3f} alone"
                    for (r, q), c in shown.items() if c["ms_per_item"] > 0))


def test_answers_equal_pytorch_within_the_guard(server, store, held_out):
    texts, labels = held_out
    sp = spm.SentencePieceProcessor(model_file=str(store / "text_auto" / "tokenizer.model"))
    logits = logits_alone(store, "text_auto", sp, texts)
    _, p = precision(server, "text_auto")
    chosen = by_candidate(p)[(p["runtime"], p["chosen"])]
    check_within(post_all(server.http, "text_auto", texts), logits, labels, chosen["tolerance"])
    # The onnxruntime backend with the text pipeline: variable lengths, int64 ids and masks.
    check_within(post_all(server.http, "text_onnx", texts), logits, labels, 1e-3)


def test_a_tight_tolerance_refuses_int8(server):
    _, p = precision(server, "text_tight")
    shown = by_candidate(p)
    assert set(shown) == CANDIDATES, p
    ort_int8 = shown[("onnxruntime", "int8")]
    assert ort_int8["tolerance"] == 1e-4, ort_int8
    assert ort_int8["verdict"].startswith("refused: max error"), ort_int8
    assert ort_int8["max_rel_error"] > 1e-4, ort_int8
    assert p["chosen"] != "int8", p
    # ONNX Runtime's fp32 differs from libtorch's by rounding only.
    ort_fp32 = shown[("onnxruntime", "fp32")]
    assert ort_fp32["max_rel_error"] < 1e-4 and not ort_fp32["verdict"].startswith("refused")


def test_topology_calibrate_prints_every_candidate(inferd_bin, store, server):
    del server  # started first: its loads fill the page cache, not this run's
    r = subprocess.run([inferd_bin, "topology", "--model-store", str(store), "--calibrate"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if "text_auto" in l)
    head = next(i for i in range(start, len(lines)) if "precision auto:" in lines[i])
    rows = lines[head + 1:head + 1 + len(CANDIDATES)]
    assert {tuple(l.split()[:2]) for l in rows} == CANDIDATES, "\n".join(lines[start:head + 6])
    assert sum("  chosen: " in l for l in rows) == 1, rows  # the verdict follows two spaces
