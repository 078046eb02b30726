"""`inferd bench` against the real server: a short sweep completes, its request
counts equal the server's own counts in /metrics, and a server that answers
errors shows up as failures (by status), never as fast successes."""

import json
import os
import subprocess

import pytest
import torch

from conftest import stop_and_check
from inferd_e2e import binary_request, get, json_request, metric_sum_model, parse_metrics

SHORT = ["--duration", "0.4", "--warmup", "0.2", "--windows", "1", "--max-windows", "1",
         "--no-progress"]


@pytest.fixture(scope="module")
def bench_server(server_factory, main_store):
    """A server of its own, so that its counters hold only this module's requests."""
    s = server_factory(main_store, "bench")
    yield s
    stop_and_check(s)


def run_bench(inferd_bin, port, tmp_path, model, body_name, body, *args, url=None):
    body_path = tmp_path / body_name
    body_path.write_bytes(body)
    out = tmp_path / f"{model}-{body_name}"
    cmd = [inferd_bin, "bench", "--url", url or f"http://127.0.0.1:{port}", "--model", model,
           "--input", str(body_path), "--json", f"{out}.json", "--csv", f"{out}.csv",
           "--plot", f"{out}.svg", *SHORT, *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{' '.join(cmd)} -> {r.returncode}\n{r.stdout}\n{r.stderr}"
    with open(f"{out}.json") as f:
        report = json.load(f)
    return report, r.stdout, out


def served(server, model):
    """Requests the server counted for `model`, all codes, and by code."""
    samples = parse_metrics(get(server.metrics, "/metrics").body.decode())
    total = metric_sum_model(samples, "inferd_requests_total", model)
    by_code = {}
    for name, labels, value in samples:
        if name == "inferd_requests_total" and labels.get("model", "").split(":")[0] == model:
            by_code[labels.get("code")] = by_code.get(labels.get("code"), 0) + value
    return total, by_code


def test_closed_loop_sweep_counts_match_metrics(inferd_bin, bench_server, tmp_path):
    before, _ = served(bench_server, "identity_fp32")
    body = json.dumps(json_request([("input", torch.arange(8, dtype=torch.float32).reshape(1, 8))])).encode()
    report, stdout, out = run_bench(inferd_bin, bench_server.http, tmp_path, "identity_fp32",
                                    "req.json", body, "--form", "v2json", "--concurrency", "1,2",
                                    "--metrics-url",
                                    f"http://127.0.0.1:{bench_server.metrics}/metrics")
    steps = report["steps"]
    assert [s["label"] for s in steps] == ["c=1", "c=2"]
    for s in steps:
        assert s["requests"] > 0 and s["failures"] == 0, s
        assert s["successes"] == s["requests"]
        lat = s["latency_ms"]
        assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    after, by_code = served(bench_server, "identity_fp32")
    sent = sum(s["sent_total"] for s in steps)
    assert after - before == sent, f"bench sent {sent}, the server counted {after - before}"
    assert set(by_code) == {"OK"}, by_code
    # --metrics-url: the server's own count per step, and its time per request.
    for s in steps:
        server = s["server"]
        assert server["requests"] == s["sent_total"], s
        assert 0 < server["compute_us"] <= server["request_us"], server
        assert server["minor_faults_per_request"] >= 0 and server["major_faults_per_request"] >= 0
    # The table and the files.
    assert "c=1" in stdout and "c=2" in stdout and "p99_ms" in stdout
    assert "page faults per request" in stdout
    with open(f"{out}.csv") as f:
        assert len(f.read().strip().splitlines()) == 3
    with open(f"{out}.svg") as f:
        svg = f.read()
    assert "throughput (requests/s)" in svg and "latency (ms)" in svg and ">c=2<" in svg


def test_errors_are_failures_not_fast_successes(inferd_bin, bench_server, tmp_path):
    before, before_codes = served(bench_server, "thrower")
    # A negative input makes `thrower` raise: every request answers 500.
    report, stdout, _ = run_bench(inferd_bin, bench_server.http, tmp_path, "thrower", "neg.json",
                                  b"[[-1.0, 2.0]]", "--concurrency", "2")
    (s,) = report["steps"]
    assert s["requests"] > 0
    assert s["successes"] == 0 and s["requests_per_s"] == 0, s
    assert s["failures"] == s["requests"]
    assert s["failures_by_status"] == {"500": s["failures"]}, s
    assert "500:" in stdout
    after, codes = served(bench_server, "thrower")
    assert after - before == s["sent_total"]
    assert codes.get("INTERNAL", 0) - before_codes.get("INTERNAL", 0) == s["sent_total"], codes


def test_unknown_model_is_404_failures(inferd_bin, bench_server, tmp_path):
    report, _, _ = run_bench(inferd_bin, bench_server.http, tmp_path, "no_such_model", "x.json",
                             b"[[1.0]]", "--concurrency", "1")
    (s,) = report["steps"]
    assert s["requests"] > 0 and s["successes"] == 0
    assert s["failures_by_status"] == {"404": s["requests"]}, s


def test_open_loop_v2_binary(inferd_bin, bench_server, tmp_path):
    before, _ = served(bench_server, "identity_fp32")
    # The bench finds the JSON header's length itself; a wrong one would be 400s.
    body, _ = binary_request([("input", torch.ones(1, 16, dtype=torch.float32))])
    report, _, _ = run_bench(inferd_bin, bench_server.http, tmp_path, "identity_fp32", "req.bin",
                             body, "--form", "v2binary", "--rate", "40,80",
                             "--arrivals", "poisson")
    assert [s["label"] for s in report["steps"]] == ["r=40", "r=80"]
    for s in report["steps"]:
        assert s["requests"] > 0 and s["failures"] == 0, s
    after, _ = served(bench_server, "identity_fp32")
    assert after - before == sum(s["sent_total"] for s in report["steps"])


def test_grpc_protocol(inferd_bin, bench_server, tmp_path):
    """--protocol grpc: the v2 binary body's tensors as raw_input_contents; the
    server counts every call under protocol="grpc"; errors are failures."""
    def grpc_calls(code):
        samples = parse_metrics(get(bench_server.metrics, "/metrics").body.decode())
        return metric_sum_model(samples, "inferd_requests_total", "identity_fp32",
                                protocol="grpc", code=code)

    ok0, bad0 = grpc_calls("OK"), grpc_calls("INVALID_ARGUMENT")
    body, _ = binary_request([("input", torch.ones(1, 16, dtype=torch.float32))])
    url = f"grpc://127.0.0.1:{bench_server.grpc}"
    report, stdout, _ = run_bench(inferd_bin, None, tmp_path, "identity_fp32", "req.bin", body,
                                  "--protocol", "grpc", "--form", "v2binary",
                                  "--concurrency", "1,4", url=url)
    assert "gRPC" in stdout and "ModelInfer" in stdout, stdout
    for s in report["steps"]:
        assert s["requests"] > 0 and s["failures"] == 0, s
    assert grpc_calls("OK") - ok0 == sum(s["sent_total"] for s in report["steps"])
    # A datatype the model does not take: every call INVALID_ARGUMENT, reported as 400.
    bad, _ = binary_request([("input", torch.ones(1, 16, dtype=torch.float64))])
    report, _, _ = run_bench(inferd_bin, None, tmp_path, "identity_fp32", "bad.bin", bad,
                             "--protocol", "grpc", "--form", "v2binary", "--concurrency", "1",
                             url=url)
    (s,) = report["steps"]
    assert s["successes"] == 0 and s["failures_by_status"] == {"400": s["requests"]}, s
    assert grpc_calls("INVALID_ARGUMENT") - bad0 == s["sent_total"]
