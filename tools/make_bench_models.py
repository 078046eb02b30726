#!/usr/bin/python3
"""Builds the models of the batching benchmark (issue 4) into a model store.

    /usr/bin/python3 tools/make_bench_models.py [STORE]      (default /tmp/bench-store)

Writes, with random seeded weights (the figures measure speed, not accuracy):
  bert_nobatch/, bert_batch/      a BERT-base-sized encoder: embedding 30522 x 768,
                                  nn.TransformerEncoder 12 layers, d_model 768, 12 heads,
                                  feed-forward 3072, batch_first; input `input_ids` INT64
                                  [128]; output `pooled` FP32 [768] (mean over tokens).
                                  One model.pt (traced), linked into both folders;
                                  max_batch_size 1 vs 8 with max_queue_delay_us 5000.
  mobilenet_nobatch/, mobilenet_batch/   the example store's MobileNetV3-small (model.pt
                                  and labels), JPEG in, top-5 out; max_batch_size 1 vs 8
                                  with max_queue_delay_us 2000.
  bert_input.json                 a KServe v2 JSON body: 128 random token ids, shape [1, 128].
The traced BERT is reloaded and checked against the eager module before anything is written.
Needs Debian's torch (1.13): run with /usr/bin/python3.
"""
import json
import os
import shutil
import sys

import torch

SEQ = 128
VOCAB = 30522
HIDDEN = 768
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "model-store", "mobilenet_v3_small")


class Encoder(torch.nn.Module):
    """Token ids [B, SEQ] -> mean-pooled hidden state [B, HIDDEN]."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, HIDDEN)
        self.pos = torch.nn.Parameter(torch.randn(1, SEQ, HIDDEN) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(
            d_model=HIDDEN, nhead=12, dim_feedforward=3072, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=12,
                                                   enable_nested_tensor=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids) + self.pos
        return self.encoder(x).mean(dim=1)


BERT_CONFIG = """# {name}: BERT-base-sized encoder (12 x 768, seq 128), random seeded weights,
# written by tools/make_bench_models.py.
backend: torchscript
max_batch_size: {mbs}
{batching}max_queue_size: 128
request_timeout_ms: 30000
instances: auto
precision: fp32
inputs:  [{{name: input_ids, datatype: INT64, shape: [128]}}]
outputs: [{{name: pooled, datatype: FP32, shape: [768]}}]
"""

MOBILENET_CONFIG = """# {name}: MobileNetV3-small of the example store, written by tools/make_bench_models.py.
backend: torchscript
max_batch_size: {mbs}
{batching}max_queue_size: 128
request_timeout_ms: 5000
instances: auto
precision: fp32
inputs:  [{{name: input, datatype: FP32, shape: [3, 224, 224]}}]
outputs: [{{name: logits, datatype: FP32, shape: [1000]}}]
preprocess:  {{kind: image, resize: 256, center_crop: 224, mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225]}}
postprocess: {{kind: topk, k: 5, labels: labels.txt}}
"""


def write_config(store, name, template, mbs, delay_us):
    batching = ""
    if delay_us:
        batching = "dynamic_batching: {max_queue_delay_us: %d}\n" % delay_us
    with open(os.path.join(store, name, "config.yaml"), "w") as f:
        f.write(template.format(name=name, mbs=mbs, batching=batching))


def make_bert(store):
    torch.manual_seed(0)
    model = Encoder().eval()
    example = torch.randint(0, VOCAB, (2, SEQ), dtype=torch.int64)
    path = os.path.join(store, "bert_batch", "1", "model.pt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with torch.no_grad():
        traced = torch.jit.trace(model, example, check_trace=False)
        traced.save(path)
        loaded = torch.jit.load(path).eval()
        for batch in (1, 2, 8):
            ids = torch.randint(0, VOCAB, (batch, SEQ), dtype=torch.int64)
            want, got = model(ids), loaded(ids)
            if got.shape != (batch, HIDDEN) or not torch.allclose(want, got, atol=1e-4, rtol=1e-4):
                sys.exit("make_bench_models: the saved BERT disagrees with eager at batch %d "
                         "(max abs diff %g)" % (batch, (want - got).abs().max().item()))
    nobatch = os.path.join(store, "bert_nobatch", "1")
    os.makedirs(nobatch, exist_ok=True)
    link = os.path.join(nobatch, "model.pt")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(path, link)
    write_config(store, "bert_batch", BERT_CONFIG, 8, 5000)
    write_config(store, "bert_nobatch", BERT_CONFIG, 1, 0)
    ids = torch.randint(0, VOCAB, (SEQ,), generator=torch.Generator().manual_seed(1)).tolist()
    body = {"inputs": [{"name": "input_ids", "datatype": "INT64", "shape": [1, SEQ], "data": ids}]}
    with open(os.path.join(store, "bert_input.json"), "w") as f:
        json.dump(body, f)


def make_mobilenet(store):
    src_pt = os.path.join(EXAMPLE, "1", "model.pt")
    if not os.path.exists(src_pt):
        sys.exit("make_bench_models: no %s: run tools/make_models.py first" % src_pt)
    for name, mbs, delay in (("mobilenet_nobatch", 1, 0), ("mobilenet_batch", 8, 2000)):
        os.makedirs(os.path.join(store, name, "1"), exist_ok=True)
        shutil.copyfile(src_pt, os.path.join(store, name, "1", "model.pt"))
        shutil.copyfile(os.path.join(EXAMPLE, "labels.txt"), os.path.join(store, name, "labels.txt"))
        write_config(store, name, MOBILENET_CONFIG, mbs, delay)


def main():
    store = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "/tmp/bench-store")
    os.makedirs(store, exist_ok=True)
    make_mobilenet(store)
    make_bert(store)
    print("make_bench_models: wrote bert_nobatch, bert_batch, mobilenet_nobatch, "
          "mobilenet_batch and bert_input.json in " + store)


if __name__ == "__main__":
    main()
