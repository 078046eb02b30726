#!/usr/bin/env bash
# precision: auto across runtimes (issue 37, part 2), side by side in one run: the same text
# model, tokenizer and 64 real texts (tools/make_text_models.py --bench) served three ways,
# rounds interleaved, `inferd bench` sending the texts round robin (tools/harness):
#
#   fp32         the branch's binary, precision: fp32 (torch fp32, as served by default)
#   auto_before  BEFORE's binary, precision: auto (the torch-only choice: fp32 / bf16)
#   auto         the branch's binary, precision: auto (torch and the ONNX files beside model.pt)
#
#   tools/bench_auto_runtimes.sh BEFORE_BINARY STORE MODEL
#   e.g. /usr/bin/python3 tools/make_text_models.py --bench /tmp/text-bench
#        mkdir -p /tmp/auto-store/bert_traced_base/1 && cp /tmp/text-bench/bert_traced_base/*.* \
#          /tmp/auto-store/bert_traced_base/ && cp /tmp/text-bench/bert_traced_base/1/model.pt \
#          /tmp/auto-store/bert_traced_base/1/ && build/inferd optimize --model-store /tmp/auto-store
#        TEXTS=/tmp/text-bench/texts tools/bench_auto_runtimes.sh /work/main/build/inferd \
#          /tmp/auto-store bert_traced_base
#
# STORE holds MODEL after `inferd optimize` (model.pt and the ONNX files). Environment
# (defaults): INFERD=build/inferd  TEXTS=STORE/../texts  CONFIGS="fp32 auto_before auto"
#   CONCURRENCY="1 8"  DURATION=15  WARMUP=3  ROUNDS=2  TIMEOUT=60 (seconds)
#   OUT=bench-out/auto-<model>-<time>
# Leaves results.jsonl (one line per step), each step's `inferd bench` JSON, the server logs,
# each server's GET /v2/models/MODEL (the choice and its table) and /metrics in $OUT.
set -euo pipefail

if [ $# -ne 3 ]; then
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
BEFORE=$(realpath "$1")
STORE=$(realpath "$2")
MODEL=$3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
INFERD=$(realpath "${INFERD:-build/inferd}")
TEXTS=$(realpath "${TEXTS:-$STORE/../texts}")
CONFIGS=${CONFIGS:-"fp32 auto_before auto"}
CONCURRENCY=${CONCURRENCY:-"1 8"}
DURATION=${DURATION:-15}; DURATION=${DURATION%s}
WARMUP=${WARMUP:-3}; WARMUP=${WARMUP%s}
ROUNDS=${ROUNDS:-2}
TIMEOUT=${TIMEOUT:-60}; TIMEOUT=${TIMEOUT%s}
OUT=$(realpath -m "${OUT:-bench-out/auto-${MODEL}-$(date +%Y%m%d-%H%M%S)}")
PY=/usr/bin/python3

die() { echo "bench_auto_runtimes: $*" >&2; exit 1; }
[ -x "$INFERD" ] || die "no $INFERD: build it first"
[ -x "$BEFORE" ] || die "no $BEFORE"
[ -f "$STORE/$MODEL/config.yaml" ] || die "no $STORE/$MODEL"
[ -f "$STORE/$MODEL/1/model.opt.onnx" ] || die "no ONNX candidates: run inferd optimize --model-store $STORE"
[ -d "$TEXTS" ] || die "no $TEXTS: set TEXTS (make_text_models.py --bench DIR writes DIR/texts)"

mkdir -p "$OUT"
TMP=$(mktemp -d)
for p in fp32 auto; do  # a store per precision, the model's files linked
  mkdir -p "$TMP/store_$p"
  cp -as "$STORE/$MODEL" "$TMP/store_$p/$MODEL"
  rm "$TMP/store_$p/$MODEL/config.yaml"
  { grep -v '^precision:' "$STORE/$MODEL/config.yaml"; echo "precision: $p"; } \
    > "$TMP/store_$p/$MODEL/config.yaml"
done

harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT"/*.state 2>/dev/null; rm -rf "$TMP"' EXIT

{
  echo "model: $MODEL ($STORE), texts: $(ls "$TEXTS" | wc -l) files ($TEXTS)"
  echo "binaries: $INFERD (fp32, auto); $BEFORE (auto_before)"
  echo "date: $(date -u +%FT%TZ), cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cpus"
  echo "inferd bench, $DURATION s per concurrency ($CONCURRENCY), warm-up $WARMUP s, rounds $ROUNDS"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/setup.txt" >&2

step() {
  local server=$1 c=$2 seconds=$3; shift 3
  harness bench "$server" --binary "$INFERD" "$@" -- --model "$MODEL" --input "$TEXTS" \
    --concurrency "$c" --duration "$seconds" --warmup 0 --windows 1 --max-windows 1 \
    --timeout "$TIMEOUT" --no-progress > /dev/null
}
for round in $(seq "$ROUNDS"); do
  for cfg in $CONFIGS; do
    tag="$cfg.r$round"
    case $cfg in
      fp32) binary=$INFERD; store=$TMP/store_fp32 ;;
      auto) binary=$INFERD; store=$TMP/store_auto ;;
      auto_before) binary=$BEFORE; store=$TMP/store_auto ;;
      *) die "unknown config $cfg" ;;
    esac
    echo "== $cfg round $round, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    harness serve "$tag.server" --out "$OUT" --var SERVER --binary "$binary" --store "$store" \
      --timeout 600
    . "$OUT/$tag.server.env"
    curl -sf "http://127.0.0.1:$SERVER_HTTP/v2/models/$MODEL" > "$OUT/$tag.model.json" || true
    curl -sf -o /dev/null -H "Content-Type: text/plain" --data-binary @"$TEXTS/00.txt" \
      "http://127.0.0.1:$SERVER_HTTP/predictions/$MODEL" || die "the first request to $cfg failed"
    step "$OUT/$tag.server" 4 "$WARMUP"
    for c in $CONCURRENCY; do
      step "$OUT/$tag.server" "$c" "$DURATION" --json "$OUT/$tag.c$c.json"
      $PY - "$OUT/$tag.c$c.json" "$OUT/$tag.model.json" "$cfg" "$round" <<'PYEOF' | tee -a "$OUT/results.jsonl" >&2
import json, sys
report, cfg, rnd = json.load(open(sys.argv[1])), sys.argv[3], int(sys.argv[4])
try:
    p = json.load(open(sys.argv[2]))["precision"] or {}
except (OSError, ValueError, KeyError):
    p = {}
s, h = report["steps"][0], report["harness"]
print(json.dumps({"config": cfg, "round": rnd, "c": s["concurrency"], "cpu_s": h["server_cpu_s"],
                  "served": f"{p.get('runtime', 'torchscript')} {p.get('chosen', 'fp32')}",
                  "requests": s["sent_total"], "failures": s["failures"],
                  "requests_per_s": s["requests_per_s"], "p50_ms": s["latency_ms"]["p50"],
                  "p90_ms": s["latency_ms"]["p90"], "p99_ms": s["latency_ms"]["p99"]}))
PYEOF
    done
    curl -sf "http://127.0.0.1:$SERVER_METRICS/metrics" > "$OUT/$tag.metrics" || true
    harness stop "$OUT/$tag.server"
  done
done
$PY - "$OUT/results.jsonl" <<'PYEOF' | tee "$OUT/table.md"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
configs = list(dict.fromkeys(r["config"] for r in rows))
print("| config | served | c | req/s by round | req/s (median) | p50 / p90 / p99 ms (medians) | CPU ms per request |")
print("|---|---|---|---|---|---|---|")
for cfg in configs:
    for c in sorted({r["c"] for r in rows}):
        rs = [r for r in rows if r["config"] == cfg and r["c"] == c]
        if not rs:
            continue
        med = lambda k: statistics.median(r[k] for r in rs)
        cpu = statistics.median(1000 * r["cpu_s"] / max(r["requests"], 1) for r in rs)
        by_round = ", ".join("%.1f" % r["requests_per_s"] for r in rs)
        print(f"| {cfg} | {rs[0]['served']} | {c} | {by_round} | "
              f"{med('requests_per_s'):.1f} | {med('p50_ms'):.0f} / {med('p90_ms'):.0f} / {med('p99_ms'):.0f} | "
              f"{cpu:.0f} |")
PYEOF
