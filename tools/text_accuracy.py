#!/usr/bin/env python3
"""What a text model's served answers lose against PyTorch fp32, text by text.

    /usr/bin/python3 tools/text_accuracy.py STORE MODEL TEXTS_DIR [--binary build/inferd]
        [--precision auto] [--out DIR]

Starts `inferd serve` (tools/harness) on a copy of STORE/MODEL whose config.yaml has the given
`precision:` (what `auto` serves is read from GET /v2/models/MODEL), posts every text of
TEXTS_DIR (one file each, as `inferd bench` sends them) one at a time, and compares each answer
with the model's own TorchScript file run by PyTorch in fp32 on the same token ids (the
tokenizer references of tools/: SentencePiece or WordPiece, as the config names it): the top-1
label, and the largest difference of a probability among the labels the server returned.
Prints one line per disagreement and a summary, and writes it as JSON when --out is given.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import urllib.request

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import wordpiece_reference  # noqa: E402
from tools.harness import InferdServer  # noqa: E402


def config_value(config, key):
    for line in config.splitlines():
        if f"{key}:" in line:
            return line.split(f"{key}:", 1)[1].split(",")[0].strip(" }")
    return None


def tokenizer(model_dir, config):
    kind = config_value(config, "tokenizer")
    vocab = config_value(config, "vocab")
    max_length = int(config_value(config, "max_length") or 256)
    if kind == "sentencepiece":
        import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=os.path.join(model_dir, vocab))
        return lambda t: [sp.bos_id()] + sp.encode(t)[:max_length - 2] + [sp.eos_id()]
    if kind == "wordpiece":
        v = wordpiece_reference.load_vocab(os.path.join(model_dir, vocab))

        def ids(t):
            pieces = wordpiece_reference.wordpiece(wordpiece_reference.basic_tokenize(t), v)
            return [v["[CLS]"]] + [v[p] for p in pieces][:max_length - 2] + [v["[SEP]"]]
        return ids
    raise SystemExit(f"text_accuracy: tokenizer {kind!r} in {model_dir}/config.yaml not known")


def post(port, model, text):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/predictions/{model}",
                                 data=text.encode("utf-8"),
                                 headers={"Content-Type": "text/plain; charset=utf-8"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("store")
    p.add_argument("model")
    p.add_argument("texts")
    p.add_argument("--binary", default=None)
    p.add_argument("--precision", default="auto")
    p.add_argument("--out", default=None)
    a = p.parse_args()

    model_dir = os.path.join(a.store, a.model)
    with open(os.path.join(model_dir, "config.yaml")) as f:
        config = f.read()
    with open(os.path.join(model_dir, "labels.txt")) as f:
        labels = f.read().split()
    texts = []
    for name in sorted(os.listdir(a.texts)):
        with open(os.path.join(a.texts, name), encoding="utf-8") as f:
            texts.append(f.read())
    ids = tokenizer(model_dir, config)

    m = torch.jit.load(os.path.join(model_dir, "1", "model.pt")).eval()
    reference = []
    with torch.inference_mode():
        for t in texts:
            x = torch.tensor([ids(t)])
            reference.append(torch.softmax(m(x, torch.ones_like(x))[0].float(), 0))

    tmp = tempfile.mkdtemp(prefix="text-accuracy-")
    try:
        shutil.copytree(model_dir, os.path.join(tmp, "store", a.model), symlinks=True)
        cfg = "".join(l + "\n" for l in config.splitlines() if not l.startswith("precision:"))
        with open(os.path.join(tmp, "store", a.model, "config.yaml"), "w") as f:
            f.write(cfg + f"precision: {a.precision}\n")
        with InferdServer(os.path.join(tmp, "store"), binary=a.binary, out_dir=tmp,
                          name="accuracy") as s:
            with urllib.request.urlopen(f"http://127.0.0.1:{s.http}/v2/models/{a.model}") as r:
                meta = json.loads(r.read())
            choice = meta.get("precision") or {}
            served = f"{choice.get('runtime', 'torchscript')} {choice.get('chosen', a.precision)}"
            answers = [post(s.http, a.model, t) for t in texts]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    flips, worst, worst_text = [], 0.0, None
    for i, (answer, ref) in enumerate(zip(answers, reference)):
        server_top = max(answer, key=answer.get)
        ref_top = labels[int(ref.argmax())]
        if server_top != ref_top:
            top2 = torch.topk(ref, 2).values
            flips.append({"text": i, "server": server_top, "pytorch": ref_top,
                          "pytorch_margin": round(float(top2[0] - top2[1]), 5)})
        for label, score in answer.items():
            d = abs(score - float(ref[labels.index(label)]))
            if d > worst:
                worst, worst_text = d, i
    lengths = sorted(len(ids(t)) for t in texts)
    report = {"model": a.model, "precision": a.precision, "served": served, "texts": len(texts),
              "tokens_min": lengths[0], "tokens_max": lengths[-1],
              "top1_equal": len(texts) - len(flips), "flips": flips,
              "max_probability_difference": round(worst, 5), "at_text": worst_text}
    for f in flips:
        print(f"text {f['text']}: server {f['server']}, PyTorch {f['pytorch']} "
              f"(PyTorch's margin {f['pytorch_margin']})")
    print(f"{a.model} ({served}): top-1 equal to PyTorch fp32 on {report['top1_equal']} of "
          f"{len(texts)} texts ({lengths[0]}-{lengths[-1]} tokens); largest probability "
          f"difference {worst:.4f} (text {worst_text})")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, f"accuracy-{a.model}-{a.precision}.json"), "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
