#!/usr/bin/python3
"""The CPU's matrix-multiply ceiling as libtorch reaches it (issue 37, part 4): fp32, bf16 and
int8 GEMMs of N x N x N, one thread and all, with Debian's python3-torch (the same oneDNN /
BLAS / FBGEMM the server links). Prints one JSON line per case: GFLOP/s (GOP/s for int8; one
multiply-add = 2 operations) by wall time and by the process's CPU time (which a machine loaded
by others does not dilute: operations per CPU-second of the cores it got).

  tools/measure_gemm_peak.py [--n 2048] [--repeat 10]

int8 is FBGEMM's dynamically quantized Linear (the activations quantized per call, as ONNX
Runtime's DynamicQuantizeMatMul does), i.e. the VNNI path a served int8 model takes."""
import argparse
import json
import time

import torch


def bench(fn, flops, repeat):
    fn()
    fn()
    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return flops / best_wall / 1e9, flops / best_cpu / 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=2048)
    p.add_argument("--repeat", type=int, default=10)
    a = p.parse_args()
    n = a.n
    torch.manual_seed(0)
    x = torch.randn(n, n)
    w = torch.randn(n, n)
    xb, wb = x.bfloat16(), w.bfloat16()
    lin = torch.nn.Linear(n, n, bias=False)
    qlin = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(lin), {torch.nn.Linear},
                                                 dtype=torch.qint8)
    flops = 2.0 * n * n * n
    cases = [("fp32", lambda: torch.mm(x, w)), ("bf16", lambda: torch.mm(xb, wb)),
             ("int8", lambda: qlin(x))]
    with torch.inference_mode():
        for threads in (1, torch.get_num_threads() if torch.get_num_threads() > 1 else 2):
            torch.set_num_threads(threads)
            for name, fn in cases:
                wall, cpu = bench(fn, flops, a.repeat)
                print(json.dumps({"case": name, "n": n, "threads": threads,
                                  "g_per_s_wall": round(wall, 1),
                                  "g_per_s_per_cpu_second": round(cpu, 1)}), flush=True)


if __name__ == "__main__":
    main()
