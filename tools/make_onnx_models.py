#!/usr/bin/python3
"""Exports ONNX copies of the store's TorchScript image models (`backend: onnxruntime`).

  /usr/bin/python3 tools/make_onnx_models.py --store examples/model-store [--models a,b] [--force]

For each model M (default: mobilenet_v3_small; resnet50 too when its model.pt is there),
reads DIR/M/1/model.pt (the traced TorchScript written by make_models.py) and writes
DIR/M_onnx/1/model.onnx with Debian's torch.onnx.export (opset 13, a dynamic batch dim):
the same weights, so the two copies must answer the same. DIR/M_onnx/config.yaml is M's
config with `backend: onnxruntime` (the inputs, outputs and pre/post-processing unchanged;
precision and variants, which ONNX Runtime does not take, left out), labels.txt is M's.
Idempotent: an export newer than its model.pt and this script is skipped.
"""

import argparse
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


def log(msg):
    print(f"make_onnx_models: {msg}", flush=True)


def onnx_config(text):
    out = []
    for line in text.splitlines():
        key = line.split(":")[0].strip()
        if key in ("precision", "variants") or "model.pt" in line:
            continue
        if key == "backend":
            line = "backend: onnxruntime"
        out.append(line)
    return ("# The ONNX copy of the same weights: 1/model.onnx, exported from the TorchScript\n"
            "# file by tools/make_onnx_models.py.\n"
            + "\n".join(out) + "\n")


def export(store, model, force):
    src = os.path.join(store, model)
    dst = os.path.join(store, model + "_onnx")
    pt = os.path.join(src, "1", "model.pt")
    onnx = os.path.join(dst, "1", "model.onnx")
    if not os.path.exists(pt):
        log(f"{model}: no {pt}, skipped")
        return
    newest_input = max(os.path.getmtime(pt), os.path.getmtime(os.path.abspath(__file__)))
    if not force and os.path.exists(onnx) and os.path.getmtime(onnx) >= newest_input:
        log(f"{model}_onnx is up to date")
        return
    import torch

    torch.set_num_threads(1)
    module = torch.jit.load(pt).eval()
    os.makedirs(os.path.join(dst, "1"), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(module, torch.zeros(1, 3, 224, 224), onnx, input_names=["input"],
                          output_names=["logits"], opset_version=13,
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    with open(os.path.join(src, "config.yaml")) as f:
        config = onnx_config(f.read())
    with open(os.path.join(dst, "config.yaml"), "w") as f:
        f.write(config)
    if os.path.exists(os.path.join(src, "labels.txt")):
        shutil.copyfile(os.path.join(src, "labels.txt"), os.path.join(dst, "labels.txt"))
    log(f"{model}_onnx: exported {os.path.getsize(onnx)} bytes")


def export_store(store, models, force=False):
    """make_models.py's call: the ONNX copies of the image models it made."""
    for model in ("mobilenet_v3_small", "resnet50"):
        if model in models:
            export(store, model, force)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True, help="model store holding the TorchScript models")
    parser.add_argument("--models", default="mobilenet_v3_small,resnet50",
                        help="models to export (those without a model.pt are skipped)")
    parser.add_argument("--force", action="store_true", help="export even when up to date")
    args = parser.parse_args()
    for model in args.models.split(","):
        export(args.store, model, args.force)


if __name__ == "__main__":
    main()
