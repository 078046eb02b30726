"""Memory admission (issue 39, part 3), through the real binary: a text encoder of the test
store (bert_tiny, texts up to 512 tokens) served under a --memory-limit that a large batch
of long texts would pass. The server states each model's activation memory
(GET /v2/models/{m} "memory", /metrics); a request that cannot fit even alone is refused
413 with the figures, batches that do not fit together are cut (or wait), nothing kills
the process, and a second model answers 200 throughout.

Nothing here depends on the machine's speed: the budget is set from the figures the
server itself reports (its resident memory after the same work, the encoder's bytes per
token), with hundreds of MiB between what must fit and what must not; every request has a
long deadline and the encoder a long max_execution_ms."""

import json
import math
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import copy_model
from inferd_e2e import bytes_elements, call, get, metric_sum, parse_metrics, post

MiB = 1 << 20
LENGTH = 512  # the encoder's max_length here (bert_tiny has 512 positions)
HEADROOM = 512 * MiB  # what the limit leaves above the resident memory after warm-up
MEDIUM = 128 * MiB  # one medium request's need: fits alone, six of them do not together
SMALL = {"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}],
         "parameters": {"timeout": 600_000_000}}
LONG_TEXT = " ".join(["the package provides the library and its documentation"] * 80)


@pytest.fixture(scope="module")
def admission_store(test_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("admission-store")
    d = copy_model(test_store, "bert_tiny", store, "encoder")
    with open(f"{d}/config.yaml") as f:
        text = f.read()
    text = text.replace("max_batch_size: 16", "max_batch_size: 4096")
    text = text.replace("max_length: 256", f"max_length: {LENGTH}")
    text = text.replace("max_queue_size: 256", "max_queue_size: 4096")
    text += "max_execution_ms: 3600000\nrequest_timeout_ms: 3600000\n"
    with open(f"{d}/config.yaml", "w") as f:
        f.write(text)
    copy_model(test_store, "identity_fp32", store, "small")
    return store


def texts_request(n):
    blob = bytes_elements([LONG_TEXT.encode()] * n)
    head = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [n],
                                   "parameters": {"binary_data_size": len(blob)}}],
                       "parameters": {"timeout": 3_600_000_000}}).encode()
    return head + blob, {"Inference-Header-Content-Length": str(len(head)),
                         "Content-Type": "application/octet-stream"}


def infer_texts(server, n):
    body, headers = texts_request(n)
    return call(server.http, "POST", "/v2/models/encoder/infer", body, headers=headers,
                timeout=3600)


def memory_figures(server):
    doc = get(server.http, "/v2/models/encoder", timeout=60).json()
    return doc["memory"]


def metrics_of(server):
    return parse_metrics(get(server.metrics, "/metrics", timeout=60).body.decode())


def resident(server):
    return metric_sum(metrics_of(server), "process_resident_memory_bytes")


def warm(server, medium_items):
    """The same work as the measured run, so that the allocator's (and ASan's quarantine's)
    steady state is in the resident figure."""
    assert post(server.http, "/v2/models/small/infer", SMALL, timeout=600).status == 200
    with ThreadPoolExecutor(6) as pool:
        for r in pool.map(lambda _: infer_texts(server, medium_items), range(6)):
            assert r.status == 200, r


def budget_for(limit):
    """--memory-limit whose limit less the server's margin (5%, at least 64 MiB) is `limit`."""
    budget = limit + 64 * MiB
    if budget // 20 > 64 * MiB:
        budget = math.ceil(limit / 0.95)
    return int(budget)


def test_a_batch_that_cannot_fit_is_refused_or_cut_and_the_other_model_answers(
        server_factory, admission_store):
    # 1. Unlimited: the encoder's measured figure and the resident memory after the work.
    free = server_factory(admission_store, "unlimited", args=["--no-supervisor"])
    figures = memory_figures(free)
    per_token = int(figures["activation_bytes_per_token"])
    print(f"\nencoder activation memory: {figures}")
    # Checked against what the forward must hold at least: its output of LENGTH x 64
    # floats per item (and the attention scores of 2 heads, LENGTH x LENGTH each).
    assert per_token * LENGTH >= LENGTH * 64 * 4, figures
    assert figures["measured_on"]["length"] == LENGTH, figures
    medium_items = max(1, MEDIUM // (per_token * LENGTH))
    warm(free, medium_items)
    base = int(resident(free))
    assert free.stop() == 0

    # 2. Limited: the limit leaves HEADROOM above that resident memory.
    limit = base + HEADROOM
    big_items = math.ceil((HEADROOM + 1024 * MiB) / (per_token * LENGTH))
    assert big_items <= 4096, f"the encoder needs too little per token ({per_token} B)"
    server = server_factory(admission_store, "limited",
                            args=["--memory-limit", str(budget_for(limit))])
    pid = server.pid
    warm(server, medium_items)

    small_codes = []
    stop = threading.Event()

    def small_traffic():
        while not stop.is_set():
            small_codes.append(post(server.http, "/v2/models/small/infer", SMALL,
                                    timeout=600).status)
            stop.wait(0.05)

    neighbour = threading.Thread(target=small_traffic)
    neighbour.start()
    try:
        # A request that cannot fit even alone: 413, the figures in the message.
        r = infer_texts(server, big_items)
        assert r.status == 413, r
        message = r.error()
        assert "cannot fit even alone" in message and "--memory-limit" in message, message
        assert f"{big_items} items of {big_items * LENGTH} padded tokens" in message, message
        # The need from this server's own figure (each start measures it again).
        needed_mib = memory_figures(server)["activation_bytes_per_token"] * big_items * LENGTH / MiB
        assert f"needs {needed_mib:.1f} MiB" in message, message
        # Six medium requests at once: each fits alone, all six do not; every one is
        # answered 200 (cut, waiting, or run alone, as they arrive).
        with ThreadPoolExecutor(6) as pool:
            codes = [r.status for r in pool.map(lambda _: infer_texts(server, medium_items),
                                                range(6))]
        assert codes == [200] * 6, codes
        # One long text still answers.
        assert infer_texts(server, 1).status == 200
    finally:
        stop.set()
        neighbour.join()

    assert small_codes and set(small_codes) == {200}, small_codes
    assert server.running() and server.pid == pid, "the serving process died"
    samples = metrics_of(server)
    assert metric_sum(samples, "inferd_restarts_total") == 0
    refused = metric_sum(samples, "inferd_memory_admission_total", model="encoder",
                         outcome="refused")
    cut = metric_sum(samples, "inferd_memory_admission_total", model="encoder", outcome="cut")
    print(f"limit {limit / MiB:.0f} MiB (resident after warm-up {base / MiB:.0f} MiB), "
          f"{medium_items} items per medium request, {big_items} refused; "
          f"admission: refused {refused}, cut {cut}")
    assert refused == 1
    figures = memory_figures(server)
    assert metric_sum(samples, "inferd_activation_bytes_per_token",
                      model="encoder") == figures["activation_bytes_per_token"]
    assert metric_sum(samples, "inferd_activation_bytes_per_item",
                      model="encoder") == figures["activation_bytes_per_item"]
