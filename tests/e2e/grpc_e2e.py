"""The gRPC side of the end-to-end tests: a Python client generated at test
time from the repository's src/grpc/grpc_predict_v2.proto with Debian's
python3-grpc-tools (grpc_tools.protoc), run on python3-grpcio, and the v2
tensor codec on the client side (raw_input_contents and the typed contents).

Nothing here knows the server's code: it speaks the protocol only.
"""

import importlib
import os
import subprocess
import sys

import numpy as np
import torch

from inferd_e2e import TORCH_DTYPES, V2_NAMES, split_bytes_elements, tensor_bytes, tensor_from_bytes

PROTO_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src", "grpc"))
PROTO = "grpc_predict_v2.proto"

# datatype -> the InferTensorContents field its elements go in (FP16/BF16: none).
CONTENTS_FIELD = {
    "BOOL": "bool_contents", "UINT8": "uint_contents", "INT8": "int_contents",
    "INT16": "int_contents", "INT32": "int_contents", "INT64": "int64_contents",
    "FP32": "fp32_contents", "FP64": "fp64_contents", "BYTES": "bytes_contents",
}


def generate_client(out_dir):
    """Runs protoc on the repository's .proto; returns (messages, services) modules."""
    os.makedirs(out_dir, exist_ok=True)
    cmd = ["/usr/bin/python3", "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}",
           f"--python_out={out_dir}", f"--grpc_python_out={out_dir}", PROTO]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    if out_dir not in sys.path:
        sys.path.insert(0, out_dir)
    pb2 = importlib.import_module("grpc_predict_v2_pb2")
    pb2_grpc = importlib.import_module("grpc_predict_v2_pb2_grpc")
    return pb2, pb2_grpc


class GrpcClient:
    """inference.GRPCInferenceService on 127.0.0.1:port; errors raise grpc.RpcError."""

    def __init__(self, pb2, pb2_grpc, port):
        import grpc
        self.pb2 = pb2
        self.grpc = grpc
        limit = 64 << 20
        self.channel = grpc.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", limit),
                                          ("grpc.max_send_message_length", limit)])
        self.stub = pb2_grpc.GRPCInferenceServiceStub(self.channel)

    def close(self):
        self.channel.close()

    def request(self, model, inputs, outputs=None, raw=True, version="", id="", params=None,
                binary_outputs=()):
        """inputs: [(name, tensor or list of bytes for BYTES)]; raw: raw_input_contents,
        else typed contents. params: {name: bool | int | str}."""
        pb2 = self.pb2
        req = pb2.ModelInferRequest(model_name=model, model_version=version, id=id)
        for name, value in inputs:
            t = req.inputs.add()
            t.name = name
            if isinstance(value, list):  # BYTES elements
                t.datatype = "BYTES"
                t.shape.append(len(value))
                if raw:
                    req.raw_input_contents.append(
                        b"".join(len(b).to_bytes(4, "little") + b for b in value))
                else:
                    t.contents.bytes_contents.extend(value)
                continue
            datatype = V2_NAMES[value.dtype]
            t.datatype = datatype
            t.shape.extend(list(value.shape))
            if raw:
                req.raw_input_contents.append(tensor_bytes(value))
            else:
                field = CONTENTS_FIELD[datatype]  # KeyError: FP16/BF16 cannot be typed
                getattr(t.contents, field).extend(value.flatten().tolist())
        for o in outputs or ():
            out = req.outputs.add()
            out.name = o
            if o in binary_outputs:
                out.parameters["binary_data"].bool_param = True
        for k, v in (params or {}).items():
            set_param(req.parameters[k], v)
        return req

    def infer(self, model, inputs, timeout=60, **kw):
        return self.stub.ModelInfer(self.request(model, inputs, **kw), timeout=timeout)


def set_param(p, v):
    if isinstance(v, bool):
        p.bool_param = v
    elif isinstance(v, int):
        p.int64_param = v
    else:
        p.string_param = v


def parse_response(resp):
    """ModelInferResponse -> {name: tensor (list of bytes for BYTES)}, checking
    that it is all raw or all typed, with one raw entry per output."""
    outputs = {}
    raw = len(resp.raw_output_contents) > 0
    if raw:
        assert len(resp.raw_output_contents) == len(resp.outputs), \
            f"{len(resp.raw_output_contents)} raw_output_contents for {len(resp.outputs)} outputs"
    for i, o in enumerate(resp.outputs):
        shape = list(o.shape)
        if raw:
            assert not o.HasField("contents"), f"output {o.name}: raw and typed contents both set"
            data = resp.raw_output_contents[i]
            outputs[o.name] = (split_bytes_elements(data, shape) if o.datatype == "BYTES"
                               else tensor_from_bytes(o.datatype, shape, data))
            continue
        field = CONTENTS_FIELD.get(o.datatype)
        assert field, f"output {o.name}: {o.datatype} answered typed"
        values = list(getattr(o.contents, field))
        assert len(values) == int(np.prod(shape)), f"output {o.name}: {len(values)} for {shape}"
        if o.datatype == "BYTES":
            outputs[o.name] = values
        else:
            outputs[o.name] = torch.tensor(values, dtype=TORCH_DTYPES[o.datatype]).reshape(shape)
    return outputs


def assert_identical(got, want, what):
    """Bit-for-bit the same tensor (or the same list of BYTES elements)."""
    if isinstance(want, list):
        want = [w.encode() if isinstance(w, str) else w for w in want]
        assert got == want, f"{what}: {got[:6]!r} vs {want[:6]!r}"
        return
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)} vs {tuple(want.shape)}"
    assert tensor_bytes(got) == tensor_bytes(want), f"{what}: values differ"
