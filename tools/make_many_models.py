#!/usr/bin/python3
"""Builds the many-model store of the model-cache benchmark (issue 10).

    /usr/bin/python3 tools/make_many_models.py STORE [--count 1000] [--seed 10]

Writes STORE/m0000 ... STORE/m0999, each a small TorchScript model with its own
random seeded weights, config.yaml and version folder 1/, in a mix of sizes:
  mlp   input FP32 [D] (D in 16..128) -> 2 or 3 Linear+ReLU layers (hidden 32..2048) -> 10
  cnn   input FP32 [3, 32, 32] -> 2 or 3 conv3x3+ReLU+maxpool blocks (8..96 channels)
        -> Linear -> 10
Weights run from about 10 KB to 17 MB per model (log-spread: most are small, a
few are large, as in a store of many per-customer models).

STORE/models.json lists every model: name, kind, input name and shape, the bytes
of its parameters and of model.pt, and `expected`: the model's output (computed
here by PyTorch) for the input of `bench_input(i, shape)` below, which the
benchmark rebuilds to check every answer the server gives.

Idempotent: STORE/.stamp holds the digest of this script and the arguments; a
rerun with the same ones returns at once. About 2-4 minutes on this machine.
Needs Debian's torch (1.13): run with /usr/bin/python3.
"""

import argparse
import hashlib
import json
import math
import os
import sys
import time


def bench_input(i, n):
    """The benchmark's input for model i: n floats, reproducible without numpy."""
    return [math.sin(0.37 * k + 1.3 * i) for k in range(n)]


def stamp_text(args):
    with open(os.path.abspath(__file__), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return json.dumps({"script": digest, "count": args.count, "seed": args.seed}, sort_keys=True)


def build(args):
    import torch  # noqa: late import so that an up-to-date store costs nothing

    torch.set_num_threads(1)

    class Mlp(torch.nn.Module):
        def __init__(self, d_in, hidden, depth):
            super().__init__()
            layers = []
            d = d_in
            for _ in range(depth):
                layers += [torch.nn.Linear(d, hidden), torch.nn.ReLU()]
                d = hidden
            layers.append(torch.nn.Linear(d, 10))
            self.net = torch.nn.Sequential(*layers)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x)

    class Cnn(torch.nn.Module):
        def __init__(self, channels, blocks):
            super().__init__()
            layers = []
            c_in, c, side = 3, channels, 32
            for _ in range(blocks):
                layers += [torch.nn.Conv2d(c_in, c, 3, padding=1), torch.nn.ReLU(),
                           torch.nn.MaxPool2d(2)]
                c_in, c, side = c, c * 2, side // 2
            self.features = torch.nn.Sequential(*layers)
            self.head = torch.nn.Linear(c_in * side * side, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(torch.flatten(self.features(x), 1))

    import random
    rng = random.Random(args.seed)
    os.makedirs(args.store, exist_ok=True)
    index = []
    start = time.time()
    for i in range(args.count):
        name = f"m{i:04d}"
        torch.manual_seed(args.seed * 100003 + i)
        if rng.random() < 0.6:
            d_in = rng.choice([16, 32, 64, 128])
            # Log-spread widths: most models are small.
            hidden = int(2 ** rng.uniform(5, 10.5))
            depth = rng.choice([2, 3])
            module, kind, shape = Mlp(d_in, hidden, depth), "mlp", [d_in]
        else:
            channels = int(2 ** rng.uniform(3, 6.6))
            blocks = rng.choice([2, 3])
            module, kind, shape = Cnn(channels, blocks), "cnn", [3, 32, 32]
        module.eval()
        scripted = torch.jit.script(module)
        n = 1
        for d in shape:
            n *= d
        x = torch.tensor(bench_input(i, n), dtype=torch.float32).reshape([1] + shape)
        with torch.no_grad():
            expected = module(x)[0].tolist()
        folder = os.path.join(args.store, name)
        os.makedirs(os.path.join(folder, "1"), exist_ok=True)
        path = os.path.join(folder, "1", "model.pt")
        scripted.save(path)
        with open(os.path.join(folder, "config.yaml"), "w") as f:
            f.write(f"# {kind} {shape}, written by tools/make_many_models.py (random weights)\n"
                    "backend: torchscript\n"
                    "max_batch_size: 8\n"
                    "instances: auto\n"
                    f"inputs:  [{{name: x, datatype: FP32, shape: {shape}}}]\n"
                    "outputs: [{name: y, datatype: FP32, shape: [10]}]\n")
        params = sum(p.numel() * p.element_size() for p in module.parameters())
        index.append({"name": name, "kind": kind, "input": "x", "shape": shape,
                      "param_bytes": params, "file_bytes": os.path.getsize(path),
                      "expected": expected})
        if (i + 1) % 100 == 0:
            print(f"make_many_models: {i + 1}/{args.count} ({time.time() - start:.0f} s)",
                  flush=True)
    with open(os.path.join(args.store, "models.json"), "w") as f:
        json.dump({"count": args.count, "seed": args.seed, "models": index}, f)
    total = sum(m["param_bytes"] for m in index)
    print(f"make_many_models: {args.count} models, {total / 2**20:.0f} MiB of parameters, "
          f"in {time.time() - start:.0f} s", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("store")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--seed", type=int, default=10)
    args = p.parse_args()
    stamp = os.path.join(args.store, ".stamp")
    text = stamp_text(args)
    if os.path.exists(stamp) and open(stamp).read() == text:
        print(f"make_many_models: {args.store} is up to date", flush=True)
        return 0
    build(args)
    with open(stamp, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
