"""gRPC calls over time: the gRPC deadline is the request's deadline (a call
still queued past it is dropped before compute), a client's cancel drops the
request before compute, a full queue answers RESOURCE_EXHAUSTED, SIGTERM
drains (in-flight calls answered, new ones UNAVAILABLE), metrics count gRPC
as they count HTTP, and calls waiting in the queue hold no thread."""

import os
import time

import grpc
import pytest
import torch

from conftest import copy_model, load_reference, stop_and_check
from grpc_e2e import GrpcClient, parse_response
from inferd_e2e import (assert_same, get, metric_sum_model, parse_metrics, post, wait_until)
from test_batching import SLOW_ITERATIONS, read_config, with_config


@pytest.fixture(scope="module")
def slow_store(test_store, tmp_path_factory):
    store = tmp_path_factory.mktemp("grpc-slow-store")
    slow = read_config(test_store, "slow")
    copy_model(test_store, "slow", store, "deadline_slow",
               config=with_config(slow, max_batch_size=1, max_queue_size=1024,
                                  request_timeout_ms=120000))
    # Its deadline is stated (120 s): the full-queue test checks the queue's
    # limit, not how fast a loaded machine runs four ~100 ms forwards.
    copy_model(test_store, "slow", store, "small_queue",
               config=with_config(slow, max_batch_size=1, max_queue_size=4,
                                  request_timeout_ms=120000))
    copy_model(test_store, "identity_fp32", store)
    return store


@pytest.fixture(scope="module")
def slow_server(server_factory, slow_store, grpc_modules):
    s = server_factory(slow_store, "grpc-slow")
    client = GrpcClient(*grpc_modules, s.grpc)
    yield s, client
    client.close()
    stop_and_check(s)


def samples(server):
    return parse_metrics(get(server.metrics, "/metrics").body.decode())


def rejected(server, model, reason):
    return metric_sum_model(samples(server), "inferd_rejected_total", model, reason=reason)


def queue_depth(server, model):
    return metric_sum_model(samples(server), "inferd_queue_depth", model)


def slow_input(iterations):
    return [("iterations", torch.tensor([[iterations]]))]


def slow_reference(store, model, iterations):
    with torch.inference_mode():
        return load_reference(store, model)(torch.tensor([[iterations]]))


# Long calls: about 0.3 s each on an idle machine (longer under load), so that
# the work queued ahead outlasts a slow client by a wide margin.
LONG_ITERATIONS = 3 * SLOW_ITERATIONS


def fill_queue(client, model, n, iterations=SLOW_ITERATIONS):
    """n long calls in flight (futures)."""
    return [client.stub.ModelInfer.future(client.request(model, slow_input(iterations)),
                                          timeout=120) for _ in range(n)]


def test_grpc_deadline_drops_the_queued_request(slow_server, slow_store):
    """The 0.3 s deadline must reach the server before it passes (a client
    stalled that long on a loaded machine would expire it on its own side),
    and then pass while 3+ calls of 0.3+ s each are ahead of it."""
    s, client = slow_server
    ref = slow_reference(slow_store, "deadline_slow", LONG_ITERATIONS)

    def dropped():
        # The client's clock runs out a little before the server's (the call's
        # time in flight): the watchdog may see its cancel (RST_STREAM) first.
        return sum(rejected(s, "deadline_slow", r) for r in ("deadline", "cancelled"))

    dropped0 = dropped()
    busy = fill_queue(client, "deadline_slow", 6, LONG_ITERATIONS)
    wait_until(lambda: queue_depth(s, "deadline_slow") >= 4, 30, "long calls queued")
    with pytest.raises(grpc.RpcError) as e:
        client.infer("deadline_slow", slow_input(1), timeout=0.3)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED, e.value
    for i, f in enumerate(busy):
        assert_same(parse_response(f.result())["checksum"], ref, rtol=1e-4, what=f"call {i}")
    # The server dropped it before compute, not the client alone.
    wait_until(lambda: dropped() - dropped0 == 1, 10,
               "inferd_rejected_total{reason=deadline or cancelled} + 1")


def test_timeout_parameter_answers_deadline_exceeded(slow_server):
    """v2's `timeout` parameter (microseconds) over gRPC, as over REST."""
    s, client = slow_server
    busy = fill_queue(client, "deadline_slow", 6)
    wait_until(lambda: queue_depth(s, "deadline_slow") >= 3, 30, "long calls queued")
    with pytest.raises(grpc.RpcError) as e:
        client.infer("deadline_slow", slow_input(1), params={"timeout": 20000})
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED, e.value
    assert "deadline" in e.value.details(), e.value.details()
    for f in busy:
        f.result()


def received(server):
    """Inference calls the server has received, all models: counted on arrival
    (the model found READY), before the call is queued."""
    return metric_sum_model(samples(server), "inferd_model_cache_requests_total", "")


def test_cancelled_call_is_dropped_before_compute(slow_server):
    """A call cancelled while it waits in the queue is dropped and counted.

    The cancel must reach the server while the call is queued behind work:
    the call is sent only once all the long calls were received and 5+ of them
    are queued, and cancelled only once the server has received it too (else
    the client's cancel may come before the call left it, and the server never
    sees a call to drop). Queues are FIFO, so 4+ long calls (0.3+ s each) are
    then ahead of it, far more than the cancel takes to arrive."""
    s, client = slow_server
    cancelled0 = rejected(s, "deadline_slow", "cancelled")
    ok0 = metric_sum_model(samples(s), "inferd_requests_total", "deadline_slow", code="OK")
    received0 = received(s)
    busy = fill_queue(client, "deadline_slow", 8, LONG_ITERATIONS)
    wait_until(lambda: received(s) - received0 == 8 and queue_depth(s, "deadline_slow") >= 5,
               30, "8 long calls received, 5 queued")
    call = client.stub.ModelInfer.future(client.request("deadline_slow", slow_input(2)),
                                         timeout=120)
    wait_until(lambda: received(s) - received0 == 9, 30, "the call received")
    assert call.cancel()
    for f in busy:
        f.result()
    wait_until(lambda: rejected(s, "deadline_slow", "cancelled") - cancelled0 == 1, 10,
               "inferd_rejected_total{reason=cancelled} + 1")
    # Dropped, not computed: only the long calls were answered OK.
    ok = metric_sum_model(samples(s), "inferd_requests_total", "deadline_slow", code="OK")
    assert ok - ok0 == 8, f"{ok - ok0} calls answered OK, 8 long calls sent"
    assert client.stub.ServerReady(client.pb2.ServerReadyRequest(), timeout=10).ready


def test_full_queue_answers_resource_exhausted(slow_server, slow_store):
    s, client = slow_server
    ref = slow_reference(slow_store, "small_queue", SLOW_ITERATIONS)
    calls = fill_queue(client, "small_queue", 48)
    codes = {}
    for i, f in enumerate(calls):
        try:
            out = parse_response(f.result())
            assert_same(out["checksum"], ref, rtol=1e-4, what=f"call {i}")
            codes["OK"] = codes.get("OK", 0) + 1
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e
            assert "small_queue" in e.details() and "queue" in e.details(), e.details()
            codes[e.code().name] = codes.get(e.code().name, 0) + 1
    print(f"\nmax_queue_size 4 under 48 concurrent gRPC calls: {codes}")
    assert codes.get("RESOURCE_EXHAUSTED", 0) > 0 and codes.get("OK", 0) > 0, codes


def test_metrics_count_grpc_like_http(slow_server):
    s, client = slow_server
    before = samples(s)
    x = [("input", torch.ones(1, 3))]
    for _ in range(3):
        client.infer("identity_fp32", x)
    with pytest.raises(grpc.RpcError):
        client.infer("identity_fp32", [("input", torch.ones(1, 3, 2))])
    assert post(s.http, "/v2/models/identity_fp32/infer",
                {"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 1],
                             "data": [1.0]}]}).status == 200

    def moved(protocol, code):
        return (metric_sum_model(samples(s), "inferd_requests_total", "identity_fp32",
                                 protocol=protocol, code=code) -
                metric_sum_model(before, "inferd_requests_total", "identity_fp32",
                                 protocol=protocol, code=code))

    wait_until(lambda: (moved("grpc", "OK"), moved("grpc", "INVALID_ARGUMENT"),
                        moved("http", "OK")) == (3, 1, 1), 5,
               "inferd_requests_total by protocol and code")


def threads_of(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def test_waiting_calls_hold_no_thread(slow_server):
    """512 calls queued at once: the process's thread count stays what it was
    idle (give or take gRPC's own few); then they are cancelled and dropped."""
    s, client = slow_server
    idle = threads_of(s.pid)
    cancelled0 = rejected(s, "deadline_slow", "cancelled")
    calls = fill_queue(client, "deadline_slow", 512)
    wait_until(lambda: queue_depth(s, "deadline_slow") >= 500, 60, "500 calls queued")
    busy = threads_of(s.pid)
    for c in calls:
        c.cancel()
    print(f"\nthreads: {idle} idle, {busy} with {queue_depth(s, 'deadline_slow'):.0f} gRPC calls "
          f"queued")
    assert busy <= idle + 4, f"{busy} threads with 500+ calls waiting, {idle} idle"
    wait_until(lambda: queue_depth(s, "deadline_slow") == 0, 60, "the queue to empty")
    assert rejected(s, "deadline_slow", "cancelled") - cancelled0 >= 400
    assert client.stub.ServerReady(client.pb2.ServerReadyRequest(), timeout=10).ready


# ------------------------------------------------------------------ drain

def test_sigterm_drains_grpc(server_factory, slow_store, grpc_modules):
    """SIGTERM with calls queued: they are answered (OK, right values);
    ServerReady turns false; every call sent while the drain is under way
    answers UNAVAILABLE "server is draining"; exit 0.

    "Under way" is shown on the client's side: a probe counts only if, when it
    was sent, at least two of the queued calls were still unanswered, so the
    server still had at least one to compute (a call's answer may reach this
    client a moment after the server sent it). A call that arrives after the
    drain, as the port closes, is cancelled by gRPC's own shutdown; no probe
    is sent then. The queued calls are long (LONG_ITERATIONS) so that the
    drain outlasts a slow client on a loaded machine."""
    grace = 60
    s = server_factory(slow_store, "grpc-drain", drain_timeout=grace)
    client = GrpcClient(*grpc_modules, s.grpc)
    ref = slow_reference(slow_store, "deadline_slow", LONG_ITERATIONS)
    calls = fill_queue(client, "deadline_slow", 8, LONG_ITERATIONS)
    wait_until(lambda: queue_depth(s, "deadline_slow") >= 4, 30, "4 calls queued")
    s.signal()

    def not_ready():
        return not client.stub.ServerReady(client.pb2.ServerReadyRequest(), timeout=10).ready

    # The server refuses new calls from before it reports not ready.
    wait_until(not_ready, 30, "ServerReady false after SIGTERM")
    probes = []
    while sum(not f.done() for f in calls) >= 2:
        try:
            client.infer("identity_fp32", [("input", torch.ones(1, 2))], timeout=10)
            probes.append(("OK", ""))
        except grpc.RpcError as e:
            probes.append((e.code(), e.details()))
        time.sleep(0.005)  # leave the (possibly one) core to the drain's compute
    rc = s.wait(grace + 10)
    assert rc == 0, f"exit code {rc}\n{s.logs()}"
    s.stop()
    codes = {}
    for i, f in enumerate(calls):
        assert_same(parse_response(f.result())["checksum"], ref, rtol=1e-4, what=f"call {i}")
        codes["OK"] = codes.get("OK", 0) + 1
    assert probes, ("no call could be sent during the drain: the queued calls were answered "
                    f"before ServerReady turned false\n{s.logs()}")
    wrong = [(code, details) for code, details in probes
             if code != grpc.StatusCode.UNAVAILABLE or "draining" not in details]
    assert not wrong, f"{len(wrong)} of {len(probes)} calls during the drain: {wrong[:5]}"
    print(f"\nSIGTERM with 8 gRPC calls in flight: exit 0; in-flight {codes}; "
          f"{len(probes)} calls during the drain refused UNAVAILABLE")
    client.close()
