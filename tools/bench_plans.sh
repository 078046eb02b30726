#!/usr/bin/env bash
# Issue 3's benchmark: executor plans through the server against the in-process
# ceiling, and the resident memory of 1 vs 2 executors.
#   1. per model: `inferd serve` on a store holding only that model, with its
#      config's `instances:` set to auto, {count: 1, threads: 2} and {count: 2,
#      threads: 1}; raw JPEG to /predictions with `inferd bench --concurrency C`.
#   2. per model: build/inferd_ceiling 2x1 pinned, 1x2 pinned, 2x2 --no-pin, with
#      --image (decode + preprocess + model) and without (model only).
#   3. resnet50 only: VmRSS of `inferd serve --models resnet50` after 20 requests,
#      {count: 1, threads: 1} on --cpus 0 against auto on both cores.
#
#   tools/bench_plans.sh   (env: MODELS="mobilenet_v3_small resnet50" STORE=examples/model-store
#                           IMAGE=examples/images/cat.jpg C=4 DURATION=5 WARMUP=3 WINDOWS=2
#                           CEIL_S=10 CEIL_PLANS="2_1 1_2 2_2_--no-pin" PARTS="serve ceiling memory" OUT=/tmp/bench-plans)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODELS=${MODELS:-"mobilenet_v3_small resnet50"}
STORE=$(realpath "${STORE:-examples/model-store}")
IMAGE=$(realpath "${IMAGE:-examples/images/cat.jpg}")
C=${C:-4}; DURATION=${DURATION:-5}; WARMUP=${WARMUP:-3}; WINDOWS=${WINDOWS:-2}
CEIL_S=${CEIL_S:-10}
CEIL_PLANS=${CEIL_PLANS:-"2_1 1_2 2_2_--no-pin"}  # instances_threads[_flag]
PARTS=${PARTS:-"serve ceiling memory"}
OUT=$(realpath -m "${OUT:-/tmp/bench-plans}")
INFERD=build/inferd
mkdir -p "$OUT"
TMP=$(mktemp -d)
PID=""
stop() { [ -n "$PID" ] && { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }; PID=""; }
trap 'stop; rm -rf "$TMP"' EXIT
load() { echo "$(cut -d" " -f1-3 /proc/loadavg), other compiles: $(pgrep -c cc1plus || true)"; }

# start MODEL INSTANCES [serve flags...]: a store holding MODEL with `instances: INSTANCES`.
start() {
  local model=$1 inst=$2; shift 2
  rm -rf "$TMP/store"; mkdir -p "$TMP/store"
  cp -as "$STORE/$model" "$TMP/store/$model"
  rm "$TMP/store/$model/config.yaml"
  sed "s/^instances:.*/instances: $inst/" "$STORE/$model/config.yaml" > "$TMP/store/$model/config.yaml"
  $INFERD serve --model-store "$TMP/store" --http-port 18080 --management-port 18081 \
    --metrics-port 18082 --grpc-port 0 "$@" > "$OUT/serve.$model.$TAG.log" 2>&1 &
  PID=$!
  for _ in $(seq 600); do curl -sf -o /dev/null http://127.0.0.1:18080/ping && break; sleep 0.2; done
  curl -sf -o /dev/null -H 'Content-Type: image/jpeg' --data-binary @"$IMAGE" \
    "http://127.0.0.1:18080/predictions/$model"
}

for model in $MODELS; do
  if [[ " $PARTS " == *" serve "* ]]; then
    for TAG in auto 1x2 2x1; do
      case $TAG in auto) inst=auto ;; 1x2) inst="{count: 1, threads: 2}" ;; 2x1) inst="{count: 2, threads: 1}" ;; esac
      start "$model" "$inst"
      echo "== serve $model instances=$TAG c=$C load $(load)" | tee -a "$OUT/summary.txt"
      $INFERD bench --url http://127.0.0.1:18080 --model "$model" --input "$IMAGE" --concurrency "$C" \
        --duration "$DURATION" --warmup "$WARMUP" --windows "$WINDOWS" --max-windows "$WINDOWS" \
        --metrics-url http://127.0.0.1:18082/metrics --json "$OUT/serve.$model.$TAG.json" \
        --no-progress | tee -a "$OUT/summary.txt"
      grep -i -m3 -E 'plan|executor|instance' "$OUT/serve.$model.$TAG.log" | tee -a "$OUT/summary.txt" || true
      stop
    done
  fi
  if [[ " $PARTS " == *" ceiling "* ]]; then
    for img in image model; do
      for plan in $CEIL_PLANS; do
        set -- ${plan//_/ }
        extra=(); [ "$img" = image ] && extra=(--image "$IMAGE")
        echo "== ceiling $model $img --instances $1 --threads $2 ${3:-} load $(load)" | tee -a "$OUT/summary.txt"
        build/inferd_ceiling --model-store "$STORE" --model "$model" --instances "$1" --threads "$2" \
          ${3:-} --duration "$CEIL_S" "${extra[@]}" 2>&1 | tail -4 | tee -a "$OUT/summary.txt"
      done
    done
  fi
done

if [[ " $PARTS " == *" memory "* ]]; then
  for TAG in 1x1-cpu0 auto-2cpus; do
    if [ $TAG = 1x1-cpu0 ]; then start resnet50 "{count: 1, threads: 1}" --models resnet50 --cpus 0
    else start resnet50 auto --models resnet50; fi
    # 20 requests, 2 at a time, so that both executors (when there are 2) run some.
    seq 20 | xargs -P2 -I{} curl -sf -o /dev/null -H 'Content-Type: image/jpeg' \
      --data-binary @"$IMAGE" http://127.0.0.1:18080/predictions/resnet50
    echo "== memory resnet50 $TAG: $(grep -E 'VmRSS|Threads' /proc/$PID/status | tr -s ' \t' ' ' | tr '\n' ' ') load $(load)" \
      | tee -a "$OUT/summary.txt"
    grep -i -m3 -E 'plan|executor|instance' "$OUT/serve.resnet50.$TAG.log" | tee -a "$OUT/summary.txt" || true
    stop
  done
fi
