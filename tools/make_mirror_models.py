#!/usr/bin/python3
"""Builds the models of the traffic-mirroring tests and benchmarks (issue 27).

  /usr/bin/python3 tools/make_mirror_models.py --store DIR [--slow-iters N | --slow-seconds S]
                                                [--slow-uncapped]

writes DIR/<model>/1/model.pt and DIR/<model>/config.yaml for:
  mirror_mlp            the primary: a 16 -> 64 -> 10 MLP classifier (fixed seed)
  mirror_mlp_copy       the same weights (a candidate that must agree exactly)
  mirror_mlp_perturbed  the same MLP with every weight moved by N(0, 0.02^2) noise:
                        a candidate whose answers differ by an amount the test
                        computes in PyTorch
  mirror_slow           the primary's answer, after a loop of N tanh(h @ W) steps
                        (128 x 128) on one core: a candidate far slower than the primary
                        (--slow-seconds S: N timed here so that one forward takes about S
                        seconds; --slow-uncapped: the default executors, not one)
  mirror_img, mirror_img_perturbed
                        an 8x8 grayscale image classifier with `preprocess: image` (raw
                        payloads are mirrored) and its perturbed copy
The e2e test (tests/e2e/test_mirror.py) imports build() and the modules.
"""

import argparse
import os
import time

import torch

CONFIG = """\
# {name}: written by tools/make_mirror_models.py
backend: torchscript
max_batch_size: 8
dynamic_batching: {{max_queue_delay_us: 0, calibrate: false}}
inputs: [{{name: x, datatype: FP32, shape: [16]}}]
outputs: [{{name: logits, datatype: FP32, shape: [10]}}]
{extra}"""


IMG_CONFIG = """\
# {name}: written by tools/make_mirror_models.py
backend: torchscript
max_batch_size: 4
dynamic_batching: {{max_queue_delay_us: 0, calibrate: false}}
inputs: [{{name: image, datatype: FP32, shape: [1, 8, 8]}}]
outputs: [{{name: logits, datatype: FP32, shape: [10]}}]
preprocess: {{kind: image, width: 8, height: 8, color: grayscale}}
"""


def image_classifier():
    torch.manual_seed(28)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 10))


def mlp():
    torch.manual_seed(27)
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))


def perturbed(model, scale=0.02, make=None):
    g = torch.Generator().manual_seed(2727)
    other = (make or mlp)()
    other.load_state_dict(model.state_dict())
    with torch.no_grad():
        for p in other.parameters():
            p.add_(torch.randn(p.shape, generator=g) * scale)
    return other


class Slow(torch.nn.Module):
    """The MLP's answer, exactly, after `iters` dependent 128x128 products:
    the loop's result joins the output as 0 * h, so no pass can drop it."""

    def __init__(self, model, iters):
        super().__init__()
        self.model = model
        self.iters = iters
        g = torch.Generator().manual_seed(7)
        self.proj = torch.nn.Parameter(torch.randn(16, 128, generator=g) / 4, requires_grad=False)
        self.w = torch.nn.Parameter(torch.randn(128, 128, generator=g) / 11.3, requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(x @ self.proj)
        for _ in range(self.iters):
            h = torch.tanh(h @ self.w)
        return self.model(x) + 0 * h.sum(dim=1, keepdim=True)


def save(store, name, module, extra="", config=CONFIG):
    d = os.path.join(store, name)
    os.makedirs(os.path.join(d, "1"), exist_ok=True)
    torch.jit.script(module.eval()).save(os.path.join(d, "1", "model.pt"))
    with open(os.path.join(d, "config.yaml"), "w") as f:
        f.write(config.format(name=name, extra=extra))


def iters_for_seconds(seconds):
    """The loop steps for a forward of about `seconds` on one thread, timed here."""
    torch.set_num_threads(1)
    probe = torch.jit.script(Slow(mlp().eval(), 20_000).eval())
    x = torch.zeros(1, 16)
    with torch.no_grad():
        probe(x)
        t = time.perf_counter()
        probe(x)
        per_step = (time.perf_counter() - t) / 20_000
    return max(1, int(seconds / per_step))


def build(store, slow_iters=2000, primary_extra="", slow_capped=True):
    """Writes the models; returns (primary, perturbed) MLPs as eager modules."""
    torch.set_num_threads(1)
    primary = mlp().eval()
    other = perturbed(primary).eval()
    save(store, "mirror_mlp", primary, primary_extra)
    save(store, "mirror_mlp_copy", primary)
    save(store, "mirror_mlp_perturbed", other)
    # One executor at most: a slow candidate must leave the others to the primary.
    save(store, "mirror_slow", Slow(primary, slow_iters),
         "instances: {count: 1, threads: 1}\n" if slow_capped else "")
    img = image_classifier().eval()
    save(store, "mirror_img", img, config=IMG_CONFIG)
    save(store, "mirror_img_perturbed", perturbed(img, 0.05, image_classifier).eval(),
         config=IMG_CONFIG)
    return primary, other


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--slow-iters", type=int, default=2000)
    parser.add_argument("--slow-seconds", type=float,
                        help="mirror_slow's forward in seconds (sets --slow-iters)")
    parser.add_argument("--slow-uncapped", action="store_true",
                        help="mirror_slow on the default executors, not one of one thread")
    args = parser.parse_args()
    iters = iters_for_seconds(args.slow_seconds) if args.slow_seconds else args.slow_iters
    build(args.store, iters, slow_capped=not args.slow_uncapped)
    print(f"mirror_slow: {iters} loop steps")


if __name__ == "__main__":
    main()
