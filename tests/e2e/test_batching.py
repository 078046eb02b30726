"""Dynamic batching and admission control through the real server (issue 4):
concurrent requests form batches larger than 1 and each answer is its own
input's answer; a bounded queue sheds load with 429 + Retry-After; SIGTERM
under load drains: every 200 is correct, refusals are 503, exit code 0."""

import http.client
import json
import threading
import time

import numpy as np
import pytest
import torch

from conftest import copy_model, load_reference, stop_and_check
from inferd_e2e import (assert_same, get, infer_json, metric_sum_model, parse_infer_response,
                        parse_metrics, post, wait_until)

BATCHING = "dynamic_batching: {max_queue_delay_us: 20000, calibrate: false}\n"  # formation as configured
SLOW_ITERATIONS = 150  # about 100 ms of matrix products per request


def with_config(text, **keys):
    """Replaces top-level `key: value` lines of a config (adds missing ones)."""
    lines = text.splitlines()
    for key, value in keys.items():
        for i, line in enumerate(lines):
            if line.startswith(f"{key}:"):
                lines[i] = f"{key}: {value}"
                break
        else:
            lines.insert(1, f"{key}: {value}")
    return "\n".join(lines) + "\n"


def read_config(store, model):
    with open(store / model / "config.yaml") as f:
        return f.read()


@pytest.fixture(scope="module")
def batch_store(test_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("batch-store")
    copy_model(test_store, "identity_fp32", store, "batched_identity",
               config=with_config(read_config(test_store, "identity_fp32"), max_batch_size=8)
               + BATCHING)
    # The slow models' deadlines are stated (120 s): what these tests check is
    # batching, queue limits and the drain, not how fast a loaded machine runs
    # a queue of ~100 ms forwards (the default 5 s passed under ASan on one core).
    copy_model(test_store, "slow", store, "batched_slow",
               config=with_config(read_config(test_store, "slow"), max_batch_size=8,
                                  request_timeout_ms=120000) + BATCHING)
    copy_model(test_store, "tiny_cnn", store, "batched_cnn",
               config=with_config(read_config(test_store, "tiny_cnn"), max_batch_size=8) + BATCHING)
    copy_model(test_store, "slow", store, "small_queue",
               config=with_config(read_config(test_store, "slow"), max_batch_size=1,
                                  max_queue_size=4, request_timeout_ms=120000))
    padded = read_config(test_store, "identity_fp32").replace(
        "{name: input, datatype: FP32, shape: [-1]}",
        "{name: input, datatype: FP32, shape: [-1], pad_value: 0}")
    assert "pad_value" in padded
    copy_model(test_store, "identity_fp32", store, "padded_identity",
               config=with_config(padded, max_batch_size=8) + BATCHING)
    copy_model(test_store, "two_io", store, "batched_two_io",
               config=with_config(read_config(test_store, "two_io"), max_batch_size=8) + BATCHING)
    copy_model(test_store, "slow", store, "deadline_slow",
               config=with_config(read_config(test_store, "slow"), max_batch_size=1,
                                  max_queue_size=64, request_timeout_ms=60000))
    return store


@pytest.fixture(scope="module")
def batch_server(server_factory, batch_store):
    s = server_factory(batch_store, "batching")
    yield s
    stop_and_check(s)


def run_concurrently(n, fn):
    """Calls fn(i) from n threads released together; returns the results (or exceptions)."""
    barrier = threading.Barrier(n)
    results = [None] * n

    def worker(i):
        barrier.wait()
        try:
            results[i] = fn(i)
        except Exception as e:  # noqa: BLE001 - reported by the caller
            results[i] = e

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


def run_behind_busy_executors(server, n, fn):
    """Runs fn(0..n-1) concurrently while two ~100 ms requests keep both
    executors busy, so the n requests queue and form batches: the scheduler
    dispatches at once while an executor is idle, and batches only behind busy
    ones. Returns fn's results (or exceptions)."""
    busy = {"inputs": [{"name": "iterations", "datatype": "INT64", "shape": [1, 1],
                        "data": [SLOW_ITERATIONS]}]}

    def fire(i):
        if i < 2:
            return post(server.http, "/v2/models/deadline_slow/infer", busy)
        time.sleep(0.03)  # the busy requests reach the executors first
        return fn(i - 2)

    results = run_concurrently(n + 2, fire)
    assert all(not isinstance(r, Exception) and r.status == 200 for r in results[:2]), results[:2]
    return results[2:]


def queue_depth(server, model):
    samples = parse_metrics(get(server.metrics, "/metrics").body.decode())
    return metric_sum_model(samples, "inferd_queue_depth", model)


def batch_stats(server, model):
    samples = parse_metrics(get(server.metrics, "/metrics").body.decode())
    count = metric_sum_model(samples, "inferd_batch_size_count", model)
    total = metric_sum_model(samples, "inferd_batch_size_sum", model)
    return count, total


def test_concurrent_requests_form_batches(batch_server, batch_store):
    """32 concurrent requests to a model with max_batch_size 8 run in batches
    larger than 1. The model costs ~20 ms a call whatever the batch size (slow),
    so the executors are busy and requests queue behind them: batching waits only
    while no executor is idle (a model of microseconds would rightly run alone)."""
    s = batch_server
    iterations = 30
    ref = slow_reference(batch_store, "batched_slow", iterations)
    count0, sum0 = batch_stats(s, "batched_slow")
    body = {"inputs": [{"name": "iterations", "datatype": "INT64", "shape": [1, 1],
                        "data": [iterations]}]}
    results = run_concurrently(32, lambda i: post(s.http, "/v2/models/batched_slow/infer", body))
    for i, r in enumerate(results):
        assert not isinstance(r, Exception), f"request {i}: {r!r}"
        doc, out = parse_infer_response(r)
        assert_same(out["checksum"], ref, rtol=1e-4, what=f"request {i}")
    count, total = batch_stats(s, "batched_slow")
    batches, items = count - count0, total - sum0
    assert items == 32, f"inferd_batch_size_sum moved by {items}, expected the 32 items sent"
    assert batches < 32, (f"32 concurrent requests with max_batch_size 8 and a 20 ms delay ran in "
                          f"{batches} batches: none larger than 1")
    print(f"\nbatched_slow: 32 requests in {batches:.0f} batches "
          f"(mean batch {items / batches:.2f})")


def test_batched_answers_equal_unbatched(batch_server, batch_store):
    s = batch_server
    model = load_reference(batch_store, "batched_cnn")
    rng = np.random.default_rng(2)
    imgs = [torch.from_numpy(rng.random((1, 1, 8, 8), dtype=np.float32)) for _ in range(32)]
    with torch.inference_mode():
        refs = [model(x) for x in imgs]
    count0, _ = batch_stats(s, "batched_cnn")
    results = run_behind_busy_executors(
        s, 32, lambda i: infer_json(s.http, "batched_cnn", [("image", imgs[i])]))
    for i, r in enumerate(results):
        assert not isinstance(r, Exception), f"request {i}: {r!r}"
        doc, out = parse_infer_response(r)
        assert_same(out["logits"], refs[i], what=f"request {i} logits vs its unbatched answer")
    count, _ = batch_stats(s, "batched_cnn")
    assert count - count0 < 32, "no batch larger than 1 formed for batched_cnn"


def test_variable_shapes_are_grouped(batch_server):
    """Requests whose variable dim differs (no pad_value) still get their own answer."""
    s = batch_server
    rng = np.random.default_rng(3)
    xs = [torch.from_numpy(rng.normal(size=(1, 3 + i % 4)).astype(np.float32)) for i in range(24)]
    results = run_behind_busy_executors(
        s, 24, lambda i: infer_json(s.http, "batched_identity", [("input", xs[i])]))
    for i, r in enumerate(results):
        assert not isinstance(r, Exception), f"request {i}: {r!r}"
        doc, out = parse_infer_response(r)
        assert_same(out["output"], xs[i], rtol=0, what=f"request {i} (shape {tuple(xs[i].shape)})")


def test_padded_batches_are_cut_back(batch_server):
    """With pad_value, requests of different lengths share a batch; each
    answer is cut back to its own length."""
    s = batch_server
    count0, sum0 = batch_stats(s, "padded_identity")
    rng = np.random.default_rng(4)
    xs = [torch.from_numpy(rng.normal(size=(1, 2 + i % 7)).astype(np.float32)) + 5 for i in range(32)]
    results = run_behind_busy_executors(
        s, 32, lambda i: infer_json(s.http, "padded_identity", [("input", xs[i])]))
    for i, r in enumerate(results):
        assert not isinstance(r, Exception), f"request {i}: {r!r}"
        doc, out = parse_infer_response(r)
        assert_same(out["output"], xs[i], rtol=0, what=f"request {i} (length {xs[i].shape[1]})")
    count, total = batch_stats(s, "padded_identity")
    assert total - sum0 == 32 and count - count0 < 32, \
        f"padded_identity: {total - sum0} items in {count - count0} batches: none larger than 1"


def test_multi_item_requests_share_batches(batch_server, batch_store):
    """Requests of 1..4 items each, two inputs and two outputs, batched together:
    every answer holds exactly its own items."""
    s = batch_server
    model = load_reference(batch_store, "batched_two_io")
    rng = np.random.default_rng(5)
    inputs = []
    for i in range(24):
        n = 1 + i % 4
        inputs.append([("a", torch.from_numpy(rng.normal(size=(n, 3, 4)).astype(np.float32))),
                       ("b", torch.from_numpy(rng.integers(-99, 99, size=(n, 2))))])
    count0, sum0 = batch_stats(s, "batched_two_io")
    results = run_behind_busy_executors(
        s, 24, lambda i: infer_json(s.http, "batched_two_io", inputs[i]))
    for i, r in enumerate(results):
        assert not isinstance(r, Exception), f"request {i}: {r!r}"
        doc, out = parse_infer_response(r)
        with torch.inference_mode():
            ra, rb = model(inputs[i][0][1], inputs[i][1][1])
        assert_same(out["a_doubled"], ra, what=f"request {i} a_doubled")
        assert_same(out["b_plus_one"], rb, what=f"request {i} b_plus_one")
    count, total = batch_stats(s, "batched_two_io")
    items = sum(inp[0][1].shape[0] for inp in inputs)
    assert total - sum0 == items, f"inferd_batch_size_sum moved by {total - sum0}, sent {items} items"
    assert count - count0 < 24, "no batch of several requests formed"


def test_deadline_in_queue_answers_504(batch_server, batch_store):
    """A request still queued at its v2 `timeout` (microseconds) answers 504
    without running; the ones before it still answer 200."""
    s = batch_server
    ref = slow_reference(batch_store, "deadline_slow", SLOW_ITERATIONS)
    body = lambda it, **p: {"inputs": [{"name": "iterations", "datatype": "INT64", "shape": [1, 1],
                                        "data": [it]}], **({"parameters": p} if p else {})}
    samples = parse_metrics(get(s.metrics, "/metrics").body.decode())
    dropped0 = metric_sum_model(samples, "inferd_rejected_total", "deadline_slow", reason="deadline")

    def fire(i):
        if i < 8:
            return post(s.http, "/v2/models/deadline_slow/infer", body(SLOW_ITERATIONS))
        wait_until(lambda: queue_depth(s, "deadline_slow") >= 3, 30, "long requests queued")
        return post(s.http, "/v2/models/deadline_slow/infer", body(1, timeout=20000))

    results = run_concurrently(9, fire)
    for i, r in enumerate(results[:8]):
        assert not isinstance(r, Exception), f"request {i}: {r!r}"
        doc, out = parse_infer_response(r)
        assert_same(out["checksum"], ref, rtol=1e-4, what=f"request {i}")
    r = results[8]
    assert not isinstance(r, Exception), repr(r)
    assert r.status == 504, f"a 20 ms deadline behind 3+ queued ~100 ms requests: expected 504, got {r}"
    assert "deadline_slow" in r.error() or "deadline" in r.error() or "waited" in r.error(), r
    samples = parse_metrics(get(s.metrics, "/metrics").body.decode())
    dropped = metric_sum_model(samples, "inferd_rejected_total", "deadline_slow", reason="deadline")
    assert dropped - dropped0 == 1, f"inferd_rejected_total{{reason=deadline}} moved by {dropped - dropped0}"


def test_torchserve_timeout_header_answers_504(batch_server, batch_store):
    """The TorchServe API's per-request deadline, header X-Request-Timeout-Ms: a
    request still queued past it answers 504; a malformed value answers 400."""
    s = batch_server
    bad = post(s.http, "/predictions/deadline_slow", [1], headers={"X-Request-Timeout-Ms": "soon"})
    assert bad.status == 400, bad
    assert "X-Request-Timeout-Ms" in bad.error(), bad

    def fire(i):
        if i < 6:
            return post(s.http, "/predictions/deadline_slow", [SLOW_ITERATIONS])
        wait_until(lambda: queue_depth(s, "deadline_slow") >= 3, 30, "long requests queued")
        return post(s.http, "/predictions/deadline_slow", [1], headers={"X-Request-Timeout-Ms": "20"})

    results = run_concurrently(7, fire)
    for i, r in enumerate(results[:6]):
        assert not isinstance(r, Exception) and r.status == 200, f"request {i}: {r!r}"
    r = results[6]
    assert not isinstance(r, Exception), repr(r)
    assert r.status == 504, f"a 20 ms deadline behind 3+ queued ~100 ms requests: expected 504, got {r}"


def test_priority_overtakes_queued_requests(batch_server, batch_store):
    """v2 `priority` (1 first, then the default 0, then 2, 3...): a default-priority
    request sent once 3+ priority-5 ones are queued runs before at least 2 of them."""
    s = batch_server
    ref = slow_reference(batch_store, "deadline_slow", SLOW_ITERATIONS)
    LOW = 10
    done, sent = {}, {}
    t0 = time.monotonic()

    def fire(i):
        if i == LOW:
            seen = []
            try:
                wait_until(lambda: seen.append(queue_depth(s, "deadline_slow")) or seen[-1] >= 3, 30,
                           "low-priority requests queued")
            except AssertionError as e:
                raise AssertionError(f"{e}; depths seen {seen[:20]}...; done {sorted(done.items())}")
        sent[i] = time.monotonic() - t0
        params = {"priority": 5} if i < LOW else {}
        body = {"inputs": [{"name": "iterations", "datatype": "INT64", "shape": [1, 1],
                            "data": [SLOW_ITERATIONS]}], "parameters": params}
        r = post(s.http, "/v2/models/deadline_slow/infer", body)
        done[i] = time.monotonic() - t0
        return r

    results = run_concurrently(LOW + 1, fire)
    for i, r in enumerate(results):
        assert not isinstance(r, Exception), f"request {i}: {r!r}"
        doc, out = parse_infer_response(r)
        assert_same(out["checksum"], ref, rtol=1e-4, what=f"request {i}")
    after = sum(1 for i in range(LOW) if done[i] > done[LOW])
    assert after >= 2, (f"the default-priority request finished after {LOW - after} of the {LOW} "
                        f"priority-5 ones (3+ were queued when it came): it did not overtake them; "
                        f"sent at {sorted(sent.items())}, done at {sorted(done.items())}")


def test_client_gone_before_compute_is_dropped(batch_server, batch_store):
    """A queued request whose client closed its connection is dropped before
    compute (counted as cancelled); the others still answer."""
    import socket
    s = batch_server
    ref = slow_reference(batch_store, "deadline_slow", SLOW_ITERATIONS)
    samples = parse_metrics(get(s.metrics, "/metrics").body.decode())
    cancelled0 = metric_sum_model(samples, "inferd_rejected_total", "deadline_slow",
                                  reason="cancelled")
    long_body = {"inputs": [{"name": "iterations", "datatype": "INT64", "shape": [1, 1],
                             "data": [SLOW_ITERATIONS]}]}

    def fire(i):
        if i < 10:
            return post(s.http, "/v2/models/deadline_slow/infer", long_body)
        # 5+ queued ahead: about 250 ms before this one could start.
        wait_until(lambda: queue_depth(s, "deadline_slow") >= 5, 30, "long requests queued")
        body = json.dumps({"inputs": [{"name": "iterations", "datatype": "INT64", "shape": [1, 1],
                                       "data": [2]}]}).encode()
        with socket.create_connection(("127.0.0.1", s.http), timeout=10) as sock:
            sock.sendall(b"POST /v2/models/deadline_slow/infer HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: application/json\r\nContent-Length: " +
                         str(len(body)).encode() + b"\r\n\r\n" + body)
            time.sleep(0.1)  # read and queued by the server, then the client goes away
        return "closed"

    results = run_concurrently(11, fire)
    for i, r in enumerate(results[:10]):
        assert not isinstance(r, Exception), f"request {i}: {r!r}"
        doc, out = parse_infer_response(r)
        assert_same(out["checksum"], ref, rtol=1e-4, what=f"request {i}")
    assert results[10] == "closed", repr(results[10])

    def cancelled():
        samples = parse_metrics(get(s.metrics, "/metrics").body.decode())
        return metric_sum_model(samples, "inferd_rejected_total", "deadline_slow",
                                reason="cancelled") - cancelled0

    try:
        wait_until(lambda: cancelled() == 1, 10, "inferd_rejected_total{reason=cancelled} + 1")
    except AssertionError:
        raise AssertionError(f"a queued request whose client went away was not dropped as "
                             f"cancelled (count moved by {cancelled()})")
    assert get(s.http, "/v2/health/ready").status == 200


def slow_reference(store, model, iterations):
    with torch.inference_mode():
        return load_reference(store, model)(torch.tensor([[iterations]]))


def slow_request(port, iterations, conn=None):
    body = {"inputs": [{"name": "iterations", "datatype": "INT64", "shape": [1, 1],
                        "data": [iterations]}]}
    return post(port, "/v2/models/small_queue/infer", body, conn=conn)


def test_full_queue_answers_429(batch_server, batch_store):
    s = batch_server
    ref = slow_reference(batch_store, "small_queue", SLOW_ITERATIONS)
    results = run_concurrently(64, lambda i: slow_request(s.http, SLOW_ITERATIONS))
    codes = {}
    for i, r in enumerate(results):
        assert not isinstance(r, Exception), f"request {i}: {r!r}"
        codes[r.status] = codes.get(r.status, 0) + 1
        if r.status == 200:
            doc, out = parse_infer_response(r)
            assert_same(out["checksum"], ref, rtol=1e-4, what=f"request {i} checksum")
        elif r.status == 429:
            retry = r.headers.get("retry-after")
            assert retry is not None and retry.strip().isdigit(), f"429 without Retry-After: {r.headers}"
            msg = r.error()
            assert "small_queue" in msg and "queue" in msg, msg
        else:
            raise AssertionError(f"request {i}: expected 200 or 429, got {r}")
    print(f"\nmax_queue_size 4 under 64 concurrent requests: {codes}")
    assert codes.get(429, 0) > 0, f"no 429 from a queue of 4 under 64 concurrent requests: {codes}"
    assert codes.get(200, 0) > 0, f"no request served: {codes}"
    samples = parse_metrics(get(s.metrics, "/metrics").body.decode())
    rejected = metric_sum_model(samples, "inferd_rejected_total", "small_queue", reason="queue_full")
    assert rejected >= codes[429], f"inferd_rejected_total{{reason=queue_full}} = {rejected}"
    # Still healthy and serving.
    assert get(s.http, "/v2/health/ready").status == 200
    r = slow_request(s.http, 3)
    doc, out = parse_infer_response(r)
    assert_same(out["checksum"], slow_reference(batch_store, "small_queue", 3), rtol=1e-4)


# ------------------------------------------------------------------ drain

def test_sigterm_under_load_drains(server_factory, test_store, tmp_path_factory):
    """Ten long requests are sent, four or more seen queued in /metrics, then
    SIGTERM: the queued ones answer 200 with the right body, none is left
    unanswered; new requests sent during the drain answer 503 (or find the
    port closed); readiness turns false; the process exits 0 within the grace
    period."""
    store = tmp_path_factory.mktemp("drain-store")
    # A deadline no machine passes: the drain must answer every queued request.
    copy_model(test_store, "slow", store, "small_queue",
               config=with_config(read_config(test_store, "slow"), max_batch_size=1,
                                  max_queue_size=256, request_timeout_ms=120000))
    copy_model(test_store, "identity_fp32", store)
    grace = 30
    s = server_factory(store, "drain", drain_timeout=grace)
    iterations = SLOW_ITERATIONS
    ref = slow_reference(store, "small_queue", iterations)
    probe = torch.tensor([[1.0, -2.0, 3.5]])
    n = 10
    results = [None] * n

    def one_shot(i):
        try:
            results[i] = slow_request(s.http, iterations)
        except Exception as e:  # noqa: BLE001 - reported below
            results[i] = e

    clients = [threading.Thread(target=one_shot, args=(i,)) for i in range(n)]
    for t in clients:
        t.start()

    wait_until(lambda: queue_depth(s, "small_queue") >= 4, 30, "4 requests queued")

    probes = []  # (seconds after the signal, outcome)
    exited = threading.Event()

    def probe_once():
        at = time.monotonic() - t0
        try:
            probes.append((at, infer_json(s.http, "identity_fp32", [("input", probe)])))
        except ConnectionRefusedError:
            probes.append((at, "refused"))
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            probes.append((at, e))

    def prober():
        # One thread per probe: a probe accepted before the signal waits behind
        # the queue and must not hold the others back.
        threads = []
        while not exited.is_set() and not any(r == "refused" for _, r in probes):
            t = threading.Thread(target=probe_once)
            t.start()
            threads.append(t)
            time.sleep(0.02)
        for t in threads:
            t.join(60)

    t0 = time.monotonic()
    s.signal()
    probe_thread = threading.Thread(target=prober)
    probe_thread.start()
    ready, ready_at = 200, None
    while time.monotonic() - t0 < 2.0:
        try:
            ready = get(s.http, "/v2/health/ready", timeout=5).status
        except OSError:
            ready = None  # the port is closed: the process is exiting
        if ready != 200:
            ready_at = time.monotonic() - t0
            break
        time.sleep(0.005)
    rc = s.wait(grace + 5)
    took = time.monotonic() - t0
    exited.set()
    probe_thread.join(30)
    for t in clients:
        t.join(30)
    assert rc == 0, f"exit code {rc} after SIGTERM (None: still running after {grace + 5} s)\n{s.logs()}"
    s.stop()  # bookkeeping only: it has exited
    assert ready != 200, "/v2/health/ready still 200 2 s after SIGTERM"
    assert ready in (503, None), f"/v2/health/ready during the drain: {ready}"

    codes = {}
    for i, r in enumerate(results):
        # All were sent long before the exit: none may go unanswered.
        assert not isinstance(r, Exception), \
            f"request {i} (sent {took:.2f} s before the exit) got no answer: {r!r}\n{s.logs()}"
        codes[r.status] = codes.get(r.status, 0) + 1
        if r.status == 200:
            doc, out = parse_infer_response(r)
            assert_same(out["checksum"], ref, rtol=1e-4, what=f"request {i}")
        else:
            # One that reached the server after the signal is refused.
            assert r.status == 503, f"request {i}: expected 200 or 503, got {r}"
            assert "drain" in r.error() or "shutting down" in r.error(), r
    assert codes.get(200, 0) >= 4, f"the 4+ requests seen queued before SIGTERM must answer 200: {codes}"
    probe_codes = {}
    for at, r in probes:
        key = r.status if hasattr(r, "status") else (r if isinstance(r, str) else type(r).__name__)
        probe_codes[key] = probe_codes.get(key, 0) + 1
        if hasattr(r, "status") and r.status == 200 and at <= ready_at:
            # Sent before the server had handled the signal: served, correctly.
            doc, out = parse_infer_response(r)
            assert_same(out["output"], probe, rtol=0, what="a probe")
        elif hasattr(r, "status"):
            assert r.status == 503, (f"a request sent {at:.3f} s after SIGTERM (not ready since "
                                     f"{ready_at:.3f} s): expected 503, got {r}")
            assert "drain" in r.error() or "shutting down" in r.error(), r
        elif not isinstance(r, str):
            # Only a connection caught by the port closing at exit may break.
            assert took - at < 0.5, (f"a request sent {at:.3f} s into the drain (exit at {took:.3f} s) "
                                     f"got no answer: {r!r}")
    print(f"\nSIGTERM with {n} requests in flight: exit 0 after {took:.2f} s; ready -> {ready} after "
          f"{ready_at:.3f} s; "
          f"in-flight ones {codes}; requests during the drain {probe_codes}")
    assert probe_codes.get(503, 0) > 0, f"no request sent during the drain answered 503: {probe_codes}"
