#!/usr/bin/env bash
# Measures inferd against the usual Python stack (FastAPI + PIL + PyTorch under
# uvicorn / gunicorn, from ../shared/peers/fastapi_torch) on the same
# TorchScript file and the same image, one server at a time, with the same
# `inferd bench` sweep, then repeats the headline step with wrk (an independent
# client) so that the figures do not rest on our own tool alone.
#
#   tools/bench_vs_python.sh MODEL IMAGE
#   e.g. tools/bench_vs_python.sh mobilenet_v3_small examples/images/cat.jpg
#
# MODEL is a model of $STORE (its highest version's model.pt is what both
# servers load). Prints a side-by-side table with ratios and leaves everything
# (JSON, CSV, SVG per server, wrk output, logs, /metrics of inferd, the server
# processes' page faults, RSS and CPU before and after the wrk run) in $OUT.
#
# Environment (defaults):
#   STORE=examples/model-store  INFERD=build/inferd  PEERS=../shared/peers/fastapi_torch
#   CONFIGS="inferd uvicorn1 gunicorn2 gunicorn2_t1"  (the modes of the peers' run.sh)
#   CONCURRENCY=1,2,4,8  DURATION=5  WARMUP=3  WINDOWS=3  MAX_WINDOWS=6
#   HEADLINE=4 (wrk's concurrency)  WRK_DURATION=15s  WRK_TIMEOUT=30s  OUT=bench-out/<model>-<time>
#   ROUNDS=1 (run every configuration this many times, interleaved; the tables
#             show the median of the rounds per step: a noisy machine needs 3)
#   SERVE_ARGS="" (extra `inferd serve` flags)  BENCH_ARGS="" (extra `inferd bench` flags)
# Installs the Python baseline's Debian packages (python3-fastapi python3-uvicorn
# gunicorn python3-pil) when missing: the tests do not need them, only this.
set -euo pipefail

if [ $# -ne 2 ]; then
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
MODEL=$1
IMAGE=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
STORE=$(realpath "${STORE:-examples/model-store}")
INFERD=$(realpath "${INFERD:-build/inferd}")
PEERS=$(realpath "${PEERS:-$ROOT/../shared/peers/fastapi_torch}")
CONFIGS=${CONFIGS:-"inferd uvicorn1 gunicorn2 gunicorn2_t1"}
CONCURRENCY=${CONCURRENCY:-1,2,4,8}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-3}
WINDOWS=${WINDOWS:-3}
MAX_WINDOWS=${MAX_WINDOWS:-6}
HEADLINE=${HEADLINE:-4}
WRK_DURATION=${WRK_DURATION:-15s}
WRK_TIMEOUT=${WRK_TIMEOUT:-30s}  # wrk's own default (2 s) counts a slow model's answers as errors
ROUNDS=${ROUNDS:-1}
OUT=$(realpath -m "${OUT:-bench-out/${MODEL}-$(date +%Y%m%d-%H%M%S)}")
SERVE_ARGS=${SERVE_ARGS:-}
BENCH_ARGS=${BENCH_ARGS:-}
PY=/usr/bin/python3

die() { echo "bench_vs_python: $*" >&2; exit 1; }
[ -x "$INFERD" ] || die "no $INFERD: build it first (make build)"
[ -f "$IMAGE" ] || die "no image $IMAGE"
[ -f "$PEERS/run.sh" ] || die "no Python baseline at $PEERS (run.sh)"
command -v wrk > /dev/null || die "wrk is missing: apt-get install wrk"

# The model file: generate the example store's models if they are not there yet.
version=$(ls "$STORE/$MODEL" 2>/dev/null | grep -E '^[0-9]+$' | sort -n | tail -1 || true)
if [ -z "$version" ] || [ ! -f "$STORE/$MODEL/$version/model.pt" ]; then
  extra=""
  [ "$MODEL" = resnet50 ] && extra=--with-resnet50
  echo "bench_vs_python: making the models of $STORE" >&2
  $PY tools/make_models.py --store "$STORE" $extra >&2
  version=$(ls "$STORE/$MODEL" | grep -E '^[0-9]+$' | sort -n | tail -1)
fi
MODEL_PT="$STORE/$MODEL/$version/model.pt"
[ -f "$MODEL_PT" ] || die "no $MODEL_PT"

# The Python baseline's packages (Debian's), only if a baseline is measured.
if [ "$CONFIGS" != inferd ]; then
  missing=()
  for p in python3-fastapi python3-uvicorn gunicorn python3-pil; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "bench_vs_python: installing ${missing[*]}" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
      { $SUDO apt-get update -q >&2 &&
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; }
  fi
fi

case "${IMAGE,,}" in
  *.jpg|*.jpeg) CONTENT_TYPE=image/jpeg ;;
  *.png) CONTENT_TYPE=image/png ;;
  *.webp) CONTENT_TYPE=image/webp ;;
  *) CONTENT_TYPE=application/octet-stream ;;
esac

mkdir -p "$OUT"
TMP=$(mktemp -d)
# inferd's store holds just this model (config, labels and all); the Python
# app's MODEL_DIR holds <name>.pt: both point at the same model.pt.
mkdir -p "$TMP/store" "$TMP/py"
cp -as "$STORE/$MODEL" "$TMP/store/$MODEL"
ln -s "$MODEL_PT" "$TMP/py/$MODEL.pt"

SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM -- -"$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- -"$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
}
trap 'stop_server; rm -rf "$TMP"' EXIT

# The server's processes (its process group: gunicorn's master and workers
# too), summed from /proc/PID/stat: minor and major page faults, RSS in bytes,
# CPU seconds. Sampled around the wrk run, so that bench_compare.py can give
# page faults per request in steady state for every server alike.
proc_sample() {
  $PY - "$SERVER_PID" <<'PYEOF'
import os, sys
pgid, page, hz = int(sys.argv[1]), os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_CLK_TCK")
minflt = majflt = rss = cpu = procs = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if int(rest[2]) != pgid:
        continue
    procs += 1
    minflt += int(rest[7]); majflt += int(rest[9])
    cpu += (int(rest[11]) + int(rest[12])) / hz
    rss += int(rest[21]) * page
print(f"procs={procs} minflt={minflt} majflt={majflt} rss_bytes={rss} cpu_s={cpu:.2f}")
PYEOF
}

free_port() {
  $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits for GET /ping, then checks that one real request succeeds.
wait_ready() {
  local port=$1 log=$2
  for _ in $(seq 600); do
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$log" >&2; die "the server exited (log: $log)"; }
    curl -sf -o /dev/null "http://127.0.0.1:$port/ping" && break
    sleep 0.2
  done
  curl -sf -o "$OUT/first_answer.$3.json" -H "Content-Type: $CONTENT_TYPE" --data-binary @"$IMAGE" \
    "http://127.0.0.1:$port/predictions/$MODEL" ||
    { tail -20 "$log" >&2; die "the first request to $3 failed (log: $log)"; }
}

echo "$CONFIGS" | tr ' ' '\n' | grep -v '^$' > "$OUT/configs.txt"
{
  echo "model: $MODEL ($MODEL_PT)"
  echo "image: $IMAGE ($(stat -c %s "$IMAGE") bytes)"
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) usable cpus"
  echo "sweep: inferd bench --concurrency $CONCURRENCY --duration $DURATION --warmup $WARMUP" \
       "--windows $WINDOWS --max-windows $MAX_WINDOWS $BENCH_ARGS"
  echo "wrk: -t1 -c$HEADLINE -d$WRK_DURATION"
  echo "rounds: $ROUNDS (medians per step)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/setup.txt"
cat "$OUT/setup.txt" >&2

for round in $(seq "$ROUNDS"); do
for cfg in $CONFIGS; do
  port=$(free_port)
  tag="$cfg.r$round"
  log="$OUT/$tag.server.log"
  echo "== $cfg (round $round/$ROUNDS) on port $port, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  echo "$tag: load average $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg.txt"
  if [ "$cfg" = inferd ]; then
    mport=$(free_port)
    metrics_port=$(free_port)
    setsid "$INFERD" serve --model-store "$TMP/store" --bind 127.0.0.1 --http-port "$port" \
      --management-port "$mport" --metrics-port "$metrics_port" --grpc-port 0 $SERVE_ARGS > "$log" 2>&1 &
  else
    setsid bash "$PEERS/run.sh" "$TMP/py" "$port" "$cfg" > "$log" 2>&1 &
  fi
  SERVER_PID=$!
  wait_ready "$port" "$log" "$cfg"
  server_flags=()
  [ "$cfg" = inferd ] && server_flags=(--metrics-url "http://127.0.0.1:$metrics_port/metrics")

  "$INFERD" bench --url "http://127.0.0.1:$port" --model "$MODEL" --input "$IMAGE" \
    --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" \
    --windows "$WINDOWS" --max-windows "$MAX_WINDOWS" \
    --json "$OUT/$tag.json" --csv "$OUT/$tag.csv" --plot "$OUT/$tag.svg" "${server_flags[@]}" \
    $BENCH_ARGS \
    | tee "$OUT/$tag.bench.txt" >&2

  proc_sample > "$OUT/$tag.proc.before"
  WRK_BODY_FILE="$IMAGE" WRK_CONTENT_TYPE="$CONTENT_TYPE" \
    wrk -t1 -c"$HEADLINE" -d"$WRK_DURATION" --timeout "$WRK_TIMEOUT" --latency -s tools/wrk_post_file.lua \
    "http://127.0.0.1:$port/predictions/$MODEL" > "$OUT/$tag.wrk.txt" 2>&1 ||
    echo "bench_vs_python: wrk failed for $cfg (see $OUT/$tag.wrk.txt)" >&2

  proc_sample > "$OUT/$tag.proc.after"
  if [ "$cfg" = inferd ]; then
    curl -sf "http://127.0.0.1:$metrics_port/metrics" > "$OUT/$tag.metrics.txt" || true
  fi
  stop_server
done
done

$PY tools/bench_compare.py "$OUT" --headline "c=$HEADLINE" | tee "$OUT/summary.md"
echo "results in $OUT" >&2
