"""inferd's worker for a TorchScript model with `isolation: process`.

Started by the server (src/backend/python/handler_process.cc), never by hand,
with the same arguments as inferd_worker.py (--handler names the model file).
It loads the model with torch.jit.load on one torch thread and runs each batch
the scheduler formed: a kTensors frame (src/backend/python/tensor_frame.h)
in, the forward's outputs (a tensor, a tuple or list of tensors, or a dict of
them in its own order) out as another kTensors frame. An exception in forward
fails that batch (500 with its text); the process goes on.
"""
import os
import struct
import sys
import traceback

# The channel's frames and the worker's start-up are the handler worker's (same folder).
from inferd_worker import HEADER, recv_frame, start_worker

HEAD = struct.Struct("=IIQ")  # dtype, ndim, byte_size
READY, ERROR, TENSORS = 2, 4, 5


def main():
    args, sock = start_worker()
    try:
        import torch
        torch.set_num_threads(1)
        # inferd::DataType's order: BOOL, UINT8, INT8, INT16, INT32, INT64, FP16, BF16, FP32, FP64.
        dtypes = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                  torch.float16, torch.bfloat16, torch.float32, torch.float64]
        codes = {d: i for i, d in enumerate(dtypes)}
        model = torch.jit.load(os.path.join(args.model_dir, args.handler), map_location="cpu")
        model.eval()
    except BaseException as e:  # the load fails with it
        traceback.print_exc()
        text = ("%s: %s" % (type(e).__name__, e)).encode("utf-8", "replace")
        sock.sendall(HEADER.pack(ERROR, 0, len(text)) + text)
        sys.exit(1)
    sock.sendall(HEADER.pack(READY, 0, 0))

    def read_tensors(payload, count):
        out, offset = [], 0
        for _ in range(count):
            dtype, ndim, size = HEAD.unpack_from(payload, offset)
            offset += HEAD.size
            shape = struct.unpack_from("=%dq" % ndim, payload, offset)
            offset += 8 * ndim
            data = memoryview(payload)[offset:offset + size]
            offset += size
            t = torch.frombuffer(data, dtype=dtypes[dtype]) if size else \
                torch.empty(0, dtype=dtypes[dtype])
            out.append(t.reshape(shape))
        return out

    def flatten(result):
        if isinstance(result, torch.Tensor):
            return [result]
        if isinstance(result, (tuple, list)):
            return list(result)
        if isinstance(result, dict):
            return list(result.values())
        raise TypeError("forward() returned %s; expected a tensor, a tuple or list of tensors, "
                        "or a Dict[str, Tensor]" % type(result).__name__)

    while True:
        frame = recv_frame(sock, TENSORS)
        if frame is None:
            return
        count, payload = frame
        try:
            with torch.inference_mode():
                outputs = flatten(model(*read_tensors(payload, count)))
            heads, datas = [], []
            for t in outputs:
                if not isinstance(t, torch.Tensor):
                    raise TypeError("forward() returned a %s where a tensor was expected" %
                                    type(t).__name__)
                t = t.detach().contiguous()
                # The tensor's own bytes, not copied (bf16 has no numpy type: seen as int16).
                data = memoryview((t.view(torch.int16) if t.dtype == torch.bfloat16 else t)
                                  .numpy()).cast("B")
                heads.append(HEAD.pack(codes[t.dtype], t.dim(), data.nbytes) +
                             struct.pack("=%dq" % t.dim(), *t.shape))
                datas.append(data)
            total = sum(len(h) for h in heads) + sum(d.nbytes for d in datas)
            if total < 65536:  # one write: small answers are the common case
                sock.sendall(HEADER.pack(TENSORS, len(outputs), total) +
                             b"".join(h + d.tobytes() for h, d in zip(heads, datas)))
            else:
                sock.sendall(HEADER.pack(TENSORS, len(outputs), total))
                for h, d in zip(heads, datas):
                    sock.sendall(h)
                    sock.sendall(d)
        except Exception as e:  # forward's own error: this batch fails, the worker goes on
            traceback.print_exc()
            text = ("model '%s' failed in forward(): %s: %s" % (args.model_name, type(e).__name__, e)
                    ).encode("utf-8", "replace")
            sock.sendall(HEADER.pack(ERROR, 500, len(text)) + text)


if __name__ == "__main__":
    main()
