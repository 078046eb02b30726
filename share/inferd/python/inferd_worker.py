"""inferd's handler worker: runs one TorchServe handler for one model.

Started by the server (src/backend/python/handler_process.cc), never by hand.
It loads the handler as TorchServe's model loader does (a module with
`handle(data, context)` or one class with initialize/handle; `file.py:function`;
or a default handler name from ts.torch_handler), then answers batches from the
channel on file descriptor --fd (src/backend/python/handler_channel.h):
a 16-byte header (kind, rows, payload bytes) and the rows, each
[u32 content_type_len][u64 body_len][content_type][body].
"""
import argparse
import importlib
import inspect
import json
import os
import socket
import struct
import sys
import threading
import time
import traceback
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = struct.Struct("=IIQ")
ROW = struct.Struct("=IQ")
BATCH, READY, ANSWERS, ERROR = 1, 2, 3, 4


def send_frame(sock, kind, rows, payload=b""):
    sock.sendall(HEADER.pack(kind, rows, len(payload)) + payload if len(payload) < 65536
                 else HEADER.pack(kind, rows, len(payload)))
    if len(payload) >= 65536:
        sock.sendall(payload)


def recv_exactly(sock, size):
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:], size - got)
        if n == 0:
            return None
        got += n
    return buf


def check_requirements(model_dir, manifest):
    """inferd installs nothing at run time: every requirement must be installed."""
    name = (manifest or {}).get("model", {}).get("requirementsFile")
    if not name:
        return
    from importlib import metadata
    missing = []
    with open(os.path.join(model_dir, name)) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("-"):
                continue
            package = line
            for cut in "<>=!~[; ":
                package = package.split(cut, 1)[0]
            try:
                metadata.distribution(package)
            except metadata.PackageNotFoundError:
                missing.append(package)
    if missing:
        raise RuntimeError(
            "%s needs %s, not installed: inferd downloads nothing at run time "
            "(TorchServe would pip-install them); install them on the node (Debian packages: "
            "python3-<name>) or in the image" % (name, ", ".join(missing)))


def load_entry_point(handler, model_dir):
    sys.path.insert(0, model_dir)
    module_name, _, function_name = handler.partition(":")
    if module_name.endswith(".py"):
        module_name = module_name[:-3]
    module_name = module_name.split("/")[-1]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        if os.path.exists(os.path.join(model_dir, module_name + ".py")):
            raise
        module = importlib.import_module("." + module_name, "ts.torch_handler")
    function_name = function_name or "handle"
    if hasattr(module, function_name) and callable(getattr(module, function_name)) \
            and not inspect.isclass(getattr(module, function_name)):
        entry = getattr(module, function_name)
        return entry, (lambda ctx: entry(None, ctx))
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if c.__module__ == module.__name__]
    if len(classes) != 1:
        raise ValueError("expected one class in the handler module or a function entry point, "
                         "found %s" % [c.__name__ for c in classes])
    service = classes[0]()
    if not hasattr(service, "handle"):
        raise ValueError("handler class %s has no handle method" % classes[0].__name__)
    return service.handle, service.initialize


def decode_input(content_type, body):
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "application/json":
        try:
            return json.loads(body.decode("utf-8"))
        except Exception:
            return body
    if media.startswith("text"):
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return body
    return body


def parse_rows(payload, count):
    rows, types, offset = [], [], 0
    view = memoryview(payload)
    for _ in range(count):
        ct_len, body_len = ROW.unpack_from(payload, offset)
        offset += ROW.size
        content_type = bytes(view[offset:offset + ct_len]).decode("latin-1")
        offset += ct_len
        body = bytes(view[offset:offset + body_len])
        offset += body_len
        value = decode_input(content_type, body)
        rows.append({"body": value, "data": value})
        types.append(content_type)
    return rows, types


def response_meta(context, idx):
    """What the handler set with context.set_response_status / set_response_header, as lines
    after the content type (src/http/torchserve_codec.cc reads them): ":status: 201" and
    "Name: value". Empty when it set nothing, so the common answer is unchanged."""
    meta = []
    try:
        code, _ = context.get_response_status(idx)
        headers = context.get_response_headers(idx)
    except (IndexError, TypeError, AttributeError):
        return ""
    if code != 200:
        meta.append(":status: %s" % code)
    for key, value in (headers or {}).items():
        meta.append("%s: %s" % (str(key).replace("\r", " ").replace("\n", " "),
                                str(value).replace("\r", " ").replace("\n", " ")))
    return "".join("\n" + line for line in meta)


def encode_answer(value, content_type, meta=""):
    if isinstance(value, (bytes, bytearray)):
        body, default = bytes(value), "application/octet-stream"
    elif isinstance(value, str):
        body, default = value.encode("utf-8"), "text/plain; charset=utf-8"
    else:
        body, default = json.dumps(value).encode("utf-8"), "application/json"
    ct = ((content_type or default) + meta).encode("latin-1", "replace")
    return ROW.pack(len(ct), len(body)) + ct + body


def recv_frame(sock, expected_kind):
    """The next frame's (rows, payload); None when the channel ends or says anything else."""
    header = recv_exactly(sock, HEADER.size)
    if header is None:
        return None
    kind, count, size = HEADER.unpack(header)
    payload = recv_exactly(sock, size) if size else bytearray()
    if payload is None or kind != expected_kind:
        return None
    return count, payload


def serve(sock, entry, context):
    while True:
        frame = recv_frame(sock, BATCH)
        if frame is None:
            return
        count, payload = frame
        rows, types = parse_rows(payload, count)
        context.reset(count, types)
        try:
            answers = entry(rows, context)
            if not isinstance(answers, list) or len(answers) != count:
                raise ValueError("the handler returned %s for a batch of %d requests: it must "
                                 "return a list of one answer per request" %
                                 (type(answers).__name__ if not isinstance(answers, list)
                                  else "%d answers" % len(answers), count))
            encoded = [encode_answer(a, context.get_response_content_type(i),
                                     response_meta(context, i))
                       for i, a in enumerate(answers)]
        except Exception as e:  # the handler's own error: this batch fails, the worker goes on
            # PredictionException(message, error_code): its 4xx code says the request was bad.
            code = getattr(e, "error_code", 500)
            code = code if isinstance(code, int) and 400 <= code < 500 else 500
            if code == 500:
                traceback.print_exc()
            send_frame(sock, ERROR, code, ("handler error: %s: %s" % (type(e).__name__, e))
                       .encode("utf-8", "replace"))
            continue
        width = max(len(a) for a in encoded)
        send_frame(sock, ANSWERS, count, b"".join(a.ljust(width, b"\0") for a in encoded))


def watch_parent():
    """Ends this worker when the server that started it is gone (killed, crashed): the channel's
    end of file says so too, but not to a worker busy in a long forward or handler."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="inferd-parent-watch", daemon=True).start()


def start_worker():
    """The arguments the server starts every worker with (handler_process.cc), its channel,
    and the watch that ends the worker with its server: (args, socket)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--handler", required=True)
    parser.add_argument("--model-name", required=True)
    parser.add_argument("--batch-size", type=int, default=1)
    args = parser.parse_args()
    sock = socket.socket(fileno=args.fd)
    watch_parent()
    return args, sock


def main():
    args, sock = start_worker()
    sys.path.insert(0, HERE)
    os.chdir(args.model_dir)
    try:
        manifest_path = os.path.join(args.model_dir, "MAR-INF", "MANIFEST.json")
        manifest = None
        if os.path.exists(manifest_path):
            with open(manifest_path) as f:
                manifest = json.load(f)
        check_requirements(args.model_dir, manifest)
        try:
            import torch
            torch.set_num_threads(1)
        except ImportError:
            pass
        from ts.context import Context
        context = Context(args.model_name, args.model_dir, manifest, args.batch_size, None, "inferd")
        entry, initialize = load_entry_point(args.handler, args.model_dir)
        initialize(context)
    except BaseException as e:  # import error, initialize error: the load fails with it
        traceback.print_exc()
        send_frame(sock, ERROR, 0, ("%s: %s" % (type(e).__name__, e)).encode("utf-8", "replace"))
        sys.exit(1)
    send_frame(sock, READY, 0)
    serve(sock, entry, context)


if __name__ == "__main__":
    main()
