#!/usr/bin/python3
"""Soak test (issue 9, docs/ROBUSTNESS.md): mixed load on every example model
for a while, bad requests interleaved, a model reloaded every few seconds.

Starts the real binary on the example store (a copy whose model files are
symlinks, so that reloads re-read it), then runs --clients threads that each
send, in a random mix:
  - good requests, each checked against PyTorch (as the e2e suite does):
      digits_cnn   a held-out PNG on /predictions: the top label is PyTorch's
                   argmax on the same test set image;
      digits_cnn   8 PNGs as one v2 BYTES input (binary extension): the first
                   label of each item is PyTorch's argmax;
      resnet18,    an example JPEG/PNG/WebP on /predictions: the top label and
      mobilenet    its score are PyTorch's (PIL + torchvision pre-processing,
                   tools/pipeline_reference.py), score within 1e-4;
  - bad requests (about one in four), each of which must answer 4xx.
Meanwhile one model after the other is reloaded through the management API
(POST /v2/repository/models/<m>/load re-reads the store and replaces the
instance), --reload-every seconds after the previous reload finished.

Reports: requests sent, answers by status for good and bad requests, wrong
answers (a good request answered 200 with another result), good requests not
answered 200, bad requests not answered 4xx, reloads, and the server's RSS at
start (models loaded), settled (after --settle-fraction of the run), at the
end, and its maximum. Writes the table (markdown) to stdout and everything as
JSON to --out. Exit code 1 when any good request was answered wrongly or not
at all, a bad one was not refused with a 4xx, or the server died.

  /usr/bin/python3 tools/soak.py --bin build/inferd --minutes 10 --clients 4
"""
import argparse
import collections
import http.client
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from inferd_e2e import Response, bytes_elements, parse_infer_response  # noqa: E402
import pipeline_reference  # noqa: E402
from harness import InferdServer  # noqa: E402

MODELS = ["digits_cnn", "resnet18", "mobilenet_v3_small"]
IMAGES = ["cat.jpg", "coffee.jpg", "astronaut.jpg", "grace_hopper.jpg", "cat_exif_rotated.jpg",
          "cat.png", "cat.webp"]


def copy_store(src, dst):
    """The store with symlinked model files (a reload re-reads config and files)."""
    for m in MODELS:
        shutil.copytree(os.path.join(src, m), os.path.join(dst, m),
                        ignore=shutil.ignore_patterns("model.pt"))
        os.symlink(os.path.join(src, m, "1", "model.pt"), os.path.join(dst, m, "1", "model.pt"))


def references(store):
    """What PyTorch answers for every good request the soak sends."""
    torch.set_num_threads(1)
    refs = {}
    digits = torch.jit.load(os.path.join(store, "digits_cnn", "1", "model.pt")).eval()
    data = np.load(os.path.join(store, "digits_cnn", "test_set.npz"))
    images = torch.from_numpy(data["images"].astype(np.float32) / np.float32(255)).unsqueeze(1)
    with torch.inference_mode():
        argmax = digits(images).argmax(1).tolist()
    with open(os.path.join(store, "digits_cnn", "test_set.json")) as f:
        files = json.load(f)["files"]
    pngs = []
    for name, label in zip(files, argmax):
        with open(os.path.join(store, "digits_cnn", "samples", name), "rb") as f:
            pngs.append((f.read(), label))
    refs["digits"] = pngs
    for m in ("resnet18", "mobilenet_v3_small"):
        model = torch.jit.load(os.path.join(store, m, "1", "model.pt")).eval()
        with open(os.path.join(store, m, "labels.txt")) as f:
            labels = [line.rstrip("\n") for line in f]
        for name in IMAGES:
            path = os.path.join(ROOT, "examples", "images", name)
            x = pipeline_reference.reference_tensor(path, resize=256, crop=224,
                                                    mean=pipeline_reference.IMAGENET_MEAN,
                                                    std=pipeline_reference.IMAGENET_STD)
            with torch.inference_mode():
                probs = torch.softmax(model(x.unsqueeze(0))[0], 0)
            score, index = probs.max(0)
            with open(path, "rb") as f:
                refs[(m, name)] = (f.read(), labels[int(index)], float(score))
    return refs


def bad_requests(refs):
    """(description, method, path, body, headers): each must answer 4xx."""
    jpeg = refs[("resnet18", "cat.jpg")][0]
    png = refs["digits"][0][0]
    head = json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1],
                                   "parameters": {"binary_data_size": 2**64 - 8}}]}).encode()
    wrapped = json.dumps({"inputs": [
        {"name": "image", "datatype": "BYTES", "shape": [1], "parameters": {"binary_data_size": 8}},
        {"name": "x", "datatype": "BYTES", "shape": [1],
         "parameters": {"binary_data_size": 2**64 - 4}}]}).encode()
    octet = {"Content-Type": "application/octet-stream"}
    return [
        ("truncated JPEG", "POST", "/predictions/resnet18", jpeg[:len(jpeg) // 3], octet),
        ("garbage image", "POST", "/predictions/mobilenet_v3_small", os.urandom(2048), octet),
        ("empty body", "POST", "/predictions/digits_cnn", b"", octet),
        ("unknown model", "POST", "/predictions/no_such_model", png, octet),
        ("model name with NUL", "POST", "/v2/models/digits%00cnn/infer", b"{}", {}),
        ("name with invalid UTF-8", "POST", "/v2/models/%ff%fe/infer", b"{}", {}),
        ("malformed JSON", "POST", "/v2/models/digits_cnn/infer", b'{"inputs": [', {}),
        ("negative shape", "POST", "/v2/models/digits_cnn/infer",
         json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [-1],
                                 "data": ["x"]}]}).encode(), {}),
        ("priority out of range", "POST", "/v2/models/digits_cnn/infer",
         json.dumps({"parameters": {"priority": -1},
                     "inputs": [{"name": "image", "datatype": "BYTES", "shape": [1],
                                 "data": ["x"]}]}).encode(), {}),
        ("binary size past the body", "POST", "/v2/models/digits_cnn/infer", head + png,
         {"Inference-Header-Content-Length": str(len(head)), **octet}),
        ("binary sizes that wrap", "POST", "/v2/models/digits_cnn/infer", wrapped + png[:8],
         {"Inference-Header-Content-Length": str(len(wrapped)), **octet}),
        ("header length past the body", "POST", "/v2/models/resnet18/infer", b"{}",
         {"Inference-Header-Content-Length": "999999", **octet}),
        ("too many BYTES items", "POST", "/v2/models/digits_cnn/infer",
         json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [33],
                                 "data": ["x"] * 33}]}).encode(), {}),
    ]


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.good = collections.Counter()   # (kind, status)
        self.bad = collections.Counter()    # (description, status)
        self.wrong = []                     # (kind, what)
        self.good_failed = []               # (kind, status, error)
        self.bad_accepted = []              # (description, status, body)
        self.latency = []
        self.reload_seconds = []

    def add_good(self, kind, status, ok_answer, what, seconds):
        with self.lock:
            self.good[(kind, status)] += 1
            self.latency.append(seconds)
            if status != 200:
                if len(self.good_failed) < 50:
                    self.good_failed.append((kind, status, what))
                self.good[("_failed", 0)] += 1
            elif not ok_answer:
                self.wrong.append((kind, what))


def one_good(conn, rng, refs, tally):
    pick = rng.random()
    if pick < 0.4:
        png, label = rng.choice(refs["digits"])
        kind = "digits_cnn PNG"
        t0 = time.monotonic()
        conn.request("POST", "/predictions/digits_cnn", png, {"Content-Type": "image/png"})
        r = conn.getresponse()
        body = r.read()
        ok, what = False, body[:200]
        if r.status == 200:
            scores = json.loads(body)
            top = int(max(scores, key=scores.get))
            ok, what = top == label, f"top {top}, PyTorch {label}"
    elif pick < 0.55:
        items = [rng.choice(refs["digits"]) for _ in range(8)]
        blob = bytes_elements([p for p, _ in items])
        head = json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [8],
                                       "parameters": {"binary_data_size": len(blob)}}],
                           "outputs": [{"name": "labels"}]}).encode()
        kind = "digits_cnn v2 BYTES x8"
        t0 = time.monotonic()
        conn.request("POST", "/v2/models/digits_cnn/infer", head + blob,
                     {"Inference-Header-Content-Length": str(len(head)),
                      "Content-Type": "application/octet-stream"})
        r = conn.getresponse()
        body = r.read()
        ok, what = False, body[:200]
        if r.status == 200:
            resp = Response(r.status, {k.lower(): v for k, v in r.getheaders()}, body)
            want = [label for _, label in items]
            try:
                _, out = parse_infer_response(resp)
                top = [int(out["labels"][i * 3]) for i in range(8)]
                ok, what = top == want, f"top {top}, PyTorch {want}"
            except (AssertionError, ValueError, KeyError, IndexError) as e:
                what = f"unreadable answer: {e}"
    else:
        model = rng.choice(["resnet18", "mobilenet_v3_small"])
        name = rng.choice(IMAGES)
        data, label, score = refs[(model, name)]
        kind = f"{model} image"
        t0 = time.monotonic()
        conn.request("POST", f"/predictions/{model}", data,
                     {"Content-Type": "application/octet-stream"})
        r = conn.getresponse()
        body = r.read()
        ok, what = False, body[:200]
        if r.status == 200:
            got = json.loads(body)
            top = max(got, key=got.get)
            ok = top == label and abs(got[top] - score) < 1e-4
            what = f"{name}: top {top} {got[top]:.6f}, PyTorch {label} {score:.6f}"
    tally.add_good(kind, r.status, ok, what, time.monotonic() - t0)


def one_bad(conn, rng, bads, tally):
    desc, method, path, body, headers = rng.choice(bads)
    conn.request(method, path, body, headers)
    r = conn.getresponse()
    text = r.read()
    with tally.lock:
        tally.bad[(desc, r.status)] += 1
        if not 400 <= r.status < 500 and len(tally.bad_accepted) < 50:
            tally.bad_accepted.append((desc, r.status, text[:200].decode("utf-8", "replace")))


def client(port, seed, refs, bads, tally, stop, bad_share):
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while not stop.is_set():
        try:
            if rng.random() < bad_share:
                one_bad(conn, rng, bads, tally)
            else:
                one_good(conn, rng, refs, tally)
        except (OSError, http.client.HTTPException) as e:
            # A connection the server closed (after an error answer): a new one.
            with tally.lock:
                tally.good[("_connection error " + type(e).__name__, 0)] += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        except (ValueError, KeyError, IndexError, AttributeError) as e:
            # A 200 whose body is not the answer's form: a wrong answer.
            with tally.lock:
                tally.wrong.append(("unreadable answer", repr(e)[:200]))
    conn.close()


def reload_loop(port, every, reloads, stop, tally):
    """Reloads one model after the other: POST .../load re-reads the store and
    replaces the instance (requests meanwhile wait for it). A reload starts
    `every` seconds after the previous one ended."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    k = 0
    while not stop.wait(every):
        model = MODELS[k % len(MODELS)]
        k += 1
        t0 = time.monotonic()
        conn.request("POST", f"/v2/repository/models/{model}/load", b"")
        r = conn.getresponse()
        r.read()
        with tally.lock:
            reloads[(model, r.status)] += 1
            tally.reload_seconds.append(time.monotonic() - t0)
    conn.close()


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "inferd"))
    ap.add_argument("--store", default=os.path.join(ROOT, "examples", "model-store"))
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--bad-share", type=float, default=0.25)
    ap.add_argument("--reload-every", type=float, default=3.0)
    ap.add_argument("--settle-fraction", type=float, default=0.2)
    ap.add_argument("--out", default="soak.json")
    args = ap.parse_args()

    refs = references(args.store)
    bads = bad_requests(refs)
    work = tempfile.mkdtemp(prefix="inferd-soak-")
    store = os.path.join(work, "store")
    os.makedirs(store)
    copy_store(args.store, store)
    server = InferdServer(store, args=["--drain-timeout", "10"], binary=args.bin, name="soak",
                          out_dir=work, ready_timeout=300).start()
    pid = server.pid
    tally, stop = Tally(), threading.Event()
    rss = {"start": rss_bytes(pid)}
    samples = []
    reloads = collections.Counter()
    threads = [threading.Thread(target=client,
                                args=(server.http, i, refs, bads, tally, stop, args.bad_share))
               for i in range(args.clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    duration = args.minutes * 60
    reloader = threading.Thread(target=reload_loop,
                                args=(server.management, args.reload_every, reloads, stop, tally))
    reloader.start()
    next_sample = start
    try:
        while time.monotonic() - start < duration and server.running():
            now = time.monotonic()
            if now >= next_sample:
                samples.append((round(now - start, 1), rss_bytes(pid)))
                if "settled" not in rss and now - start >= duration * args.settle_fraction:
                    rss["settled"] = samples[-1][1]
                next_sample += 5
            time.sleep(0.2)
    finally:
        stop.set()
        for t in threads + [reloader]:
            t.join()
        alive = server.running()
        rss["end"] = rss_bytes(pid) if alive else 0
        rss["max"] = max(s[1] for s in samples) if samples else 0
        rc = server.stop(timeout=12)
    elapsed = time.monotonic() - start

    good_total = sum(n for (k2, s), n in tally.good.items() if not k2.startswith("_"))
    bad_total = sum(tally.bad.values())
    lat = sorted(tally.latency)
    result = {
        "seconds": round(elapsed, 1), "clients": args.clients, "server_alive_at_end": alive,
        "server_exit_code": rc, "requests": good_total + bad_total,
        "good": {f"{k2} {s}": n for (k2, s), n in sorted(tally.good.items())},
        "bad": {f"{d} {s}": n for (d, s), n in sorted(tally.bad.items())},
        "wrong_answers": len(tally.wrong), "wrong_examples": tally.wrong[:20],
        "good_not_200": [list(map(str, x)) for x in tally.good_failed],
        "bad_not_4xx": tally.bad_accepted,
        "reloads": {f"{m} {s}": n for (m, s), n in sorted(reloads.items())},
        "reload_seconds_max": round(max(tally.reload_seconds), 1) if tally.reload_seconds else None,
        "rss_bytes": rss, "rss_samples": samples,
        "good_latency_ms_p50_p99": [round(lat[len(lat) // 2] * 1e3, 1),
                                    round(lat[int(len(lat) * 0.99)] * 1e3, 1)] if lat else None,
        "command": " ".join(sys.argv),
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print_table(result, tally, reloads)
    shutil.rmtree(work, ignore_errors=True)
    failed = (tally.wrong or tally.good_failed or tally.bad_accepted or not alive or rc != 0)
    return 1 if failed else 0


def print_table(result, tally, reloads):
    mib = lambda b: f"{b / 2**20:.0f} MiB"  # noqa: E731
    rss = result["rss_bytes"]
    by_status = collections.Counter()
    for (kind, s), n in tally.good.items():
        if not kind.startswith("_"):
            by_status[s] += n
    bad_status = collections.Counter()
    for (_, s), n in tally.bad.items():
        bad_status[s] += n
    drift = (rss["end"] - rss["settled"]) / rss["settled"] * 100 if rss.get("settled") else 0
    rows = [
        ("duration", f"{result['seconds']:.0f} s, {result['clients']} clients"),
        ("requests", str(result["requests"])),
        ("good requests by status", ", ".join(f"{s}: {n}" for s, n in sorted(by_status.items()))),
        ("wrong answers (200, not PyTorch's)", str(len(tally.wrong))),
        ("bad requests by status", ", ".join(f"{s}: {n}" for s, n in sorted(bad_status.items()))),
        ("bad requests not answered 4xx", str(len(tally.bad_accepted))),
        ("connection errors", str(sum(n for (k, _), n in tally.good.items()
                                      if k.startswith("_connection")))),
        ("reloads by status", ", ".join(f"{m} {s}: {n}" for (m, s), n in sorted(reloads.items()))
         + f" (each {result['reload_seconds_max']} s at most)"),
        ("RSS start / settled / end / max",
         f"{mib(rss['start'])} / {mib(rss.get('settled', 0))} / {mib(rss['end'])} / "
         f"{mib(rss['max'])} (end {drift:+.1f}% from settled)"),
        ("server after the run", f"alive: {result['server_alive_at_end']}, "
                                 f"exit code on SIGTERM: {result['server_exit_code']}"),
    ]
    print("| | |\n|---|---|")
    for k, v in rows:
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    sys.exit(main())
