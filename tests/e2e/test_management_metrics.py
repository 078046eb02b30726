"""Management port (list, describe, unload, load) and metrics port (request
counts by model and code that move with the requests sent)."""

import pytest
import torch

from conftest import copy_model, stop_and_check
from inferd_e2e import (assert_same, call, get, infer_json, metric_sum_model, parse_infer_response,
                        parse_metrics, post, wait_until)


def strings_in(doc):
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from strings_in(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from strings_in(v)


@pytest.fixture(scope="module")
def mgmt_server(server_factory, test_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("mgmt-store")
    copy_model(test_store, "identity_fp32", store)
    copy_model(test_store, "tiny_cnn", store)
    s = server_factory(store, "management")
    yield s
    stop_and_check(s)


def identity_ok(port, model="identity_fp32"):
    x = torch.tensor([[0.5, 1.5, -2.5]])
    doc, out = parse_infer_response(infer_json(port, model, [("input", x)]))
    assert_same(out["output"], x)


def test_list_models(mgmt_server):
    r = get(mgmt_server.management, "/models")
    assert r.status == 200, r
    names = set(strings_in(r.json()))
    assert {"identity_fp32", "tiny_cnn"} <= names, f"GET /models should list both models: {r}"


def test_describe_model(mgmt_server):
    r = get(mgmt_server.management, "/models/tiny_cnn")
    assert r.status == 200, r
    assert "tiny_cnn" in set(strings_in(r.json())), r
    r = get(mgmt_server.management, "/models/nope")
    assert r.status == 404, r
    assert "nope" in r.error(), r


def test_unload_and_load(mgmt_server):
    s = mgmt_server
    identity_ok(s.http)
    r = call(s.management, "DELETE", "/models/identity_fp32")
    assert r.status == 200, f"DELETE /models/identity_fp32: {r}"
    r = infer_json(s.http, "identity_fp32", [("input", torch.ones(1, 2))])
    assert r.status in (503, 404), f"infer on an unloaded model: {r}"
    assert "identity_fp32" in r.error(), r
    r = get(s.http, "/v2/models/identity_fp32/ready")
    assert r.status != 200, f"an unloaded model is not ready: {r}"
    # The other model still serves.
    img = torch.zeros(1, 1, 8, 8)
    assert infer_json(s.http, "tiny_cnn", [("image", img)]).status == 200
    # Load it again.
    r = post(s.management, "/models?url=identity_fp32")
    assert r.status in (200, 201), f"POST /models?url=identity_fp32: {r}"
    wait_until(lambda: get(s.http, "/v2/models/identity_fp32/ready").status == 200, 30,
               "identity_fp32 ready again")
    identity_ok(s.http)
    assert get(s.http, "/v2/health/ready").status == 200


def test_management_errors(mgmt_server):
    s = mgmt_server
    r = call(s.management, "DELETE", "/models/nope")
    assert r.status == 404, r
    assert "nope" in r.error(), r
    r = post(s.management, "/models?url=not_in_store")
    assert r.status == 404, r
    assert "not_in_store" in r.error(), r
    identity_ok(s.http)


def test_ports_are_separate(mgmt_server):
    """Management routes are not on the inference port, and the reverse."""
    s = mgmt_server
    assert get(s.http, "/models").status == 404
    assert get(s.management, "/v2/models/tiny_cnn").status == 404
    assert get(s.metrics, "/v2/health/live").status == 404


# --------------------------------------------------------------- metrics

def scrape(server):
    r = get(server.metrics, "/metrics")
    assert r.status == 200, r
    assert r.headers.get("content-type", "").startswith("text/plain"), r.headers
    return parse_metrics(r.body.decode())


def test_request_counts_move(main_server):
    s = main_server
    before = scrape(s)
    ok0 = metric_sum_model(before, "inferd_requests_total", "tiny_cnn", code="OK")
    bad0 = metric_sum_model(before, "inferd_requests_total", "tiny_cnn", code="INVALID_ARGUMENT")
    img = torch.rand(2, 1, 8, 8)
    for _ in range(3):
        assert infer_json(s.http, "tiny_cnn", [("image", img)]).status == 200
    for _ in range(2):
        assert infer_json(s.http, "tiny_cnn", [("image", torch.rand(2, 1, 7, 8))]).status == 400

    def moved():
        after = scrape(s)
        ok = metric_sum_model(after, "inferd_requests_total", "tiny_cnn", code="OK") - ok0
        bad = metric_sum_model(after, "inferd_requests_total", "tiny_cnn", code="INVALID_ARGUMENT") - bad0
        return (ok, bad) == (3, 2) and after

    try:
        after = wait_until(moved, 5, "inferd_requests_total to count 3 x OK and 2 x INVALID_ARGUMENT")
    except AssertionError:
        lines = [ln for ln in get(s.metrics, "/metrics").body.decode().splitlines()
                 if "inferd_requests_total" in ln]
        raise AssertionError("inferd_requests_total{model=tiny_cnn} did not move by 3 (OK) and 2 "
                             f"(INVALID_ARGUMENT) from {ok0}/{bad0}:\n" + "\n".join(lines))
    # Latency histograms exist for the model.
    hist = [(n, l) for n, l, _ in after
            if n.endswith("_bucket") and "le" in l and l.get("model", "").startswith("tiny_cnn")]
    assert hist, "no histogram with a model label for tiny_cnn in /metrics"
    for part in ("queue", "compute"):
        assert any(part in n for n, _ in hist), \
            f"no {part} time histogram for tiny_cnn: {sorted({n for n, _ in hist})}"


def test_metrics_text_is_prometheus(main_server):
    r = get(main_server.metrics, "/metrics")
    text = r.body.decode()
    assert "# TYPE inferd_requests_total counter" in text, text[:2000]
    for line in text.splitlines():
        if line.startswith("# TYPE"):
            assert line.split()[3] in ("counter", "gauge", "histogram", "summary", "untyped"), line


def test_v2_repository_extension(mgmt_server):
    """POST /v2/repository/index lists the models with their state; unload and
    load through /v2/repository/models/{m}/unload|load."""
    s = mgmt_server
    r = post(s.management, "/v2/repository/index", {})
    assert r.status == 200, r
    index = {m["name"]: m for m in r.json()}
    assert index["tiny_cnn"]["state"] == "READY", index
    r = post(s.management, "/v2/repository/models/tiny_cnn/unload", {})
    assert r.status == 200, r
    r = infer_json(s.http, "tiny_cnn", [("image", torch.zeros(1, 1, 8, 8))])
    assert r.status in (503, 404) and "tiny_cnn" in r.error(), r
    index = {m["name"]: m for m in post(s.management, "/v2/repository/index", {}).json()}
    assert index["tiny_cnn"]["state"] != "READY", index
    r = post(s.management, "/v2/repository/models/tiny_cnn/load", {})
    assert r.status == 200, r
    r = infer_json(s.http, "tiny_cnn", [("image", torch.zeros(1, 1, 8, 8))])
    assert r.status == 200, r
    r = post(s.management, "/v2/repository/index", {"ready": True})
    assert {m["name"] for m in r.json()} >= {"tiny_cnn", "identity_fp32"}, r
