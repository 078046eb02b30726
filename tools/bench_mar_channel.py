#!/usr/bin/env python3
"""The cost of inferd's handler-process channel per request, beyond the handler's own time.

Builds an archive whose handler does almost nothing (answers each body's length), serves it with
the real binary, sends requests one at a time on one keep-alive connection, and reads the
server's compute time per request (inferd_compute_duration_seconds: the backend's Execute, i.e.
leasing the worker, sending the rows, the worker decoding them, calling the handler, encoding
and sending the answer, reading it back). The same handler is then called directly in Python
on the same rows; the difference is the channel's cost. Body sizes 16 B, 64 KiB and 1 MiB.

First, without HTTP or the scheduler, build/inferd_handler_channel_bench times
HandlerProcess::Run alone (medians, p90) on the same handler.

  python3 tools/bench_mar_channel.py --binary build/inferd [--requests 2000]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
sys.path.insert(0, SOURCE)
from tools.harness import InferdServer  # noqa: E402
HANDLER = '''
def handle(data, context):
    if data is None:
        return None
    return [{"bytes": len(row["body"])} for row in data]
'''


def metric(port, name, model):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and f'model="{model}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def direct_us(body, n):
    sys.path.insert(0, os.path.join(SOURCE, "share", "inferd", "python"))
    namespace = {}
    exec(HANDLER, namespace)
    rows = [{"body": body, "data": body}]
    start = time.perf_counter()
    for _ in range(n):
        json.dumps(namespace["handle"](rows, None)[0])
    return (time.perf_counter() - start) / n * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join(SOURCE, "build", "inferd"))
    p.add_argument("--requests", type=int, default=2000)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="mar-channel-")
    store = os.path.join(work, "store")
    with open(os.path.join(work, "noop_handler.py"), "w") as f:
        f.write(HANDLER)
    subprocess.run([sys.executable, os.path.join(HERE, "make_mar.py"), "--model-name", "noop",
                    "--handler", os.path.join(work, "noop_handler.py"), "--export-path", store],
                   check=True, capture_output=True)
    bench = os.path.join(os.path.dirname(os.path.abspath(args.binary)), "inferd_handler_channel_bench")
    print("in process: HandlerProcess::Run, one row per batch")
    print(subprocess.run([bench, work, "noop_handler.py", str(args.requests)], check=True,
                         capture_output=True, text=True).stdout, end="")
    for size in (16, 64 << 10, 1 << 20):
        print(f"handler called directly, {size} B body: {direct_us(b'x' * size, args.requests):.1f} us")
    print("end to end: HTTP, queue, Execute")
    server = InferdServer(store, binary=args.binary, out_dir=work, name="channel",
                          env={"INFERD_MAR_CACHE": os.path.join(work, "cache")},
                          ready_path="/v2/models/noop/ready").start()
    try:
        http_port, metrics_port = server.http, server.metrics
        conn = http.client.HTTPConnection("127.0.0.1", http_port, timeout=120)
        print("body_bytes  client_median_us  server_execute_mean_us  handler_direct_us  channel_us")
        for size in (16, 64 << 10, 1 << 20):
            body = b"x" * size
            for _ in range(100):  # warm-up
                conn.request("POST", "/predictions/noop", body=body,
                             headers={"Content-Type": "application/octet-stream"})
                conn.getresponse().read()
            s0 = metric(metrics_port, "inferd_compute_duration_seconds_sum", "noop")
            c0 = metric(metrics_port, "inferd_compute_duration_seconds_count", "noop")
            latencies = []
            for _ in range(args.requests):
                t = time.perf_counter()
                conn.request("POST", "/predictions/noop", body=body,
                             headers={"Content-Type": "application/octet-stream"})
                r = conn.getresponse()
                r.read()
                latencies.append((time.perf_counter() - t) * 1e6)
                assert r.status == 200
            s1 = metric(metrics_port, "inferd_compute_duration_seconds_sum", "noop")
            c1 = metric(metrics_port, "inferd_compute_duration_seconds_count", "noop")
            execute = (s1 - s0) / (c1 - c0) * 1e6
            handler = direct_us(body, args.requests)
            print(f"{size:10d}  {statistics.median(latencies):16.1f}  {execute:22.1f}  "
                  f"{handler:17.1f}  {execute - handler:10.1f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
