"""The load generator: `inferd bench`, one step, its JSON report (see __init__.py for why this one)."""

import json
import os
import subprocess
import tempfile

from .server import default_binary, launch_prefix


def bench_command(url, model, inputs, concurrency=8, duration=5, warmup=1, windows=1,
                  max_windows=None, form=None, protocol=None, metrics_url=None, json_path=None,
                  extra=(), binary=None, cpus=None, nice=None):
    """The argv of one `inferd bench` run (closed loop at `concurrency`; `extra` for --rate,
    --http-header, --timeout, ...)."""
    argv = launch_prefix(cpus, nice) + [
        binary or default_binary(), "bench", "--url", url, "--model", model,
        "--input", str(inputs), "--concurrency", str(concurrency), "--duration", str(duration),
        "--warmup", str(warmup), "--windows", str(windows),
        "--max-windows", str(max_windows or windows), "--no-progress"]
    if form:
        argv += ["--form", form]
    if protocol:
        argv += ["--protocol", protocol]
    if metrics_url:
        argv += ["--metrics-url", metrics_url]
    if json_path:
        argv += ["--json", json_path]
    return argv + list(extra)


def bench(url, model, inputs, json_path=None, **kw):
    """Runs one `inferd bench` and returns its JSON report ({"steps": [...], ...}); raises
    CalledProcessError (with the tool's output) when it fails."""
    tmp = None
    if json_path is None:
        fd, tmp = tempfile.mkstemp(suffix=".json", prefix="harness-bench-")
        os.close(fd)
    try:
        argv = bench_command(url, model, inputs, json_path=json_path or tmp, **kw)
        subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        with open(json_path or tmp) as f:
            return json.load(f)
    finally:
        if tmp:
            os.unlink(tmp)
