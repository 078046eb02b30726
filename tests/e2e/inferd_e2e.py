"""Helpers of the end-to-end tests: an HTTP client on the standard library, the
KServe v2 JSON and binary tensor codecs on the client side, tensor comparison,
Prometheus text parsing, and the Server that runs the real inferd binary.

Nothing here knows the server's code: it speaks the protocols only.
"""

import http.client
import json
import os
import re
import signal
import subprocess
import time

import numpy as np
import torch

# v2 datatype -> torch dtype (the element sizes follow from torch).
TORCH_DTYPES = {
    "BOOL": torch.bool,
    "UINT8": torch.uint8,
    "INT8": torch.int8,
    "INT16": torch.int16,
    "INT32": torch.int32,
    "INT64": torch.int64,
    "FP16": torch.float16,
    "BF16": torch.bfloat16,
    "FP32": torch.float32,
    "FP64": torch.float64,
}
V2_NAMES = {v: k for k, v in TORCH_DTYPES.items()}
FLOAT_TYPES = {"FP16", "BF16", "FP32", "FP64"}

LISTENING = re.compile(rb"inferd: listening http=(\d+) management=(\d+) metrics=(\d+)"
                       rb"(?: grpc=(\d+))?")


# ---------------------------------------------------------------- HTTP client

def _reject_constant(name):
    raise ValueError(f"bare {name} is not JSON")


def strict_json(text):
    """json.loads that refuses Python's bare NaN/Infinity, which are not JSON."""
    return json.loads(text, parse_constant=_reject_constant)


NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case name -> value
        self.body = body

    def json(self):
        try:
            return strict_json(self.body.decode("utf-8"))
        except ValueError as e:
            raise AssertionError(f"HTTP {self.status}: body is not JSON ({e}): {self.body[:500]!r}")

    def error(self):
        """The message of a {"error": "..."} body."""
        doc = self.json()
        assert isinstance(doc, dict) and isinstance(doc.get("error"), str), \
            f"HTTP {self.status}: expected a JSON {{\"error\": \"...\"}} body, got {self.body[:500]!r}"
        return doc["error"]

    def __repr__(self):
        return f"<HTTP {self.status} {self.body[:300]!r}>"


def call(port, method, path, body=None, headers=None, timeout=60, conn=None, tls=None):
    """One HTTP request to 127.0.0.1:port. `body` may be bytes, str or a JSON-able object.
    With `conn` (an http.client.HTTPConnection) the request reuses that connection;
    with `tls` (an ssl.SSLContext) it goes over HTTPS to localhost."""
    hdrs = dict(headers or {})
    if body is not None and not isinstance(body, (bytes, bytearray, str)):
        body = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    elif isinstance(body, str):
        body = body.encode()
    own = conn is None
    if own and tls is not None:
        conn = http.client.HTTPSConnection("localhost", port, timeout=timeout, context=tls)
    elif own:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=hdrs)
        r = conn.getresponse()
        data = r.read()
        return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
    finally:
        if own:
            conn.close()


def get(port, path, **kw):
    return call(port, "GET", path, **kw)


def post(port, path, body=None, **kw):
    return call(port, "POST", path, body=body, **kw)


# ------------------------------------------------------------ tensors, v2 codec

def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def tensor_from_bytes(datatype, shape, data):
    dtype = TORCH_DTYPES[datatype]
    n = int(np.prod(shape)) if len(shape) else 1
    if n == 0:
        return torch.empty(shape, dtype=dtype)
    t = torch.frombuffer(bytearray(data), dtype=dtype)
    assert t.numel() == n, f"{datatype} {shape}: {len(data)} bytes hold {t.numel()} elements"
    return t.reshape(shape).clone()


def bytes_elements(items):
    """BYTES tensor bytes: each element as a 4-byte little-endian length + bytes."""
    return b"".join(len(b).to_bytes(4, "little") + b for b in items)


def split_bytes_elements(data, shape):
    out, at = [], 0
    while at < len(data):
        n = int.from_bytes(data[at:at + 4], "little")
        out.append(data[at + 4:at + 4 + n])
        at += 4 + n
    assert at == len(data) and len(out) == int(np.prod(shape)), \
        f"BYTES {shape}: {len(out)} elements in {len(data)} bytes"
    return out


def tensor_from_json(datatype, shape, data):
    dtype = TORCH_DTYPES[datatype]
    flat = list(_flatten(data))
    if datatype == "BOOL":
        assert all(isinstance(v, bool) for v in flat), f"BOOL data must be true/false: {flat[:10]}"
    elif datatype not in FLOAT_TYPES:
        assert all(isinstance(v, int) and not isinstance(v, bool) for v in flat), \
            f"{datatype} data must be integers: {flat[:10]}"
    if not flat:
        return torch.empty(shape, dtype=dtype)
    if datatype in FLOAT_TYPES:  # non-finite values come as strings (see JsonWriter)
        flat = [NON_FINITE[v] if isinstance(v, str) else v for v in flat]
    if datatype in ("FP16", "BF16"):
        # Parse as double, then round once to the narrow type.
        t = torch.tensor(flat, dtype=torch.float64).to(dtype)
    else:
        t = torch.tensor(flat, dtype=dtype)
    assert t.numel() == int(np.prod(shape)), f"{len(flat)} elements for shape {shape}"
    return t.reshape(shape)


def _flatten(data):
    if isinstance(data, list):
        for d in data:
            yield from _flatten(d)
    else:
        yield data


def json_input(name, t):
    """A v2 JSON input: flat data, shape with the batch dim."""
    return {"name": name, "datatype": V2_NAMES[t.dtype], "shape": list(t.shape),
            "data": t.flatten().tolist()}


def json_request(inputs, outputs=None, **extra):
    """inputs: list of (name, tensor). Returns the request object."""
    req = {"inputs": [json_input(n, t) for n, t in inputs]}
    if outputs is not None:
        req["outputs"] = [{"name": o} for o in outputs]
    req.update(extra)
    return req


def binary_request(inputs, binary_outputs=None, binary_data_output=None, json_inputs=()):
    """A v2 request with the binary tensor extension. `inputs` go as binary
    (except the names in json_inputs). Returns (body bytes, headers)."""
    head = {"inputs": []}
    blobs = []
    for name, t in inputs:
        if name in json_inputs:
            head["inputs"].append(json_input(name, t))
            continue
        b = tensor_bytes(t)
        head["inputs"].append({"name": name, "datatype": V2_NAMES[t.dtype], "shape": list(t.shape),
                               "parameters": {"binary_data_size": len(b)}})
        blobs.append(b)
    if binary_outputs is not None:
        head["outputs"] = [{"name": o, "parameters": {"binary_data": True}} for o in binary_outputs]
    if binary_data_output is not None:
        head["parameters"] = {"binary_data_output": binary_data_output}
    header = json.dumps(head).encode()
    return header + b"".join(blobs), {"Inference-Header-Content-Length": str(len(header)),
                                      "Content-Type": "application/octet-stream"}


def parse_infer_response(resp):
    """A 200 v2 infer response (JSON or with binary outputs) -> (doc, {name: tensor}).
    Checks that the binary parts add up to the body exactly."""
    assert resp.status == 200, f"expected 200, got {resp}"
    hlen = resp.headers.get("inference-header-content-length")
    if hlen is None:
        doc = resp.json()
        rest = b""
    else:
        n = int(hlen)
        assert 0 < n <= len(resp.body), f"Inference-Header-Content-Length {n} vs body {len(resp.body)}"
        doc = strict_json(resp.body[:n].decode())
        rest = resp.body[n:]
    outputs = {}
    offset = 0
    for out in doc["outputs"]:
        name, datatype, shape = out["name"], out["datatype"], out["shape"]
        size = (out.get("parameters") or {}).get("binary_data_size")
        if size is not None:
            assert "data" not in out, f"output {name} has both data and binary_data_size"
            assert offset + size <= len(rest), \
                f"output {name}: binary_data_size {size} past the body ({len(rest)} binary bytes)"
            part = rest[offset:offset + size]
            outputs[name] = (split_bytes_elements(part, shape) if datatype == "BYTES"
                             else tensor_from_bytes(datatype, shape, part))
            offset += size
        elif datatype == "BYTES":
            # A flat list of strings (kept as a list: torch has no string tensors).
            flat = list(_flatten(out["data"]))
            assert len(flat) == int(np.prod(shape)) and all(isinstance(v, str) for v in flat), \
                f"output {name}: BYTES {shape} as JSON strings: {out['data']!r:.200}"
            outputs[name] = flat
        else:
            outputs[name] = tensor_from_json(datatype, shape, out["data"])
    assert offset == len(rest), f"{len(rest) - offset} unclaimed bytes after the binary outputs"
    return doc, outputs


def infer_json(port, model, inputs, outputs=None, version=None, **extra):
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
    return post(port, path, json_request(inputs, outputs, **extra))


def infer_binary(port, model, inputs, binary_outputs=None, binary_data_output=None, version=None):
    body, headers = binary_request(inputs, binary_outputs, binary_data_output)
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
    return post(port, path, body, headers=headers)


def assert_same(got, ref, rtol=1e-5, what="output"):
    """Same dtype and shape; floats within rtol of the largest reference value
    (max abs error / max abs value), integers and bools exactly equal."""
    assert got.dtype == ref.dtype, f"{what}: dtype {got.dtype}, expected {ref.dtype}"
    assert tuple(got.shape) == tuple(ref.shape), f"{what}: shape {tuple(got.shape)}, expected {tuple(ref.shape)}"
    if got.numel() == 0:
        return
    if got.dtype.is_floating_point:
        g, r = got.double(), ref.double()
        assert torch.equal(torch.isnan(g), torch.isnan(r)), f"{what}: NaNs differ"
        err = (g - r).abs().nan_to_num(0).max().item()
        scale = max(r.abs().nan_to_num(0).max().item(), 1e-30)
        assert err <= rtol * scale, \
            f"{what}: max abs error {err:.3g} > {rtol:g} x max abs value {scale:.3g}"
    else:
        if not torch.equal(got, ref):
            bad = (got != ref).nonzero()[:5].tolist()
            raise AssertionError(f"{what}: differs at {bad}: got {got.flatten()[:8].tolist()}, "
                                 f"expected {ref.flatten()[:8].tolist()}")


def random_tensor(rng, datatype, shape):
    """Random values of a datatype that survive JSON exactly (and +1 without overflow)."""
    if datatype == "BOOL":
        return torch.from_numpy(rng.integers(0, 2, size=shape).astype(bool))
    if datatype in FLOAT_TYPES:
        x = torch.from_numpy(rng.normal(0.0, 50.0, size=shape))
        return x.to(TORCH_DTYPES[datatype])
    info = torch.iinfo(TORCH_DTYPES[datatype])
    lo, hi = max(info.min, -(1 << 40)), min(info.max - 1, 1 << 40)
    if datatype == "INT64":
        lo, hi = info.min, info.max - 1  # the whole range: JSON integers must be exact
    arr = rng.integers(lo, hi, size=shape, dtype=np.int64, endpoint=True)
    return torch.from_numpy(arr).to(TORCH_DTYPES[datatype])


# ----------------------------------------------------------------- Prometheus

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """Prometheus text -> list of (name, {label: value}, float)."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a Prometheus sample line: {line!r}"
        labels = {k: v for k, v in LABEL.findall(m.group(2) or "")}
        samples.append((m.group(1), labels, float(m.group(3))))
    return samples


def metric_sum(samples, name, **labels):
    return sum(v for n, l, v in samples
               if n == name and all(l.get(k) == str(val) for k, val in labels.items()))


def model_label_matches(value, model):
    """A model label may be the name or name:version."""
    return value == model or value.startswith(model + ":")


def metric_sum_model(samples, name, model, **labels):
    return sum(v for n, l, v in samples
               if n == name and model_label_matches(l.get("model", ""), model)
               and all(l.get(k) == str(val) for k, val in labels.items()))


# --------------------------------------------------------------------- server

def wait_until(predicate, timeout, what, interval=0.05):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except (OSError, http.client.HTTPException) as e:
            last = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


class Server:
    """The real binary on free ports. start() returns when the listening line
    is printed and /v2/health/live answers (and /v2/health/ready, unless
    wait_ready=False). stop() sends SIGTERM and returns the exit code."""

    LIVE = []  # running servers, for the logs of failed tests

    def __init__(self, binary, store, workdir, name="inferd", args=(), drain_timeout=10, tls=None):
        self.binary = binary
        self.tls = tls  # an ssl.SSLContext: the HTTP ports speak HTTPS
        self.store = str(store)
        self.workdir = str(workdir)
        self.name = name
        self.args = list(args)
        self.drain_timeout = drain_timeout
        self.proc = None
        self.http = self.management = self.metrics = self.grpc = None
        os.makedirs(self.workdir, exist_ok=True)
        self.stdout_path = os.path.join(self.workdir, f"{name}.stdout")
        self.stderr_path = os.path.join(self.workdir, f"{name}.stderr")
        # The crash journal's folder; the serving process writes serving.pid there.
        self.state_dir = os.path.join(self.workdir, f"{name}.state")

    def command(self):
        state = [] if "--state-dir" in self.args else ["--state-dir", self.state_dir]
        return [self.binary, "serve", "--model-store", self.store, "--http-port", "0",
                "--management-port", "0", "--metrics-port", "0", "--grpc-port", "0",
                "--drain-timeout", str(self.drain_timeout), *state, *self.args]

    @property
    def pid(self):
        """The process that runs the models: the supervisor's child (its serving.pid), or
        the process itself with --no-supervisor."""
        if "--no-supervisor" in self.args:
            return self.proc.pid
        with open(os.path.join(self.state_dir, "serving.pid")) as f:
            return int(f.read())

    def start(self, wait_ready=True, timeout=60):
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(self.command(), stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL)
        Server.LIVE.append(self)
        deadline = time.monotonic() + timeout
        while True:
            with open(self.stdout_path, "rb") as f:
                m = LISTENING.search(f.read())
            if m:
                self.http, self.management, self.metrics = (int(g) for g in m.groups()[:3])
                self.grpc = int(m.group(4)) if m.group(4) else None
                break
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.proc.returncode} before "
                                     f"printing its ports:\n{self.logs()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name} printed no 'inferd: listening' line in "
                                     f"{timeout} s:\n{self.logs()}")
            time.sleep(0.05)
        try:
            wait_until(lambda: get(self.http, "/v2/health/live", timeout=5,
                                   tls=self.tls).status == 200,
                       timeout, "/v2/health/live")
            if wait_ready:
                wait_until(lambda: get(self.http, "/v2/health/ready", timeout=5,
                                       tls=self.tls).status == 200,
                           timeout, "/v2/health/ready")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.logs()}")
        return self

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout=None):
        """SIGTERM; the exit code (None if it did not exit within the drain
        timeout + 2 s, then it is killed)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.wait(timeout if timeout is not None else self.drain_timeout + 2)
        if rc is None:
            self.proc.kill()
            self.proc.wait()
        if self in Server.LIVE:
            Server.LIVE.remove(self)
        return rc

    def logs(self, limit=12000):
        parts = []
        for label, path in (("stdout", self.stdout_path), ("stderr", self.stderr_path)):
            try:
                with open(path, "rb") as f:
                    text = f.read().decode("utf-8", "replace")
            except OSError:
                text = ""
            if len(text) > limit:
                text = "...\n" + text[-limit:]
            parts.append(f"----- {self.name} {label} ({' '.join(self.command())})\n{text}")
        return "\n".join(parts)


# ------------------------------------------------- a plain model for broken stores

class Plain(torch.nn.Module):
    """y = x + 1: the valid model the broken-store fixtures break by config."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


PLAIN_CONFIG = """backend: torchscript
max_batch_size: 4
inputs: [{name: x, datatype: FP32, shape: [-1]}]
outputs: [{name: y, datatype: FP32, shape: [-1]}]
"""
