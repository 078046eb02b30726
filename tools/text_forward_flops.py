#!/usr/bin/python3
"""The arithmetic of a BERT-style encoder's forward on real texts (issue 37, part 4): sends each
text once to a running inferd and reads its tokens from inferd_real_tokens_total (the server's
own tokenizer, as served), then counts per request, for L tokens:
  matrix products of the layers  L x layers x (4 d^2 + 2 d f) x 2   (Q, K, V, output; FFN)
  attention                      layers x 2 L^2 d x 2                (Q K^T and the weighted sum)
(one multiply-add = 2 operations; embeddings, LayerNorm, softmax and the head left out: < 1%).
Prints one JSON line: the tokens of every text and the mean operations per request over the
texts sent round robin, for `GFLOP/s = ops per request x req/s`.

  tools/text_forward_flops.py --port HTTP --metrics-port M --model NAME --texts DIR
                              [--layers 12 --hidden 768 --ffn 3072]"""
import argparse
import json
import os
import urllib.request


def real_tokens(port, model):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("inferd_real_tokens_total") and f'model="{model}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--metrics-port", type=int, required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--texts", required=True)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--ffn", type=int, default=3072)
    a = p.parse_args()
    lengths = []
    for name in sorted(os.listdir(a.texts)):
        with open(os.path.join(a.texts, name), "rb") as f:
            body = f.read()
        before = real_tokens(a.metrics_port, a.model)
        req = urllib.request.Request(f"http://127.0.0.1:{a.port}/predictions/{a.model}", body,
                                     {"Content-Type": "text/plain; charset=utf-8"})
        urllib.request.urlopen(req, timeout=300).read()
        lengths.append(int(round(real_tokens(a.metrics_port, a.model) - before)))
    d, f, n = a.hidden, a.ffn, a.layers
    ops = [L * n * (4 * d * d + 2 * d * f) * 2 + n * 2 * L * L * d * 2 for L in lengths]
    print(json.dumps({"model": a.model, "texts": len(lengths), "tokens": lengths,
                      "mean_tokens": sum(lengths) / len(lengths),
                      "gop_per_request": round(sum(ops) / len(ops) / 1e9, 3),
                      "gop_per_token_matmul": round(n * (4 * d * d + 2 * d * f) * 2 / 1e9, 4)}))


if __name__ == "__main__":
    main()
