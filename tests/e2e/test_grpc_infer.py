"""KServe v2 over gRPC (inference.GRPCInferenceService), with a client generated
from the repository's .proto: every model and batch of the REST suite
(test_v2_infer.py) sent as raw_input_contents and as typed contents answers
exactly what REST answers for the same inputs, and what PyTorch computes;
every datatype, raw and typed; BYTES in and out through a model with
preprocess:."""

import json
import os
import zlib

import numpy as np
import pytest
import torch

from conftest import stop_and_check, write_model
from grpc_e2e import GrpcClient, assert_identical, parse_response
from inferd_e2e import (assert_same, bytes_elements, call, infer_binary, infer_json,
                        parse_infer_response, random_tensor)
from test_v2_infer import DTYPES, MODELS, OUTPUT_NAMES, make_inputs, reference

TYPED_DTYPES = [t for t in DTYPES if t not in ("FP16", "BF16")]  # no typed field for these


def rest_outputs(server, model, inputs):
    """The REST answer for the same inputs, every output binary (exact bytes)."""
    doc, outputs = parse_infer_response(infer_binary(server.http, model, inputs,
                                                     binary_data_output=True))
    return doc, outputs


def check_against(got, rest, ref, model, what):
    assert sorted(got) == sorted(rest), f"{what}: outputs {sorted(got)}, REST {sorted(rest)}"
    for name in rest:
        assert_identical(got[name], rest[name], f"{what}: output '{name}' vs REST")
        assert_same(got[name], ref[name], rtol=1e-5, what=f"{what}: output '{name}' vs PyTorch")


@pytest.mark.parametrize("form", ["raw", "typed"])
@pytest.mark.parametrize("batch", [1, 3, 6])
@pytest.mark.parametrize("model", MODELS)
def test_grpc_answers_what_rest_answers(main_server, main_grpc, refs, model, batch, form):
    if form == "typed" and model == "all_dtypes":
        pytest.skip("FP16 and BF16 have no typed field: all_dtypes goes raw (test_all_datatypes)")
    rng = np.random.default_rng(zlib.crc32(f"{model}/{batch}/grpc".encode()))
    for _ in range(2):
        inputs = make_inputs(model, batch, rng)
        resp = main_grpc.infer(model, inputs, raw=form == "raw", id=f"{model}-{batch}")
        assert resp.model_name == model and resp.model_version == "1", resp
        assert resp.id == f"{model}-{batch}"
        assert (len(resp.raw_output_contents) > 0) == (form == "raw"), \
            f"a {form} request is answered {form}"
        got = parse_response(resp)
        _, rest = rest_outputs(main_server, model, inputs)
        check_against(got, rest, reference(refs, model, inputs), model, f"{model} [{form}]")


def test_all_datatypes(main_server, main_grpc, refs):
    """Every datatype through all_dtypes (raw: FP16 and BF16 have no typed field), exact."""
    rng = np.random.default_rng(21)
    for batch, length in [(1, 1), (2, 7), (5, 33)]:
        inputs = [(f"in_{t.lower()}", random_tensor(rng, t, (batch, length))) for t in DTYPES]
        resp = main_grpc.infer("all_dtypes", inputs)
        by_name = {o.name: o for o in resp.outputs}
        got = parse_response(resp)
        _, rest = rest_outputs(main_server, "all_dtypes", inputs)
        expected = reference(refs, "all_dtypes", inputs)
        for t in DTYPES:
            name = f"out_{t.lower()}"
            assert by_name[name].datatype == t, f"{name}: datatype {by_name[name].datatype}"
            assert list(by_name[name].shape) == [batch, length]
            assert_identical(got[name], rest[name], f"{name} vs REST")
            assert_same(got[name], expected[name], rtol=0.0, what=name)


def test_typed_request_refuses_fp16(main_grpc):
    import grpc
    req = main_grpc.pb2.ModelInferRequest(model_name="all_dtypes")
    t = req.inputs.add()
    t.name, t.datatype = "in_fp16", "FP16"
    t.shape.extend([1, 1])
    t.contents.fp32_contents.append(1.5)
    with pytest.raises(grpc.RpcError) as e:
        main_grpc.stub.ModelInfer(req, timeout=30)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value
    assert e.value.details() == ("input 'in_fp16': FP16 has no typed contents field; send it in "
                                 "raw_input_contents"), e.value.details()


class TypedIO(torch.nn.Module):
    """One input of each datatype that has a typed field; each output changes it."""

    def forward(self, b: torch.Tensor, u8: torch.Tensor, i8: torch.Tensor, i16: torch.Tensor,
                i32: torch.Tensor, i64: torch.Tensor, f32: torch.Tensor, f64: torch.Tensor):
        return (torch.logical_not(b), u8 + 1, i8 + 1, i16 + 1, i32 + 1, i64 + 1, f32 * 2,
                f64 * 2)


TYPED_NAMES = ["b", "u8", "i8", "i16", "i32", "i64", "f32", "f64"]
TYPED_CONFIG = "backend: torchscript\nmax_batch_size: 4\ninputs:\n" + "".join(
    f"  - {{name: {n}, datatype: {t}, shape: [-1]}}\n" for n, t in zip(TYPED_NAMES, TYPED_DTYPES)
) + "outputs:\n" + "".join(
    f"  - {{name: out_{n}, datatype: {t}, shape: [-1]}}\n" for n, t in zip(TYPED_NAMES, TYPED_DTYPES))


@pytest.fixture(scope="module")
def typed_server(server_factory, tmp_path_factory):
    store = tmp_path_factory.mktemp("grpc-typed-store")
    write_model(store, "typed_io", torch.jit.script(TypedIO()), TYPED_CONFIG)
    s = server_factory(store, "grpc-typed")
    yield s, store
    stop_and_check(s)


@pytest.mark.parametrize("form", ["typed", "raw"])
def test_every_typed_datatype(typed_server, grpc_modules, form):
    s, store = typed_server
    client = GrpcClient(*grpc_modules, s.grpc)
    module = torch.jit.load(os.path.join(str(store), "typed_io", "1", "model.pt"))
    rng = np.random.default_rng(9)
    try:
        for batch, length in [(1, 1), (3, 5)]:
            inputs = [(n, random_tensor(rng, t, (batch, length)))
                      for n, t in zip(TYPED_NAMES, TYPED_DTYPES)]
            resp = client.infer("typed_io", inputs, raw=form == "raw")
            got = parse_response(resp)
            _, rest = rest_outputs(s, "typed_io", inputs)
            doc, rest_json = parse_infer_response(infer_json(s.http, "typed_io", inputs))
            with torch.inference_mode():
                ref = dict(zip([f"out_{n}" for n in TYPED_NAMES], module(*[t for _, t in inputs])))
            for name in ref:
                assert_identical(got[name], rest[name], f"{name} [{form}] vs REST binary")
                assert_identical(got[name], rest_json[name], f"{name} [{form}] vs REST JSON")
                assert_same(got[name], ref[name], rtol=0.0, what=f"{name} [{form}] vs PyTorch")
    finally:
        client.close()


def test_requested_outputs_binary_data_and_version(main_server, main_grpc, refs):
    rng = np.random.default_rng(3)
    inputs = make_inputs("two_io", 2, rng)
    expected = reference(refs, "two_io", inputs)
    # Typed request, one output asked for, in typed contents.
    resp = main_grpc.infer("two_io", inputs, raw=False, outputs=["b_plus_one"], version="1")
    assert [o.name for o in resp.outputs] == ["b_plus_one"]
    assert len(resp.raw_output_contents) == 0 and resp.outputs[0].contents.int64_contents
    assert_same(parse_response(resp)["b_plus_one"], expected["b_plus_one"])
    # Typed request, an output asked for as binary data: the answer is raw.
    resp = main_grpc.infer("two_io", inputs, raw=False, outputs=["a_doubled", "b_plus_one"],
                           binary_outputs=("a_doubled",))
    assert [o.name for o in resp.outputs] == ["a_doubled", "b_plus_one"]
    assert len(resp.raw_output_contents) == 2
    got = parse_response(resp)
    for name in expected:
        assert_same(got[name], expected[name], what=name)
    # binary_data_output on a typed request: raw too.
    resp = main_grpc.infer("two_io", inputs, raw=False, params={"binary_data_output": True})
    assert len(resp.raw_output_contents) == 2


# ------------------------------------------------- BYTES through preprocess

@pytest.fixture(scope="module")
def digits_server(server_factory, example_store):
    s = server_factory(example_store, "grpc-digits", args=["--models", "digits_cnn"])
    yield s
    stop_and_check(s)


@pytest.mark.parametrize("form", ["raw", "typed"])
def test_png_batch_as_bytes(digits_server, grpc_modules, example_store, form):
    """Eight PNGs as one BYTES input: labels (BYTES) and scores come back as
    the REST binary extension gives them."""
    with open(os.path.join(example_store, "digits_cnn", "test_set.json")) as f:
        files = json.load(f)["files"]
    client = GrpcClient(*grpc_modules, digits_server.grpc)
    try:
        for start in (0, 440):
            pngs = []
            for name in files[start:start + 8]:
                with open(os.path.join(example_store, "digits_cnn", "samples", name), "rb") as f:
                    pngs.append(f.read())
            resp = client.infer("digits_cnn", [("image", pngs)], raw=form == "raw",
                                outputs=["labels", "scores"])
            shapes = {o.name: list(o.shape) for o in resp.outputs}
            assert shapes == {"labels": [len(pngs), 3], "scores": [len(pngs), 3]}, shapes
            got = parse_response(resp)
            blob = bytes_elements(pngs)
            head = json.dumps({"inputs": [{"name": "image", "datatype": "BYTES",
                                           "shape": [len(pngs)],
                                           "parameters": {"binary_data_size": len(blob)}}],
                               "parameters": {"binary_data_output": True}}).encode()
            r = call(digits_server.http, "POST", "/v2/models/digits_cnn/infer", head + blob,
                     headers={"Inference-Header-Content-Length": str(len(head)),
                              "Content-Type": "application/octet-stream"})
            _, rest = parse_infer_response(r)
            assert_identical(got["labels"], rest["labels"], f"labels [{form}] vs REST")
            assert_identical(got["scores"], rest["scores"], f"scores [{form}] vs REST")
    finally:
        client.close()
