"""Transformer text models through the real server (tools/make_text_models.py, in the test store).

  - text_classifier (DeBERTa-style, SentencePiece, trained on Debian package descriptions): every
    held-out description, sent concurrently so that batches of mixed lengths form, answers the
    same top-1 section as PyTorch on the same text with the probabilities within 1e-4; the
    accuracy through the server is written to e2e_text_accuracy.json.
  - bert_tiny (BERT-style, nn.TransformerEncoder, WordPiece): the same on 48 texts, tokenized for
    PyTorch by tools/wordpiece_reference.py.
  - The token counters: inferd_real_tokens_total equals the sum of every text's token count, and
    the model's calibration cut its batches by length (the fitted cost is in the log).
"""

import json
import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import sentencepiece as spm
import torch

from conftest import SOURCE_DIR, stop_and_check
from inferd_e2e import call, metric_sum_model, parse_metrics

sys.path.insert(0, os.path.join(SOURCE_DIR, "tools"))
import wordpiece_reference  # noqa: E402

MODELS = ["text_classifier", "bert_tiny"]
MAX_LENGTH = 256


@pytest.fixture(scope="module")
def text_store(test_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("text-store")
    for m in MODELS:
        shutil.copytree(os.path.join(test_store, m), store / m)
    return store


@pytest.fixture(scope="module")
def text_server(server_factory, text_store):
    s = server_factory(text_store, "text")
    yield s
    stop_and_check(s)


@pytest.fixture(scope="module")
def held_out(text_store):
    with open(os.path.join(text_store, "text_classifier", "held_out.json")) as f:
        return json.load(f)


def spm_ids(sp, text):
    ids = sp.encode(text)[:MAX_LENGTH - 2]
    return [sp.bos_id()] + ids + [sp.eos_id()]


def wordpiece_ids(vocab, text):
    pieces = wordpiece_reference.wordpiece(wordpiece_reference.basic_tokenize(text), vocab)
    ids = [vocab[p] for p in pieces][:MAX_LENGTH - 2]
    return [vocab["[CLS]"]] + ids + [vocab["[SEP]"]]


def reference(store, model, token_lists):
    """PyTorch's probabilities for each text, alone (no padding), [n, classes]."""
    m = torch.jit.load(os.path.join(store, model, "1", "model.pt")).eval()
    rows = []
    with torch.inference_mode():
        for ids in token_lists:
            x = torch.tensor([ids])
            rows.append(torch.softmax(m(x, torch.ones_like(x))[0], 0))
    return torch.stack(rows)


def post_all(port, model, texts):
    def one(text):
        r = call(port, "POST", f"/predictions/{model}", text.encode("utf-8"),
                 headers={"Content-Type": "text/plain; charset=utf-8"})
        assert r.status == 200, f"{text[:60]!r}: {r}"
        return r.json()
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(one, texts))


def check_answers(answers, probs, labels, texts):
    for i, (answer, p) in enumerate(zip(answers, probs)):
        top = torch.topk(p, min(5, p.numel()))
        expected = {labels[int(k)]: float(v) for v, k in zip(top.values, top.indices)}
        assert max(answer, key=answer.get) == labels[int(p.argmax())], \
            f"text {i} ({texts[i][:60]!r}): top-1 {answer} != PyTorch's {expected}"
        for label, score in answer.items():
            assert abs(score - float(p[labels.index(label)])) <= 1e-4, \
                f"text {i}: {label} {score} != PyTorch's {float(p[labels.index(label)])}"


def test_classifier_answers_equal_pytorch_on_every_held_out_text(text_server, text_store,
                                                                 held_out, out_dir):
    texts, answers_true, labels = held_out["texts"], held_out["answers"], held_out["labels"]
    assert len(texts) >= 100
    sp = spm.SentencePieceProcessor(
        model_file=os.path.join(text_store, "text_classifier", "tokenizer.model"))
    token_lists = [spm_ids(sp, t) for t in texts]
    lengths = sorted(len(t) for t in token_lists)
    # Short and long texts in one set. The corpus is this machine's dpkg status, so its shortest
    # text depends on what is installed: under 16 tokens here, 16-34 on bare Debian 12 machines
    # with setup.sh's packages.
    assert lengths[-1] > 100 and lengths[-1] >= 4 * lengths[0], \
        f"the held-out lengths do not mix: {lengths}"
    probs = reference(text_store, "text_classifier", token_lists)
    answers = post_all(text_server.http, "text_classifier", texts)
    check_answers(answers, probs, labels, texts)
    server_top = [labels.index(max(a, key=a.get)) for a in answers]
    accuracy = sum(p == t for p, t in zip(server_top, answers_true)) / len(texts)
    assert accuracy == pytest.approx(held_out["accuracy"], abs=1e-9)
    with open(os.path.join(out_dir, "e2e_text_accuracy.json"), "w") as f:
        json.dump({"model": "text_classifier", "texts": len(texts), "accuracy": round(accuracy, 6),
                   "majority_class": round(held_out["majority"], 6), "labels": labels}, f)
    print(f"\ntext_classifier: held-out accuracy through the server {accuracy:.4f} "
          f"({len(labels)} sections, majority {held_out['majority']:.4f})")

    samples = parse_metrics(call(text_server.metrics, "GET", "/metrics").body.decode())
    real = metric_sum_model(samples, "inferd_real_tokens_total", "text_classifier")
    padded = metric_sum_model(samples, "inferd_padded_tokens_total", "text_classifier")
    assert real == sum(len(t) for t in token_lists)
    assert padded >= 0
    print(f"text_classifier: padding waste {padded / real:.3f} (padded / real tokens)")


def test_bert_style_answers_equal_pytorch(text_server, text_store, held_out):
    texts = held_out["texts"][:48]
    vocab = wordpiece_reference.load_vocab(os.path.join(text_store, "bert_tiny", "vocab.txt"))
    with open(os.path.join(text_store, "bert_tiny", "labels.txt")) as f:
        labels = f.read().split()
    probs = reference(text_store, "bert_tiny", [wordpiece_ids(vocab, t) for t in texts])
    answers = post_all(text_server.http, "bert_tiny", texts)
    check_answers(answers, probs, labels, texts)


def test_text_models_cut_their_batches_by_length(text_server):
    logs = text_server.logs(limit=10 ** 6).splitlines()
    for m in MODELS:
        assert any(f"'{m}" in line and "batches cut by length" in line for line in logs), \
            "\n".join(logs[-40:])


def test_bad_text_answers_400_and_the_server_goes_on(text_server):
    r = call(text_server.http, "POST", "/predictions/text_classifier", b"\xff\xfe bad utf-8",
             headers={"Content-Type": "text/plain"})
    assert r.status == 400, r
    r = call(text_server.http, "POST", "/predictions/text_classifier", b"a fine text",
             headers={"Content-Type": "text/plain"})
    assert r.status == 200, r
