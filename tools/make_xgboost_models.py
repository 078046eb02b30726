#!/usr/bin/python3
"""Trains the XGBoost example model of the store (`backend: xgboost`, src/backend/xgboost/).

  /usr/bin/python3 tools/make_xgboost_models.py --store examples/model-store [--force]
  /usr/bin/python3 tools/make_xgboost_models.py --peer-dir DIR   # for ../shared/peers xgb_app

wine_xgb: scikit-learn's bundled wine data set (178 wines, 13 features, 3 cultivars), a
multi:softprob booster of 3 x 60 trees trained with python3-xgboost (Debian, 1.7) on 70% of
it, fixed seed and one thread (deterministic); written as DIR/wine_xgb/1/model.json beside
the committed config.yaml, with the held-out 30% (1/holdout.json: the rows, their true
classes) for tests and benchmarks, and the held-out accuracy (1/accuracy.json). --peer-dir writes DIR/wine_xgb.json, the layout of the Python baseline.
Idempotent: a model already written by this version of the script is skipped.
"""

import argparse
import hashlib
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "wine_xgb"


def log(msg):
    print(f"make_xgboost_models: {msg}", flush=True)


def digest():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def train():
    # Imported here: a store that is up to date needs neither.
    import numpy as np
    import xgboost as xgb
    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split

    data = load_wine()
    x = data.data.astype(np.float32)
    y = data.target
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.3, random_state=0,
                                                        stratify=y)
    params = {"objective": "multi:softprob", "num_class": 3, "max_depth": 4, "eta": 0.1,
              "subsample": 0.9, "seed": 0, "nthread": 1, "eval_metric": "mlogloss"}
    booster = xgb.train(params, xgb.DMatrix(x_train, label=y_train), num_boost_round=60)
    probabilities = booster.inplace_predict(x_test)
    accuracy = float((probabilities.argmax(axis=1) == y_test).mean())
    return booster, x_test, y_test, accuracy


def build_store(store, force):
    model_dir = os.path.join(store, NAME)
    version = os.path.join(model_dir, "1")
    stamp = os.path.join(version, ".stamp")
    if not force and os.path.exists(os.path.join(version, "model.json")) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == digest():
                log(f"{NAME} is up to date")
                return
    booster, x_test, y_test, accuracy = train()
    os.makedirs(version, exist_ok=True)
    committed = os.path.join(os.path.dirname(HERE), "examples", "model-store", NAME, "config.yaml")
    if os.path.abspath(committed) != os.path.abspath(os.path.join(model_dir, "config.yaml")):
        shutil.copyfile(committed, os.path.join(model_dir, "config.yaml"))
    booster.save_model(os.path.join(version, "model.json"))
    with open(os.path.join(version, "holdout.json"), "w") as f:
        json.dump({"rows": x_test.tolist(), "classes": y_test.tolist()}, f)
    with open(os.path.join(version, "accuracy.json"), "w") as f:
        json.dump({"holdout_accuracy": accuracy, "holdout_rows": len(y_test)}, f)
    with open(stamp, "w") as f:
        f.write(digest())
    log(f"{NAME}: held-out accuracy {accuracy:.3f} on {len(y_test)} wines")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", help="model store to write wine_xgb into")
    parser.add_argument("--peer-dir", help="folder to copy wine_xgb.json into (xgb_app layout)")
    parser.add_argument("--force", action="store_true", help="retrain even when up to date")
    args = parser.parse_args()
    if not args.store and not args.peer_dir:
        parser.error("give --store DIR and/or --peer-dir DIR")
    store = args.store or os.path.join(os.path.dirname(HERE), "examples", "model-store")
    build_store(store, args.force)
    if args.peer_dir:
        os.makedirs(args.peer_dir, exist_ok=True)
        shutil.copy(os.path.join(store, NAME, "1", "model.json"),
                    os.path.join(args.peer_dir, NAME + ".json"))


if __name__ == "__main__":
    main()
