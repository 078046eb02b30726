"""The Python peer for TorchServe handlers: the same handler.py that inferd runs in its worker
processes, behind FastAPI, as a team that moved off TorchServe onto the seeds' app server would
run it (tools/bench_torchserve.sh starts it through ../shared/peers/fastapi_torch/run.sh, in that
script's gunicorn2_t1_tcmalloc and reuseport2_t1_tcmalloc modes: 2 workers x 1 torch thread, tcmalloc).

MODEL_DIR is an unpacked archive (MAR-INF/MANIFEST.json, handler.py, the serialized file). Each
request is one row [{"body": ..., "data": ...}] for handle(), decoded as inferd's worker decodes
it (application/json parsed, text/* as str, else bytes); the answer is sent as inferd sends it
(bytes as they are, str as text, anything else as JSON). The `ts` package is inferd's own
(share/inferd/python): TorchServe itself is not installable here.
Env: MODEL_DIR, TORCH_THREADS (1 in the modes used)."""
import asyncio.base_events
import importlib
import inspect
import json
import os
import socket
import sys

import torch
from fastapi import FastAPI, Request, Response

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "share", "inferd", "python"))
from ts.context import Context  # noqa: E402


def _set_nodelay(sock):
    """TCP_NODELAY on every accepted connection. asyncio sets it only on sockets whose `proto` is
    IPPROTO_TCP; reuseport.py's listening socket is made with proto 0, so its connections kept
    Nagle's algorithm and each answer (headers, then body: two writes) waited for the client's
    delayed ACK: 44 ms per request, measured. gunicorn's sockets have it. Set here so that both
    modes run as strong as they can."""
    if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


asyncio.base_events._set_nodelay = _set_nodelay
if os.environ.get("TORCH_THREADS"):
    torch.set_num_threads(int(os.environ["TORCH_THREADS"]))
MODEL_DIR = os.path.abspath(os.environ.get("MODEL_DIR", "."))
with open(os.path.join(MODEL_DIR, "MAR-INF", "MANIFEST.json")) as f:
    MANIFEST = json.load(f)
sys.path.insert(0, MODEL_DIR)
_module = importlib.import_module(os.path.basename(MANIFEST["model"]["handler"]).split(".py")[0])
_classes = [c for _, c in inspect.getmembers(_module, inspect.isclass)
            if c.__module__ == _module.__name__]
CONTEXT = Context(MANIFEST["model"]["modelName"], MODEL_DIR, MANIFEST, 1, None, "peer")
if hasattr(_module, "handle") and not inspect.isclass(_module.handle):
    HANDLE = _module.handle
else:
    _service = _classes[0]()
    _service.initialize(CONTEXT)
    HANDLE = _service.handle
app = FastAPI()


def decode(content_type, body):
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "application/json":
        try:
            return json.loads(body)
        except ValueError:
            return body
    if media.startswith("text"):
        return body.decode("utf-8", "replace")
    return body


@app.get("/ping")
def ping():
    return {"status": "Healthy"}


@app.post("/predictions/{name}")
async def predict(name: str, request: Request):
    content_type = request.headers.get("content-type", "application/octet-stream")
    value = decode(content_type, await request.body())
    CONTEXT.reset(1, [content_type])
    try:
        answer = HANDLE([{"body": value, "data": value}], CONTEXT)[0]
    except Exception as e:  # as inferd answers a handler's exception
        code = getattr(e, "error_code", 500)
        return Response(json.dumps({"error": str(e)}), status_code=code if 400 <= code < 600 else 500,
                        media_type="application/json")
    if isinstance(answer, (bytes, bytearray)):
        return Response(bytes(answer), media_type="application/octet-stream")
    if isinstance(answer, str):
        return Response(answer, media_type="text/plain; charset=utf-8")
    return Response(json.dumps(answer), media_type="application/json")
