"""The one way bench scripts under tools/ start what they measure, and measure it.

Contract:
- InferdServer starts `inferd serve` on free ports (port 0 for HTTP, management,
  metrics and gRPC), stdout to OUT/NAME.stdout and stderr to OUT/NAME.log. start()
  returns once stdout holds `inferd: listening http=.. management=.. metrics=..
  grpc=..` and GET /v2/health/ready answers 200: one poll, one timeout, and a
  StartError with the log's tail when the process exits, logs that it finished
  starting without being ready (`inferd: ready=false`), or the time runs out.
- PeerServer starts the Python peer (../shared/peers/fastapi_torch/run.sh
  MODEL_DIR PORT MODE, APP=... for text_app / xgb_app). run.sh prints nothing, so
  the port is chosen here and the same poll waits for GET /ping. Both streams go
  to OUT/NAME.log.
- stop() sends SIGTERM to the server's process group (a peer's gunicorn workers or
  run.sh's uvicorn processes too) and returns the leader's exit code as
  subprocess gives it (negative: the signal that ended it); None when it was
  still running after the timeout and had to be killed.
- cpus= runs the server under `taskset -c CPUS`, nice= under `nice -n N`, env= adds
  to the caller's environment; the same three options exist for the load generator.
- tree_stats(pid) / cpu_seconds(pid): a process and every process below it (the peer's
  workers), children already reaped included: page faults, RSS, user + system time.
- scrape(url), metric(samples, name, **labels), parse_series('name{label="v"}'):
  /metrics as (name, labels, value) samples, and the sum of the samples of one series.
- bench(...): the load generator, `inferd bench` (C++, one thread; closed or open
  loop; raw, v2 JSON, v2 binary and gRPC; folders of inputs sent round robin;
  warm-up and steady-state windows; the server's own /metrics figures). It returns
  the JSON report. wrk (with tools/wrk_post_file.lua) is kept only as the second,
  independent client that bench_vs_python.sh and bench_ceiling_ratio.sh print
  beside it, so that the headline figures do not rest on our own client alone.

Shell scripts use the same code through the CLI, `python3 -m tools.harness`
(cli.py: start a server and get its ports as shell variables, stop it, run a
load step with the server's CPU over it, read a metric).

Not thread-safe: one thread owns a server object. Needs only the standard library.
"""

from .load import bench
from .probes import cpu_seconds, loadavg, metric, parse_series, scrape, tree_stats
from .server import InferdServer, PeerServer, StartError, free_port

__all__ = ["InferdServer", "PeerServer", "StartError", "bench", "cpu_seconds", "free_port",
           "loadavg", "metric", "parse_series", "scrape", "tree_stats"]
