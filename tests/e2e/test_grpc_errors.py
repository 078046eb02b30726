"""Bad gRPC requests answer the status code the issue lists with the REST
side's message (the same text, where the same check fails); the next good
request succeeds. Health, metadata, readiness and the repository extension
over gRPC."""

import os

import grpc
import pytest
import torch

from conftest import copy_model, stop_and_check, write_model
from grpc_e2e import GrpcClient, parse_response
from inferd_e2e import PLAIN_CONFIG, Plain, assert_same, get, infer_json, post, wait_until

A_OK = ("a", torch.ones(1, 2, 4))
B_OK = ("b", torch.tensor([[1, 2, 3]]))

# (case id, model, inputs, requested outputs): the same tensors go over REST (JSON) and gRPC
# (raw and typed); both must refuse them with the same message.
SAME_AS_REST = [
    ("missing_input", "two_io", [A_OK], None),
    ("extra_input", "two_io", [A_OK, B_OK, ("bogus", torch.zeros(1, 1))], None),
    ("wrong_datatype", "two_io", [A_OK, ("b", torch.tensor([[1, 2, 3]], dtype=torch.int32))], None),
    ("wrong_fixed_dim", "two_io", [("a", torch.ones(1, 2, 3)), B_OK], None),
    ("wrong_rank", "tiny_cnn", [("image", torch.zeros(8, 8))], None),
    ("batch_too_large", "identity_fp32", [("input", torch.zeros(9, 1))], None),
    ("batches_differ", "two_io", [A_OK, ("b", torch.tensor([[1], [2]]))], None),
    ("unknown_output", "two_io", [A_OK, B_OK], ["nope"]),
]


def good_identity(client):
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3) / 3
    assert_same(parse_response(client.infer("identity_fp32", [("input", x)]))["output"], x)


def rpc_error(fn):
    with pytest.raises(grpc.RpcError) as e:
        fn()
    return e.value


@pytest.mark.parametrize("form", ["raw", "typed"])
@pytest.mark.parametrize("case", SAME_AS_REST, ids=[c[0] for c in SAME_AS_REST])
def test_bad_request_same_message_as_rest(main_server, main_grpc, case, form):
    _, model, inputs, outputs = case
    r = infer_json(main_server.http, model, inputs, outputs=outputs)
    assert r.status == 400, r
    e = rpc_error(lambda: main_grpc.infer(model, inputs, outputs=outputs, raw=form == "raw"))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
    assert e.details() == r.error(), f"gRPC: {e.details()!r}\nREST: {r.error()!r}"
    good_identity(main_grpc)


def test_parse_errors_same_message_as_rest(main_server, main_grpc):
    pb2 = main_grpc.pb2
    # An unknown datatype.
    req = pb2.ModelInferRequest(model_name="identity_fp32")
    t = req.inputs.add()
    t.name, t.datatype = "input", "FP128"
    t.shape.extend([1, 1])
    t.contents.fp32_contents.append(1.0)
    r = post(main_server.http, "/v2/models/identity_fp32/infer",
             {"inputs": [{"name": "input", "datatype": "FP128", "shape": [1, 1], "data": [1.0]}]})
    e = rpc_error(lambda: main_grpc.stub.ModelInfer(req, timeout=30))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "FP128" in e.details(), e
    assert e.details() == r.error()
    # An INT8 element out of range (typed int_contents; JSON on REST).
    req = pb2.ModelInferRequest(model_name="all_dtypes")
    t = req.inputs.add()
    t.name, t.datatype = "in_int8", "INT8"
    t.shape.extend([1, 1])
    t.contents.int_contents.append(300)
    r = post(main_server.http, "/v2/models/all_dtypes/infer",
             {"inputs": [{"name": "in_int8", "datatype": "INT8", "shape": [1, 1], "data": [300]}]})
    e = rpc_error(lambda: main_grpc.stub.ModelInfer(req, timeout=30))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
    assert "'in_int8'" in e.details() and "300" in e.details(), e.details()
    assert e.details() == r.error()
    # No inputs.
    e = rpc_error(lambda: main_grpc.stub.ModelInfer(pb2.ModelInferRequest(model_name="two_io"),
                                                    timeout=30))
    r = post(main_server.http, "/v2/models/two_io/infer", {"inputs": []})
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and e.details() == r.error(), e
    good_identity(main_grpc)


def test_wire_format_errors(main_grpc):
    """Errors of the gRPC wire format itself: element counts, raw sizes, a mix."""
    pb2 = main_grpc.pb2
    short = pb2.ModelInferRequest(model_name="identity_fp32")
    t = short.inputs.add()
    t.name, t.datatype = "input", "FP32"
    t.shape.extend([1, 5])
    t.contents.fp32_contents.extend([1.0, 2.0, 3.0, 4.0])
    e = rpc_error(lambda: main_grpc.stub.ModelInfer(short, timeout=30))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
    assert "'input'" in e.details() and "5" in e.details() and "4" in e.details(), e.details()

    size = pb2.ModelInferRequest(model_name="identity_fp32")
    t = size.inputs.add()
    t.name, t.datatype = "input", "FP32"
    t.shape.extend([1, 4])
    size.raw_input_contents.append(b"\0" * 12)
    e = rpc_error(lambda: main_grpc.stub.ModelInfer(size, timeout=30))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
    assert "'input'" in e.details() and "12" in e.details() and "16" in e.details(), e.details()

    mixed = main_grpc.request("two_io", [A_OK, B_OK], raw=False)
    mixed.raw_input_contents.extend([b"\0" * 32, b"\0" * 24])
    e = rpc_error(lambda: main_grpc.stub.ModelInfer(mixed, timeout=30))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
    assert "raw_input_contents" in e.details(), e.details()
    good_identity(main_grpc)


@pytest.mark.parametrize("model,version,code,rest_path", [
    ("no_such_model", "", grpc.StatusCode.NOT_FOUND, "/v2/models/no_such_model/infer"),
    ("identity_fp32", "7", grpc.StatusCode.NOT_FOUND, "/v2/models/identity_fp32/versions/7/infer"),
    ("identity_fp32", "x", grpc.StatusCode.INVALID_ARGUMENT,
     "/v2/models/identity_fp32/versions/x/infer"),
])
def test_unknown_model_or_version(main_server, main_grpc, model, version, code, rest_path):
    x = [("input", torch.ones(1, 1))]
    e = rpc_error(lambda: main_grpc.infer(model, x, version=version))
    assert e.code() == code, e
    r = post(main_server.http, rest_path,
             {"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 1], "data": [1.0]}]})
    assert e.details() == r.error(), f"gRPC: {e.details()!r}\nREST: {r.error()!r}"
    good_identity(main_grpc)


def test_model_that_throws(main_server, main_grpc):
    x = torch.tensor([[1.0, -2.0, 3.0]])
    e = rpc_error(lambda: main_grpc.infer("thrower", [("x", x)]))
    assert e.code() == grpc.StatusCode.INTERNAL, e
    assert "negative input" in e.details(), e.details()
    out = parse_response(main_grpc.infer("thrower", [("x", x.abs())]))
    assert_same(out["doubled"], x.abs() * 2)
    good_identity(main_grpc)


# -------------------------------------------------------- health, metadata

def test_health_and_server_metadata(main_grpc):
    pb2 = main_grpc.pb2
    assert main_grpc.stub.ServerLive(pb2.ServerLiveRequest(), timeout=10).live
    assert main_grpc.stub.ServerReady(pb2.ServerReadyRequest(), timeout=10).ready
    meta = main_grpc.stub.ServerMetadata(pb2.ServerMetadataRequest(), timeout=10)
    assert meta.name == "inferd" and meta.version, meta
    assert "model_repository" in meta.extensions, meta


@pytest.mark.parametrize("model", ["two_io", "tiny_cnn", "mixed_io"])
@pytest.mark.parametrize("version", ["", "1"])
def test_model_metadata_matches_rest(main_server, main_grpc, model, version):
    meta = main_grpc.stub.ModelMetadata(main_grpc.pb2.ModelMetadataRequest(name=model,
                                                                           version=version),
                                        timeout=10)
    doc = get(main_server.http, f"/v2/models/{model}" + (f"/versions/{version}" if version
                                                         else "")).json()
    assert meta.name == doc["name"] and list(meta.versions) == doc["versions"]
    assert meta.platform == doc["platform"]
    for got, want in ((meta.inputs, doc["inputs"]), (meta.outputs, doc["outputs"])):
        assert [(t.name, t.datatype, list(t.shape)) for t in got] == \
               [(t["name"], t["datatype"], t["shape"]) for t in want]


def test_model_ready_and_unknown(main_grpc):
    pb2 = main_grpc.pb2
    assert main_grpc.stub.ModelReady(pb2.ModelReadyRequest(name="tiny_cnn"), timeout=10).ready
    assert main_grpc.stub.ModelReady(pb2.ModelReadyRequest(name="tiny_cnn", version="1"),
                                     timeout=10).ready
    for name, version, fragment in [("nope", "", "nope"), ("tiny_cnn", "3", "3")]:
        for method, req in [(main_grpc.stub.ModelReady, pb2.ModelReadyRequest),
                            (main_grpc.stub.ModelMetadata, pb2.ModelMetadataRequest)]:
            e = rpc_error(lambda: method(req(name=name, version=version), timeout=10))
            assert e.code() == grpc.StatusCode.NOT_FOUND and fragment in e.details(), e


# --------------------------- models that fail to load; repository extension

@pytest.fixture(scope="module")
def repo_server(server_factory, test_store, tmp_path_factory, grpc_modules):
    store = tmp_path_factory.mktemp("grpc-repo-store")
    copy_model(test_store, "identity_fp32", store)
    write_model(store, "plain", torch.jit.script(Plain()), PLAIN_CONFIG)
    os.makedirs(store / "not_torchscript" / "1")
    (store / "not_torchscript" / "config.yaml").write_text(PLAIN_CONFIG)
    (store / "not_torchscript" / "1" / "model.pt").write_bytes(b"not a TorchScript zip\n" * 10)
    s = server_factory(store, "grpc-repo", wait_ready=False, args=["--body-limit", "65536"])
    for name in ("identity_fp32", "plain"):  # the tests below count both as READY
        wait_until(lambda: get(s.http, f"/v2/models/{name}/ready").status == 200, 60,
                   f"{name} ready")
    wait_until(lambda: "model.pt" in get(s.http, "/v2/models/not_torchscript/ready").body.decode(),
               60, "not_torchscript reported with its error")
    client = GrpcClient(*grpc_modules, s.grpc)
    yield s, client
    client.close()
    stop_and_check(s)


def test_failed_model_is_reported(repo_server):
    s, client = repo_server
    pb2 = client.pb2
    assert not client.stub.ModelReady(pb2.ModelReadyRequest(name="not_torchscript"),
                                      timeout=10).ready
    e = rpc_error(lambda: client.infer("not_torchscript", [("x", torch.ones(1, 2))]))
    assert e.code() == grpc.StatusCode.UNAVAILABLE, e
    assert "not_torchscript" in e.details() and "model.pt" in e.details(), e.details()
    index = client.stub.RepositoryIndex(pb2.RepositoryIndexRequest(), timeout=10)
    states = {(m.name, m.version): (m.state, m.reason) for m in index.models}
    assert states[("not_torchscript", "1")][0] == "UNAVAILABLE", states  # with the reason, as Triton
    assert "model.pt" in states[("not_torchscript", "1")][1], states
    assert states[("identity_fp32", "1")] == ("READY", "")
    ready = client.stub.RepositoryIndex(pb2.RepositoryIndexRequest(ready=True), timeout=10)
    assert sorted(m.name for m in ready.models) == ["identity_fp32", "plain"]
    good_identity(client)


def test_unload_and_load(repo_server):
    s, client = repo_server
    pb2 = client.pb2
    x = [("x", torch.tensor([[1.5, -2.0]]))]
    assert_same(parse_response(client.infer("plain", x))["y"], x[0][1] + 1)
    client.stub.RepositoryModelUnload(pb2.RepositoryModelUnloadRequest(model_name="plain"),
                                      timeout=60)
    assert not client.stub.ModelReady(pb2.ModelReadyRequest(name="plain"), timeout=10).ready
    e = rpc_error(lambda: client.infer("plain", x))
    assert e.code() == grpc.StatusCode.UNAVAILABLE, e
    client.stub.RepositoryModelLoad(pb2.RepositoryModelLoadRequest(model_name="plain"), timeout=60)
    assert client.stub.ModelReady(pb2.ModelReadyRequest(name="plain"), timeout=10).ready
    assert_same(parse_response(client.infer("plain", x))["y"], x[0][1] + 1)
    e = rpc_error(lambda: client.stub.RepositoryModelLoad(
        pb2.RepositoryModelLoadRequest(model_name="not_torchscript"), timeout=60))
    assert e.code() == grpc.StatusCode.FAILED_PRECONDITION and "model.pt" in e.details(), e
    e = rpc_error(lambda: client.stub.RepositoryModelLoad(
        pb2.RepositoryModelLoadRequest(model_name="nope"), timeout=60))
    assert e.code() == grpc.StatusCode.NOT_FOUND, e


def test_message_past_the_body_limit(repo_server):
    """--body-limit bounds gRPC messages as it bounds HTTP bodies; the server goes on."""
    s, client = repo_server
    e = rpc_error(lambda: client.infer("identity_fp32", [("input", torch.zeros(1, 20000))]))
    assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e
    good_identity(client)
