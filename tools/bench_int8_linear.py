#!/usr/bin/env python3
"""One linear layer in fp32, bf16 and int8 on varied row counts, one thread.

Why int8 pays on bert-base-sized encoders and not on small ones with libtorch
1.13 (docs/PRECISION.md): oneDNN's dynamic int8 linear creates its primitive
(a JIT-compiled kernel) on every call whose activation scale is new, a cost per
call that a large matrix product hides and a small one does not.

  /usr/bin/python3 tools/bench_int8_linear.py K N BATCH
  e.g. 256 256 1 (a 4 x 256 encoder's projection, one text), 768 768 1 and
       768 3072 4 (bert-base's projection and feed-forward)

Each call gets rows = BATCH x a length drawn from 4..256 (200 calls, seeded),
the same inputs for every variant; prints ms per call.
"""
import random
import sys
import time

import torch


def bench(name, f, xs):
    for x in xs[:5]:
        f(x)
    t = time.perf_counter()
    for x in xs:
        f(x)
    print(f"{name:28s} {(time.perf_counter() - t) * 1e3 / len(xs):8.3f} ms/call")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    k, n, batch = (int(a) for a in sys.argv[1:])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    random.seed(0)
    w, b = torch.randn(n, k) * 0.05, torch.randn(n)
    xs = [torch.randn(random.randrange(4, 257) * batch, k) for _ in range(200)]
    bench("fp32", lambda x: torch.nn.functional.linear(x, w, b), xs)
    wb, bb = w.bfloat16(), b.bfloat16()
    xb = [x.bfloat16() for x in xs]
    bench("bf16 (weights cast once)", lambda x: torch.nn.functional.linear(x, wb, bb), xb)
    torch.backends.quantized.engine = "onednn"
    scales = (w.abs().amax(1) / 127).clamp_min(1e-8).double()
    qw = torch.quantize_per_channel(w, scales, torch.zeros(n, dtype=torch.long), 0, torch.qint8)
    packed = torch.ops.quantized.linear_prepack(qw, b)
    bench("int8 dynamic (onednn)", lambda x: torch.ops.quantized.linear_dynamic(x, packed, False), xs)

    def static(x):  # a fixed activation scale, as static quantization would calibrate
        qx = torch.quantize_per_tensor(x, 4.0 / 127, 128, torch.quint8)
        return torch.ops.quantized.linear(qx, packed, 0.05, 128).dequantize()

    bench("int8 static (onednn)", static, xs)
    if "qnnpack" in torch.backends.quantized.supported_engines:
        torch.backends.quantized.engine = "qnnpack"
        qt = torch.quantize_per_tensor(w, float(w.abs().max() / 127), 0, torch.qint8)
        packed_q = torch.ops.quantized.linear_prepack(qt, b)
        bench("int8 dynamic (qnnpack)", lambda x: torch.ops.quantized.linear_dynamic(x, packed_q, False), xs)


if __name__ == "__main__":
    main()
