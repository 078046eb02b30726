"""The example model store for make_models.py: digits_cnn, resnet18,
mobilenet_v3_small and (for benchmarks) resnet50.

config.yaml and labels.txt are committed under examples/model-store/<model>/;
they are copied into the store when it is another folder. The torchvision
models have random weights (seeded, then calibrated: see calibrate()): they
exercise the server, not accuracy.
Each also gets reference.json (a seeded input and PyTorch's output for it) so
that end-to-end tests can compare the server's answer with PyTorch's.
"""

import os
import shutil
import time

import model_stamps
import models_digits

TORCHVISION = {
    "resnet18": ("resnet18", "ResNet18_Weights"),
    "mobilenet_v3_small": ("mobilenet_v3_small", "MobileNet_V3_Small_Weights"),
    "resnet50": ("resnet50", "ResNet50_Weights"),
}


def log(msg):
    print(f"make_models: {msg}", flush=True)


def write_labels(configs_dir, model):
    """ImageNet category names ship in torchvision's weight metadata (no download)."""
    import torchvision

    path = os.path.join(configs_dir, model, "labels.txt")
    if os.path.exists(path):
        return
    weights = getattr(torchvision.models, TORCHVISION[model][1]).IMAGENET1K_V1
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(weights.meta["categories"]) + "\n")


def copy_committed(configs_dir, store, model):
    dst_dir = os.path.join(store, model)
    os.makedirs(dst_dir, exist_ok=True)
    if model == "resnet50":
        # Optional (benchmarks only), so not committed: it would be a model with
        # no version in every store. It shares resnet18's interface and labels.
        with open(os.path.join(configs_dir, "resnet18", "config.yaml")) as f:
            text = f.read().replace("ResNet-18", "ResNet-50")
        with open(os.path.join(dst_dir, "config.yaml"), "w") as f:
            f.write(text)
        shutil.copyfile(os.path.join(configs_dir, "resnet18", "labels.txt"),
                        os.path.join(dst_dir, "labels.txt"))
        return
    src_dir = os.path.join(configs_dir, model)
    if os.path.realpath(src_dir) == os.path.realpath(dst_dir):
        return
    for name in ("config.yaml", "labels.txt"):
        if os.path.exists(os.path.join(src_dir, name)):
            shutil.copyfile(os.path.join(src_dir, name), os.path.join(dst_dir, name))


def calibrate(net):
    """Gives a randomly initialised network sane activations and logits.

    Fresh torchvision init leaves BatchNorm's running statistics at 0/1, which
    for MobileNetV3 collapses the logits to about 1e-10 (every class ties, so
    top-k answers and bf16 comparisons mean nothing). A few forward passes in
    training mode on random images set the statistics; the last linear layer
    is then scaled so that the logits have a standard deviation of about 1.
    """
    import torch

    for m in net.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.momentum = None  # cumulative average over the calibration batches
    generator = torch.Generator().manual_seed(2)
    net.train()
    with torch.no_grad():
        for _ in range(3):
            net(torch.rand(8, 3, 224, 224, generator=generator))
    net.eval()
    last = [m for m in net.modules() if isinstance(m, torch.nn.Linear)][-1]
    with torch.no_grad():
        spread = net(torch.rand(8, 3, 224, 224, generator=generator)).std().item()
        last.weight /= spread
        last.bias /= spread


def build_torchvision(model_dir, model):
    import numpy as np
    import torch
    import torchvision

    torch.manual_seed(0)
    net = getattr(torchvision.models, TORCHVISION[model][0])(weights=None)
    calibrate(net)
    example = torch.rand(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        traced = torch.jit.trace(net, example)
        expected = net(example)
    os.makedirs(os.path.join(model_dir, "1"), exist_ok=True)
    traced.save(os.path.join(model_dir, "1", "model.pt"))
    write_reference(model_dir, example, expected)


def write_reference(model_dir, example, expected):
    """reference.json plus raw little-endian float32 files, readable from C++
    and from numpy (np.fromfile) alike."""
    import json

    example.numpy().astype("<f4").tofile(os.path.join(model_dir, "reference_input.f32"))
    expected.numpy().astype("<f4").tofile(os.path.join(model_dir, "reference_output.f32"))
    with open(os.path.join(model_dir, "reference.json"), "w") as f:
        json.dump({"description": "a seeded input and PyTorch's fp32 output for it",
                   "input": "reference_input.f32", "input_shape": list(example.shape),
                   "output": "reference_output.f32", "output_shape": list(expected.shape)},
                  f, indent=1)
        f.write("\n")


def build(store, configs_dir, models, force, threads, digest):
    import torch

    torch.set_num_threads(threads)
    os.makedirs(store, exist_ok=True)
    for model in models:
        started = time.time()
        if model in TORCHVISION and model != "resnet50":
            write_labels(configs_dir, model)
        copy_committed(configs_dir, store, model)
        model_dir = os.path.join(store, model)
        if model_stamps.is_fresh(model_dir, digest) and not force:
            log(f"{model}: up to date, skipped (--force rebuilds)")
            continue
        if model == "digits_cnn":
            models_digits.build(model_dir, log)
        else:
            build_torchvision(model_dir, model)
        model_stamps.mark_fresh(model_dir, digest)
        log(f"{model}: written in {time.time() - started:.1f} s")
