#!/usr/bin/python3
"""libtorch 1.13's fast paths for transformer encoders, measured on the models of
tools/make_text_models.py --bench DIR, in one process, interleaved rounds, medians.

  /usr/bin/python3 tools/bench_text_fastpaths.py DIR [--models bert_small,deberta_small] [--threads 1]

Inputs: 8 of DIR/texts/ (mixed lengths) tokenized as the server does, run as one padded batch
and as 8 single texts. Variants (each checked against the scripted module's logits, max abs diff):
  scripted         torch.jit.load as saved (the profiling graph executor)
  frozen           torch.jit.freeze (what inferd serves by default)
  frozen+ofi       torch.jit.optimize_for_inference on the frozen module
  frozen+nnc       frozen, with the NNC (TensorExpr) fuser allowed on CPU
  frozen+onednn    frozen, with torch.jit.enable_onednn_fusion(True) (oneDNN Graph)
  eager-fastpath   BERT-style only: the eager nn.TransformerEncoder in inference_mode, where 1.13
                   takes its native fast path (fused attention, nested tensors for padding)
  eager-slowpath   BERT-style only: the same module with autograd on (its parameters require
                   grad), which keeps nn.TransformerEncoder off the fast path
"""

import argparse
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def tokenize(model_dir, texts, max_length=256):
    cfg = open(os.path.join(model_dir, "config.yaml")).read()
    if "sentencepiece" in cfg:
        import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=os.path.join(model_dir, "tokenizer.model"))
        return [[sp.bos_id()] + sp.encode(t)[:max_length - 2] + [sp.eos_id()] for t in texts]
    sys.path.insert(0, HERE)
    import wordpiece_reference as wr
    vocab = wr.load_vocab(os.path.join(model_dir, "vocab.txt"))
    return [[vocab["[CLS]"]] + [vocab[p] for p in wr.wordpiece(wr.basic_tokenize(t), vocab)]
            [:max_length - 2] + [vocab["[SEP]"]] for t in texts]


def padded(rows):
    length = max(len(r) for r in rows)
    ids = torch.tensor([r + [0] * (length - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (length - len(r)) for r in rows])
    return ids, mask


def variants(path, name):
    def load():
        return torch.jit.load(path).eval()
    out = {"scripted": (load(), None), "frozen": (torch.jit.freeze(load()), None)}
    out["frozen+ofi"] = (torch.jit.optimize_for_inference(torch.jit.freeze(load())), None)
    out["frozen+nnc"] = (torch.jit.freeze(load()), "nnc")
    out["frozen+onednn"] = (torch.jit.freeze(load()), "onednn")
    if name.startswith("bert"):
        sys.path.insert(0, HERE)
        import make_text_models
        _, BertStyle = make_text_models.modules()
        scripted = load()
        layers = sum(1 for k in scripted.state_dict() if k.endswith("linear1.weight"))
        d = scripted.state_dict()["embed.weight"].shape[1]
        model = BertStyle(scripted.state_dict()["embed.weight"].shape[0], d, layers, d // 64,
                          scripted.state_dict()["classify.bias"].shape[0])
        model.load_state_dict(scripted.state_dict())
        out["eager-fastpath"] = (model.eval(), None)
        out["eager-slowpath"] = (model, "grad")
    return out


def call(model, mode, ids, mask):
    torch._C._jit_override_can_fuse_on_cpu(mode == "nnc")
    torch._C._jit_set_texpr_fuser_enabled(mode == "nnc")
    torch.jit.enable_onednn_fusion(mode == "onednn")
    if mode == "grad":
        with torch.enable_grad():
            return model(ids, mask).detach()
    with torch.inference_mode():
        return model(ids, mask)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir")
    p.add_argument("--models", default="bert_small,deberta_small")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    tdir = os.path.join(args.dir, "texts")
    texts = [open(os.path.join(tdir, f)).read() for f in sorted(os.listdir(tdir))[:8]]
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.rounds} rounds, medians")
    print("| model | variant | batch of 8 (padded) ms | 8 singles ms | max abs diff |")
    print("|---|---|---|---|---|")
    for name in args.models.split(","):
        mdir = os.path.join(args.dir, name)
        rows = tokenize(mdir, texts)
        ids, mask = padded(rows)
        singles = [padded([r]) for r in rows]
        vs = variants(os.path.join(mdir, "1", "model.pt"), name)
        ref = call(vs["scripted"][0], None, ids, mask)
        times = {k: ([], []) for k in vs}
        diffs = {}
        for k, (m, mode) in list(vs.items()):  # warm-up: profiling runs, fusion
            try:
                for _ in range(3):
                    y = call(m, mode, ids, mask)
                    for i, a in singles:
                        call(m, mode, i, a)
            except RuntimeError as e:
                print(f"| {name} | {k} | unavailable: {str(e).splitlines()[0]} | | |")
                del vs[k]
                continue
            diffs[k] = float((y - ref).abs().max())
        for _ in range(args.rounds):
            for k, (m, mode) in vs.items():
                t0 = time.perf_counter()
                call(m, mode, ids, mask)
                t1 = time.perf_counter()
                for i, a in singles:
                    call(m, mode, i, a)
                t2 = time.perf_counter()
                times[k][0].append((t1 - t0) * 1e3)
                times[k][1].append((t2 - t1) * 1e3)
        for k in vs:
            print(f"| {name} | {k} | {statistics.median(times[k][0]):.1f} | "
                  f"{statistics.median(times[k][1]):.1f} | {diffs[k]:.1e} |", flush=True)
        lengths = sorted(len(r) for r in rows)
        print(f"| {name} | (lengths {lengths}) | | | |")


if __name__ == "__main__":
    main()
