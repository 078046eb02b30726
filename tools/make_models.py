#!/usr/bin/python3
"""Builds the TorchScript models inferd serves in its examples and tests.

Run with Debian's python (python3-torch 1.13, python3-torchvision, python3-sklearn):

  /usr/bin/python3 tools/make_models.py --store examples/model-store [--with-resnet50]
  /usr/bin/python3 tools/make_models.py --test-store /tmp/inferd-test-store

--store DIR writes DIR/<model>/1/model.pt for digits_cnn, resnet18 and
mobilenet_v3_small (resnet50 with --with-resnet50) next to their committed
config.yaml and labels.txt, plus digits_cnn's accuracy.json and held-out test set.
--test-store DIR writes small models, each with its own config.yaml, for the unit
and end-to-end tests (see TEST_MODELS below).

Idempotent: a model whose model.pt was written by the current version of these
scripts (DIR/<model>/1/.stamp) is skipped unless --force; a store-wide stamp
(DIR/.stamp) makes a rerun return at once, before torch is even imported. Every model is deterministic (fixed seeds).
"""

import argparse
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The scripts each store's models are made by: a change to one rebuilds them.
GENERATORS = {"store": ["models_example.py", "models_digits.py"], "test-store": ["models_test.py", "make_text_models.py", "make_precision_models.py"]}
EXAMPLE_CONFIGS = os.path.join(os.path.dirname(HERE), "examples", "model-store")


def log(msg):
    print(f"make_models: {msg}", flush=True)


def generator_digest(kind):
    digest = ""
    for name in GENERATORS[kind]:
        with open(os.path.join(HERE, name), "rb") as f:
            digest = hashlib.sha256(digest.encode() + f.read()).hexdigest()
    return digest


def stamp_text(kind, extra):
    return json.dumps({"kind": kind, "script": generator_digest(kind), **extra}, sort_keys=True)


def up_to_date(directory, text, models):
    path = os.path.join(directory, ".stamp")
    if not os.path.exists(path):
        return False
    with open(path) as f:
        if f.read() != text:
            return False
    return all(os.path.exists(os.path.join(directory, m, "1", "model.pt")) for m in models)


def write_stamp(directory, text):
    with open(os.path.join(directory, ".stamp"), "w") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", help="example model store to fill")
    parser.add_argument("--test-store", help="test model store to create")
    parser.add_argument("--with-resnet50", action="store_true", help="also resnet50 (benchmarks)")
    parser.add_argument("--force", action="store_true", help="rebuild models that exist")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = parser.parse_args()
    if not args.store and not args.test_store:
        parser.error("give --store DIR and/or --test-store DIR")

    sys.path.insert(0, HERE)
    started = time.time()
    if args.store:
        import make_xgboost_models  # wine_xgb (backend: xgboost); no torch
        make_xgboost_models.build_store(args.store, args.force)
        models = ["digits_cnn", "resnet18", "mobilenet_v3_small"]
        if args.with_resnet50:
            models.append("resnet50")
        text = stamp_text("store", {"models": models})
        if not args.force and up_to_date(args.store, text, models):
            log(f"{args.store} is up to date")
        else:
            import models_example
            models_example.build(args.store, EXAMPLE_CONFIGS, models, args.force, args.threads,
                                 generator_digest("store"))
            write_stamp(args.store, text)
        # The ONNX copies (backend: onnxruntime) of the image models, only where the
        # backend can be built: a model the server cannot load would keep /ping unhealthy.
        root = os.environ.get("ONNXRUNTIME_ROOT") or os.path.join(os.path.dirname(HERE), "third_party", "onnxruntime")
        if os.path.exists(os.path.join(root, "lib", "libonnxruntime.so.1")):
            import make_onnx_models
            make_onnx_models.export_store(args.store, models, args.force)
        else:
            log(f"no ONNX Runtime in {root}: the ONNX copies of the example models are not made")
    if args.test_store:
        from models_test import TEST_MODELS  # no torch import at module level
        text = stamp_text("test-store", {})
        if not args.force and up_to_date(args.test_store, text, TEST_MODELS):
            log(f"{args.test_store} is up to date")
        else:
            import models_test
            models_test.build(args.test_store, args.force, generator_digest("test-store"))
            __import__("make_text_models").build(args.test_store, args.force)  # text_classifier, bert_tiny
            __import__("make_precision_models").build(args.test_store, args.force, generator_digest("test-store"))
            write_stamp(args.test_store, text)
    log(f"done in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
