"""TorchServe model archives (.mar, built by tools/make_mar.py as torch-model-archiver builds
them) served by the real binary: a custom BaseHandler archive answers exactly what its handler
answers when called directly (one at a time, and at c=8 with batching); a module-level handle()
archive; a default image_classifier archive runs natively (no handler process) and matches
TorchServe's own transform and mapping (top-1 equal, probabilities within 0.02); broken archives
are refused with the reason while the others serve; a handler that kills its process fails only
its request (500 with the reason), the model answers again, and repeated deaths quarantine it; a
hung handler is given up at its response_timeout. No wall-clock bounds are asserted."""

import concurrent.futures
import io
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import torch

from conftest import SOURCE_DIR, stop_and_check
from inferd_e2e import call, get, post, wait_until

HANDLERS = os.path.join(SOURCE_DIR, "tests", "e2e", "mar_handlers")
MAKE_MAR = os.path.join(SOURCE_DIR, "tools", "make_mar.py")
TS_DIR = os.path.join(SOURCE_DIR, "share", "inferd", "python")
LONG = {"X-Request-Timeout-Ms": "120000"}
GOOD = ["custom", "fn", "classifier"]
BROKEN = {
    "corrupt": "is not a readable zip file",
    "nohandler": "model.handler is missing",
    "escape": "leaves the archive's folder",
    "needs_pip": "inferd downloads nothing",
    "import_error": "No module named 'inferd_no_such_module'",
}


def make_mar(store, name, *args):
    r = subprocess.run([sys.executable, MAKE_MAR, "--model-name", name, "--export-path", str(store),
                        "--force", *map(str, args)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


class TinyClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 5, stride=4)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return self.fc(torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)) * 4


@pytest.fixture(scope="module")
def mar_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("mar-store")
    work = tmp_path_factory.mktemp("mar-work")
    torch.manual_seed(0)
    torch.jit.script(torch.nn.Linear(4, 3)).save(str(work / "linear.pt"))
    make_mar(store, "custom", "--serialized-file", work / "linear.pt",
             "--handler", os.path.join(HANDLERS, "custom_handler.py"))
    make_mar(store, "fn", "--handler", os.path.join(HANDLERS, "fn_handler.py"))
    torch.jit.script(TinyClassifier().eval()).save(str(work / "classifier.pt"))
    labels = {str(i): ["n%08d" % i, "class_%d" % i] for i in range(10)}
    (work / "index_to_name.json").write_text(json.dumps(labels))
    make_mar(store, "classifier", "--serialized-file", work / "classifier.pt",
             "--handler", "image_classifier", "--extra-files", work / "index_to_name.json")
    # Broken archives: each refused with its reason, the others serve.
    (store / "corrupt.mar").write_bytes(b"PK\x03\x04 not really a zip" * 10)
    make_mar(store, "nohandler", "--serialized-file", work / "linear.pt")
    make_mar(store, "escape", "--handler", os.path.join(HANDLERS, "fn_handler.py"),
             "--extra-entry", "../evil.py=" + os.path.join(HANDLERS, "fn_handler.py"))
    (work / "requirements.txt").write_text("inferd-no-such-package==1.0\n")
    make_mar(store, "needs_pip", "--handler", os.path.join(HANDLERS, "fn_handler.py"),
             "--requirements-file", work / "requirements.txt")
    make_mar(store, "import_error", "--handler", os.path.join(HANDLERS, "import_error_handler.py"))
    return store


@pytest.fixture(scope="module")
def mar_server(server_factory, mar_store, tmp_path_factory):
    old = os.environ.get("INFERD_MAR_CACHE")
    os.environ["INFERD_MAR_CACHE"] = str(tmp_path_factory.mktemp("mar-cache"))
    try:
        s = server_factory(mar_store, "mar", wait_ready=False)
    finally:  # the server took it; later tests' servers do not need it
        if old is None:
            del os.environ["INFERD_MAR_CACHE"]
        else:
            os.environ["INFERD_MAR_CACHE"] = old
    for m in GOOD:
        wait_until(lambda m=m: get(s.http, f"/v2/models/{m}/ready").status == 200, 180, f"{m} ready")

    def settled():
        return all(BROKEN[m].encode() in get(s.http, f"/v2/models/{m}").body for m in BROKEN)

    wait_until(settled, 180, "the broken archives reported")
    yield s
    stop_and_check(s)


def direct_handler(mar_path, rows):
    """The archive's handler called directly, as TorchServe calls it, on rows [{"body": ...}]."""
    code = (
        "import json, sys, zipfile, tempfile\n"
        f"sys.path.insert(0, {TS_DIR!r})\n"
        "d = tempfile.mkdtemp(); zipfile.ZipFile(sys.argv[1]).extractall(d); sys.path.insert(0, d)\n"
        "import torch; torch.set_num_threads(1)\n"
        "from ts.context import Context\n"
        "import custom_handler\n"
        "manifest = json.load(open(d + '/MAR-INF/MANIFEST.json'))\n"
        "ctx = Context('custom', d, manifest, 1, None, 'direct')\n"
        "h = custom_handler.CustomHandler(); h.initialize(ctx)\n"
        "out = []\n"
        "for row in json.loads(sys.argv[2]):\n"
        "    ctx.reset(1, ['application/json'])\n"
        "    out.append(h.handle([{'body': row}], ctx)[0])\n"
        "print(json.dumps(out))\n")
    r = subprocess.run([sys.executable, "-c", code, str(mar_path), json.dumps(rows)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def predict(port, model, body, content_type="application/json", headers=LONG):
    h = dict(headers)
    h["Content-Type"] = content_type
    return call(port, "POST", f"/predictions/{model}", body=body, headers=h)


def rows_for(n):
    rng = np.random.default_rng(7)
    return [{"x": [round(float(v), 3) for v in rng.normal(size=4)]} for _ in range(n)]


def without_batch(answer):
    return {k: v for k, v in answer.items() if k != "batch"}


def test_custom_handler_answers_as_called_directly(mar_server, mar_store):
    rows = rows_for(6)
    want = direct_handler(mar_store / "custom.mar", rows)
    for row, ref in zip(rows, want):
        r = predict(mar_server.http, "custom", json.dumps(row))
        assert r.status == 200, r.body
        assert r.headers["content-type"].startswith("application/json")
        assert json.loads(r.body) == ref


def test_handler_sets_its_response_status_and_headers(mar_server):
    r = predict(mar_server.http, "custom", json.dumps({"x": [1, 2, 3, 4], "created": True}))
    assert r.status == 201, r.body  # context.set_response_status(201, ...)
    assert r.headers["x-handler"] == "custom 0"  # context.set_response_header
    assert int(r.headers["content-length"]) == len(r.body)  # not the handler's "1"
    assert json.loads(r.body)["argmax"] in range(3)
    r = predict(mar_server.http, "custom", json.dumps({"x": [1, 2, 3, 4]}))
    assert r.status == 200 and "x-handler" not in r.headers, r.headers


def test_handler_errors_answer_with_their_status_and_the_worker_goes_on(mar_server):
    r = predict(mar_server.http, "custom", json.dumps({"x": [1, 2]}))
    assert r.status == 400 and b'needs \\"x\\"' in r.body, r.body  # PredictionException(.., 400)
    r = predict(mar_server.http, "custom", b"not json", content_type="application/json")
    assert r.status == 400, r.body
    r = predict(mar_server.http, "custom", json.dumps({"raise": True}))
    assert r.status == 500 and b"ValueError: asked to raise" in r.body, r.body
    assert predict(mar_server.http, "custom", json.dumps({"x": [1, 2, 3, 4]})).status == 200


def test_registered_with_batching_answers_as_called_directly_at_c8(mar_server, mar_store):
    r = post(mar_server.management, "/models?url=custom.mar&model_name=custom_b4&batch_size=4"
             "&max_batch_delay=50&initial_workers=2&response_timeout=120")
    assert r.status == 200, r.body
    described = json.loads(get(mar_server.management, "/models/custom_b4").body)[0]
    assert described["batchSize"] == 4 and described["runtime"] == "python"
    rows = rows_for(32)
    want = direct_handler(mar_store / "custom.mar", rows)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda row: predict(mar_server.http, "custom_b4", json.dumps(row)), rows))
    for r, ref in zip(got, want):
        assert r.status == 200, r.body
        answer = json.loads(r.body)
        assert without_batch(answer) == without_batch(ref)
        assert 1 <= answer["batch"] <= 4


def test_module_level_handle_function(mar_server):
    r = predict(mar_server.http, "fn", "hello", content_type="text/plain")
    assert r.status == 200, r.body
    assert r.body == b"fn:HELLO"
    assert r.headers["content-type"].startswith("text/plain")


def images():
    from PIL import Image
    rng = np.random.default_rng(3)
    out = []
    for size, fmt in [((320, 240), "JPEG"), ((200, 300), "PNG"), ((640, 480), "JPEG")]:
        w, h = size
        yy, xx = np.mgrid[0:h, 0:w]
        base = np.stack([xx / w, yy / h, (xx + yy) / (w + h)], axis=-1) * 255
        pixels = np.clip(base + rng.normal(0, 20, base.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(pixels).save(buf, format=fmt)
        out.append((buf.getvalue(), "image/" + fmt.lower()))
    return out


def test_image_classifier_runs_natively_and_matches_torchserve(mar_server, mar_store):
    from PIL import Image
    from torchvision import transforms
    described = json.loads(get(mar_server.management, "/models/classifier").body)[0]
    assert described["runtime"] == "torchscript"  # inferd's pipeline, no handler process
    with zipfile.ZipFile(mar_store / "classifier.mar") as z:
        model = torch.jit.load(io.BytesIO(z.read("classifier.pt")))
        mapping = {k: v[-1] for k, v in json.loads(z.read("index_to_name.json")).items()}
    transform = transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
    for data, content_type in images():
        x = transform(Image.open(io.BytesIO(data)).convert("RGB")).unsqueeze(0)
        with torch.no_grad():
            probs, classes = torch.topk(torch.softmax(model(x), dim=1), 5, dim=1)
        ref = {mapping[str(c)]: p for c, p in zip(classes[0].tolist(), probs[0].tolist())}
        r = predict(mar_server.http, "classifier", data, content_type=content_type)
        assert r.status == 200, r.body
        got = json.loads(r.body)
        assert next(iter(got)) == next(iter(ref)), (got, ref)  # top-1 equal
        for label, p in ref.items():
            if label in got:
                assert abs(got[label] - p) <= 0.02, (label, got, ref)
        assert len(got) == 5


def test_broken_archives_are_refused_with_the_reason(mar_server):
    for name, reason in BROKEN.items():
        body = get(mar_server.http, f"/v2/models/{name}").body.decode()
        assert reason in body, (name, body)
        r = predict(mar_server.http, name, "{}")
        assert r.status >= 400 and r.status != 500, (name, r.status, r.body)
    for m in GOOD:
        assert get(mar_server.http, f"/v2/models/{m}/ready").status == 200


def test_remote_url_is_refused(mar_server):
    r = post(mar_server.management, "/models?url=https://example.com/x.mar")
    assert r.status == 400 and b"downloads nothing" in r.body


def test_dying_handler_fails_its_request_only_and_comes_back(mar_server):
    r = post(mar_server.management, "/models?url=custom.mar&model_name=custom_die")
    assert r.status == 200, r.body
    r = predict(mar_server.http, "custom_die", json.dumps({"die": True}))
    assert r.status == 500 and b"exited with code 3" in r.body, r.body
    assert predict(mar_server.http, "fn", "x", content_type="text/plain").status == 200
    ok = predict(mar_server.http, "custom_die", json.dumps({"x": [1, 2, 3, 4]}))
    assert ok.status == 200, ok.body  # a new process took the batch
    assert get(mar_server.http, "/v2/health/live").status == 200
    # Repeated deaths: QUARANTINED with the reason, the other models serve.
    for _ in range(4):
        r = predict(mar_server.http, "custom_die", json.dumps({"die": True}))
        assert r.status in (500, 503), r.body
    # The fifth death's 500 may reach the client a moment before the model's state
    # changes (the batch is answered first): wait for it, briefly.
    def out_of_ready():
        d = json.loads(get(mar_server.management, "/models/custom_die").body)[0]
        return d if d["status"] != "READY" else None

    described = wait_until(out_of_ready, 10, "custom_die to leave READY")
    assert described["status"] == "QUARANTINED" and "failed 5 times" in described["reason"]
    r = predict(mar_server.http, "custom_die", json.dumps({"x": [1, 2, 3, 4]}))
    assert r.status == 503 and b"QUARANTINED" in r.body
    assert predict(mar_server.http, "custom", json.dumps({"x": [1, 2, 3, 4]})).status == 200
    # Loaded again through the management API, it serves.
    assert post(mar_server.management, "/models?url=custom.mar&model_name=custom_die").status == 200
    assert predict(mar_server.http, "custom_die", json.dumps({"x": [1, 2, 3, 4]})).status == 200


def test_hung_handler_is_given_up_at_its_response_timeout(mar_server):
    r = post(mar_server.management,
             "/models?url=custom.mar&model_name=custom_hang&response_timeout=10")
    assert r.status == 200, r.body
    r = predict(mar_server.http, "custom_hang", json.dumps({"hang": True}))
    assert r.status in (500, 504), r.body
    assert predict(mar_server.http, "fn", "x", content_type="text/plain").status == 200
    ok = predict(mar_server.http, "custom_hang", json.dumps({"x": [1, 2, 3, 4]}))
    assert ok.status == 200, ok.body
