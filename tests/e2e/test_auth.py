"""API keys (--auth-keys) over REST and gRPC: 401 / 403 / open health, metrics
with and without metrics keys, rotation without a restart under a steady load,
the safe default of --bind, and TLS (--tls-cert/--tls-key) with a certificate
made here by the openssl command. docs/SECURITY.md is the reference."""

import os
import signal
import ssl
import subprocess
import threading
import time

import grpc
import pytest
import torch

from conftest import stop_and_check, write_model
from grpc_e2e import GrpcClient
from inferd_e2e import PLAIN_CONFIG, Plain, Server, call, get, post, wait_until

INFER = "infer-key-0123456789abcdef"
ADMIN = "admin-key-0123456789abcdef"
METRICS = "metrics-key-0123456789abcdef"
BODY = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]}]}


def bearer(key):
    return {"Authorization": f"Bearer {key}"}


def write_keys(path, **lists):
    """Atomically, as docs/SECURITY.md asks: another file renamed over."""
    text = "".join(f"{kind}: [{', '.join(keys)}]\n" for kind, keys in lists.items())
    with open(f"{path}.tmp", "w") as f:
        f.write(text)
    os.replace(f"{path}.tmp", path)


@pytest.fixture(scope="module")
def plain_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("auth-store")
    write_model(store, "plain", torch.jit.script(Plain()), PLAIN_CONFIG)
    return store


@pytest.fixture(scope="module")
def keyed(server_factory, plain_store, tmp_path_factory):
    """(server, keys file): inference and management keys, no metrics keys."""
    keys = str(tmp_path_factory.mktemp("keys") / "keys.yaml")
    write_keys(keys, inference=[INFER], management=[ADMIN])
    s = server_factory(plain_store, "auth", args=["--auth-keys", keys])
    yield s, keys
    stop_and_check(s)


def assert_refused(r, status, key=None):
    assert r.status == status, r
    assert "error" in r.json(), r
    if status == 401:
        assert r.headers.get("www-authenticate", "").startswith("Bearer"), r.headers
    if key:
        assert key not in r.body.decode(), "the key is echoed"


def test_health_stays_open(keyed):
    s, _ = keyed
    for path in ("/ping", "/v2/health/live", "/v2/health/ready", "/v2/health/ready/"):
        assert get(s.http, path).status == 200, path


def test_inference_needs_an_inference_or_management_key(keyed):
    s, _ = keyed
    assert_refused(post(s.http, "/v2/models/plain/infer", BODY), 401)
    assert_refused(post(s.http, "/v2/models/plain/infer", BODY, headers=bearer("x" * 20)), 401,
                   "x" * 20)
    assert_refused(post(s.http, "/v2/models/plain/infer", BODY,
                        headers={"Authorization": f"Basic {INFER}"}), 401, INFER)
    assert_refused(get(s.http, "/v2/models/plain"), 401)
    assert_refused(get(s.http, "/v2"), 401)
    for key in (INFER, ADMIN):
        r = post(s.http, "/v2/models/plain/infer", BODY, headers=bearer(key))
        assert r.status == 200, r
        assert r.json()["outputs"][0]["data"] == [2, 3, 4]


def test_a_refused_body_is_not_read(keyed):
    """401 from the header alone: the 8 MB body is never read, the answer still arrives."""
    s, _ = keyed
    r = post(s.http, "/v2/models/plain/infer", b"0" * (8 << 20),
             headers={"Content-Type": "application/json"})
    assert_refused(r, 401)
    assert r.headers.get("connection") == "close"


def test_management_needs_a_management_key(keyed):
    s, _ = keyed
    assert_refused(get(s.management, "/models"), 401)
    r = get(s.management, "/models", headers=bearer(INFER))
    assert_refused(r, 403, INFER)
    assert "management" in r.json()["error"]
    assert get(s.management, "/models", headers=bearer(ADMIN)).status == 200


def test_grpc_statuses(keyed, grpc_modules):
    s, _ = keyed
    client = GrpcClient(*grpc_modules, s.grpc)
    pb2 = client.pb2
    x = torch.tensor([[1.0, 2.0, 3.0]])
    try:
        # Probes stay open.
        assert client.stub.ServerLive(pb2.ServerLiveRequest()).live
        assert client.stub.ServerReady(pb2.ServerReadyRequest()).ready
        req = client.request("plain", [("x", x)])
        with pytest.raises(grpc.RpcError) as e:
            client.stub.ModelInfer(req)
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as e:
            client.stub.ModelInfer(req, metadata=[("authorization", "Bearer unknown-key-0123456789")])
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "unknown-key" not in e.value.details()
        with pytest.raises(grpc.RpcError) as e:
            client.stub.RepositoryIndex(pb2.RepositoryIndexRequest(),
                                        metadata=[("authorization", f"Bearer {INFER}")])
        assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert INFER not in e.value.details()
        for key in (INFER, ADMIN):
            resp = client.stub.ModelInfer(req, metadata=[("authorization", f"Bearer {key}")])
            assert resp.model_name == "plain"
        index = client.stub.RepositoryIndex(pb2.RepositoryIndexRequest(),
                                            metadata=[("authorization", f"Bearer {ADMIN}")])
        assert [m.name for m in index.models] == ["plain"]
    finally:
        client.close()


def test_metrics_open_until_metrics_keys_are_listed(keyed):
    """Also a reload of the file on change, and SIGHUP."""
    s, keys = keyed
    assert get(s.metrics, "/metrics").status == 200
    write_keys(keys, inference=[INFER], management=[ADMIN], metrics=[METRICS])
    wait_until(lambda: get(s.metrics, "/metrics").status == 401, 5, "/metrics to need a key")
    assert get(s.metrics, "/metrics", headers=bearer(METRICS)).status == 200
    assert get(s.metrics, "/metrics", headers=bearer(ADMIN)).status == 200
    assert_refused(get(s.metrics, "/metrics", headers=bearer(INFER)), 403, INFER)
    # A file that fails to parse keeps the keys in force, and says why.
    with open(keys + ".tmp", "w") as f:
        f.write("inference: [oops\n")
    os.replace(keys + ".tmp", keys)
    wait_until(lambda: b"keeping the keys in force" in open(s.stderr_path, "rb").read(), 5,
               "the log of the bad file")
    assert get(s.metrics, "/metrics", headers=bearer(METRICS)).status == 200
    assert post(s.http, "/v2/models/plain/infer", BODY, headers=bearer(INFER)).status == 200
    write_keys(keys, inference=[INFER], management=[ADMIN])
    s.signal(signal.SIGHUP)  # re-reads at once; the server goes on
    wait_until(lambda: get(s.metrics, "/metrics").status == 200, 5, "/metrics open again")
    assert s.running()
    log = open(s.stderr_path, "rb").read()
    assert b"received SIGHUP" in log
    for key in (INFER, ADMIN, METRICS):
        assert key.encode() not in log, "a key is logged"


def test_rotation_under_load(keyed):
    """Clients move to the new key while both are valid: 0 failed requests; the
    old key is refused within 3 s of its removal from the file."""
    s, keys = keyed
    old, new = INFER, "rotated-key-0123456789abcdef"
    current = [old]
    results = []
    stop = threading.Event()

    def load():
        while not stop.is_set():
            key = current[0]
            try:
                r = post(s.http, "/v2/models/plain/infer", BODY, headers=bearer(key), timeout=10)
                results.append((key, r.status))
            except OSError as e:
                results.append((key, repr(e)))

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.5)
        write_keys(keys, inference=[old, new], management=[ADMIN])
        wait_until(lambda: post(s.http, "/v2/models/plain/infer", BODY,
                                headers=bearer(new)).status == 200, 5, "the new key")
        current[0] = new
        time.sleep(0.3)  # requests sent with the old key are answered
        write_keys(keys, inference=[new], management=[ADMIN])
        removed = time.monotonic()
        wait_until(lambda: post(s.http, "/v2/models/plain/infer", BODY,
                                headers=bearer(old)).status == 401, 5, "the old key refused")
        refused_after = time.monotonic() - removed
        time.sleep(0.5)
    finally:
        stop.set()
        for t in threads:
            t.join()
    failed = [r for r in results if r[1] != 200]
    assert len(results) > 20, results
    assert not failed, f"{len(failed)} of {len(results)} requests failed: {failed[:5]}"
    assert refused_after <= 3.0, f"the old key was refused {refused_after:.2f} s after removal"
    write_keys(keys, inference=[INFER], management=[ADMIN])
    wait_until(lambda: post(s.http, "/v2/models/plain/infer", BODY,
                            headers=bearer(INFER)).status == 200, 5, "the first key back")


# ------------------------------------------------------------ the safe default

def run_briefly(inferd_bin, store, *args):
    return subprocess.run([inferd_bin, "serve", "--model-store", str(store), "--http-port", "0",
                           "--management-port", "0", "--metrics-port", "0", "--grpc-port", "0",
                           *args], capture_output=True, text=True, timeout=60)


def test_non_loopback_bind_needs_keys(inferd_bin, plain_store, tmp_path):
    r = run_briefly(inferd_bin, plain_store, "--bind", "0.0.0.0")
    assert r.returncode == 1, r
    assert "--allow-unauthenticated" in r.stderr and "--auth-keys" in r.stderr, r.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("inference: [short]\n")
    r = run_briefly(inferd_bin, plain_store, "--bind", "0.0.0.0", "--auth-keys", str(bad))
    assert r.returncode == 1, r
    assert "inference[0]: a key must be" in r.stderr and "short" not in r.stderr, r.stderr


def test_allow_unauthenticated_on_purpose(server_factory, plain_store):
    s = server_factory(plain_store, "open", args=["--bind", "0.0.0.0", "--allow-unauthenticated"])
    assert post(s.http, "/v2/models/plain/infer", BODY).status == 200
    stop_and_check(s)


# ----------------------------------------------------------------------- TLS

def make_cert(directory, name):
    cert, key = os.path.join(directory, f"{name}.crt"), os.path.join(directory, f"{name}.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", f"/CN=localhost/O={name}", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def install(src, dst):
    with open(src, "rb") as f:
        data = f.read()
    with open(dst + ".tmp", "wb") as f:
        f.write(data)
    os.replace(dst + ".tmp", dst)


def client_context(cert):
    ctx = ssl.create_default_context(cafile=cert)
    return ctx


def peer_certificate(port, ctx):
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            return tls.getpeercert(binary_form=True)


def test_tls_rest_and_grpc_with_reload(inferd_bin, plain_store, tmp_path, grpc_modules):
    d = str(tmp_path)
    cert_a, key_a = make_cert(d, "a")
    cert_b, key_b = make_cert(d, "b")
    cert, key = os.path.join(d, "server.crt"), os.path.join(d, "server.key")
    install(cert_a, cert)
    install(key_a, key)
    keys = os.path.join(d, "keys.yaml")
    write_keys(keys, inference=[INFER], management=[ADMIN])
    ctx_a = client_context(cert_a)
    s = Server(inferd_bin, plain_store, os.path.join(d, "server"), name="tls", tls=ctx_a,
               args=["--auth-keys", keys, "--tls-cert", cert, "--tls-key", key])
    s.start()
    try:
        r = post(s.http, "/v2/models/plain/infer", BODY, headers=bearer(INFER), tls=ctx_a)
        assert r.status == 200 and r.json()["outputs"][0]["data"] == [2, 3, 4], r
        assert_refused(post(s.http, "/v2/models/plain/infer", BODY, tls=ctx_a), 401)
        assert get(s.management, "/models", headers=bearer(ADMIN), tls=ctx_a).status == 200
        assert get(s.metrics, "/metrics", tls=ctx_a).status == 200
        with pytest.raises(Exception):  # plain HTTP to an HTTPS port gets no answer
            get(s.http, "/ping", timeout=5)
        assert get(s.http, "/ping", tls=ctx_a).status == 200  # and the port goes on

        pb2, pb2_grpc = grpc_modules

        def grpc_infer(root):
            creds = grpc.ssl_channel_credentials(root_certificates=open(root, "rb").read())
            with grpc.secure_channel(f"localhost:{s.grpc}", creds) as channel:
                stub = pb2_grpc.GRPCInferenceServiceStub(channel)
                req = pb2.ModelInferRequest(model_name="plain")
                t = req.inputs.add(name="x", datatype="FP32", shape=[1, 3])
                t.contents.fp32_contents.extend([1, 2, 3])
                return stub.ModelInfer(req, metadata=[("authorization", f"Bearer {INFER}")],
                                       timeout=10)

        assert list(grpc_infer(cert_a).outputs[0].contents.fp32_contents) == [2, 3, 4]

        # A new pair: new connections get it, within seconds, without a restart.
        with open(cert_b, "rb") as f:
            want = ssl.PEM_cert_to_DER_cert(f.read().decode())
        install(cert_b, cert)
        install(key_b, key)
        ctx_b = client_context(cert_b)
        wait_until(lambda: peer_certificate(s.http, ctx_b) == want, 5, "the new certificate (REST)")
        assert get(s.http, "/ping", tls=ctx_b).status == 200
        def grpc_works(root):
            try:
                return grpc_infer(root) is not None
            except grpc.RpcError:
                return False

        wait_until(lambda: grpc_works(cert_b), 10, "the new certificate (gRPC)", interval=0.5)
    finally:
        stop_and_check(s)
