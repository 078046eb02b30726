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
#   SERVE_ARGS="" (extra `serve` flags)  BENCH_ARGS="" (extra `inferd bench` flags)
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

harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT"/*.state; rm -rf "$TMP"' EXIT

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
  tag="$cfg.r$round"
  echo "== $cfg (round $round/$ROUNDS), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  echo "$tag: load average $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg.txt"
  if [ "$cfg" = inferd ]; then
    harness serve "$tag.server" --out "$OUT" --var SERVER --binary "$INFERD" --store "$TMP/store" \
      -- $SERVE_ARGS
  else
    harness peer "$tag.server" --out "$OUT" --var SERVER --peers "$PEERS" --model-dir "$TMP/py" \
      --mode "$cfg"
  fi
  . "$OUT/$tag.server.env"
  curl -sf -o "$OUT/first_answer.$cfg.json" -H "Content-Type: $CONTENT_TYPE" --data-binary @"$IMAGE" \
    "http://127.0.0.1:$SERVER_HTTP/predictions/$MODEL" || die "the first request to $cfg failed (log: $OUT/$tag.server.log)"

  harness bench "$OUT/$tag.server" --binary "$INFERD" --server-metrics --json "$OUT/$tag.json" -- \
    --model "$MODEL" \
    --input "$IMAGE" --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" \
    --windows "$WINDOWS" --max-windows "$MAX_WINDOWS" --csv "$OUT/$tag.csv" --plot "$OUT/$tag.svg" \
    $BENCH_ARGS | tee "$OUT/$tag.bench.txt" >&2

  harness proc "$SERVER_PID" > "$OUT/$tag.proc.before"
  WRK_BODY_FILE="$IMAGE" WRK_CONTENT_TYPE="$CONTENT_TYPE" \
    wrk -t1 -c"$HEADLINE" -d"$WRK_DURATION" --timeout "$WRK_TIMEOUT" --latency -s tools/wrk_post_file.lua \
    "http://127.0.0.1:$SERVER_HTTP/predictions/$MODEL" > "$OUT/$tag.wrk.txt" 2>&1 ||
    echo "bench_vs_python: wrk failed for $cfg (see $OUT/$tag.wrk.txt)" >&2

  harness proc "$SERVER_PID" > "$OUT/$tag.proc.after"
  if [ "$cfg" = inferd ]; then
    curl -sf "http://127.0.0.1:$SERVER_METRICS/metrics" > "$OUT/$tag.metrics.txt" || true
  fi
  harness stop "$OUT/$tag.server"
done
done

$PY tools/bench_compare.py "$OUT" --headline "c=$HEADLINE" | tee "$OUT/summary.md"
echo "results in $OUT" >&2
