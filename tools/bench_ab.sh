#!/usr/bin/env bash
# Two inferd binaries (or two stores) side by side: both servers up at once (an idle server costs
# nothing), a warm-up step on each, then ROUNDS rounds in which each concurrency step runs on A,
# then on B, so that the machine's drift hits both alike. Prints each step's req/s per round,
# the medians, B / A, the p99 medians, and each server's CPU per answered request (its
# /proc/PID/stat user + system time over the step, warm-up second included, divided by the
# requests answered in it): the load-independent figure, steadier than req/s on a noisy machine.
#
#   tools/bench_ab.sh A_BINARY B_BINARY
#   env: STORE_A=examples/model-store STORE_B=$STORE_A MODEL=mobilenet_v3_small
#        IMAGE=examples/images/cat.jpg CONCS="8 16" ROUNDS=5 DURATION=5 WARM_S=15
#        OUT=bench-out/ab-<time> FORM=raw|v2json|v2binary
#        SERVE_ARGS_A= SERVE_ARGS_B= (extra `serve` flags, split on spaces)
#        HEADER_A= HEADER_B= (an HTTP header the bench sends, e.g. 'Authorization: Bearer KEY')
# For a store variant (a config change), pass the same binary twice with STORE_A / STORE_B;
# for a flag variant, the same binary and store with SERVE_ARGS_B (tools/bench_auth.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
A=$(realpath "${1:?A binary}"); B=$(realpath "${2:?B binary}")
STORE_A=$(realpath "${STORE_A:-examples/model-store}"); STORE_B=$(realpath "${STORE_B:-$STORE_A}")
MODEL=${MODEL:-mobilenet_v3_small}
IMAGE=$(realpath "${IMAGE:-examples/images/cat.jpg}")
CONCS=${CONCS:-"8 16"}; ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-5}; WARM_S=${WARM_S:-15}
FORM=${FORM:-raw}
read -r -a serve_args_A <<< "${SERVE_ARGS_A:-}"; read -r -a serve_args_B <<< "${SERVE_ARGS_B:-}"
OUT=$(realpath -m "${OUT:-bench-out/ab-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$OUT"
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/A" "$OUT/B"' EXIT
for v in A B; do
  store_var=STORE_$v; args_var="serve_args_$v[@]"
  harness serve "$v" --out "$OUT" --binary "${!v}" --store "${!store_var}" -- "${!args_var}"
done
bench() {  # bench V C SECONDS JSON: one step, with the server's CPU over it in JSON's "harness"
  local header_var="HEADER_$1" extra=()
  if [ -n "${!header_var:-}" ]; then extra=(--http-header "${!header_var}"); fi
  harness bench "$OUT/$1" --binary "$A" ${4:+--json "$4"} -- --model "$MODEL" --input "$IMAGE" \
    --form "$FORM" --concurrency "$2" --duration "$3" --warmup 1 --windows 1 --max-windows 1 \
    --no-progress "${extra[@]}" > /dev/null
}
for v in A B; do bench "$v" "${CONCS%% *}" "$WARM_S" ""; done
for r in $(seq "$ROUNDS"); do
  for c in $CONCS; do
    for v in A B; do bench "$v" "$c" "$DURATION" "$OUT/$v.c$c.r$r.json"; done
  done
done
/usr/bin/python3 - "$OUT" "$ROUNDS" "$CONCS" "$A" "$B" <<'PYEOF' | tee "$OUT/summary.md"
import json, statistics, sys
out, rounds, concs, a, b = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4], sys.argv[5]
def cpu_ms(report):  # the server's CPU per answered request in the step, warm-up included
    step = report["steps"][0]
    answered = step["sent_total"] - step["in_flight_at_end"]
    return report["harness"]["server_cpu_s"] * 1000 / max(answered, 1)
print(f"A = {a}\nB = {b}\n")
print("| c | A req/s by round | B req/s by round | A median | B median | B / A | p99 A / B (medians) "
      "| CPU ms per request, A / B (medians) | B / A |")
print("|---|---|---|---|---|---|---|---|---|")
for c in concs:
    reports = {v: [json.load(open(f"{out}/{v}.c{c}.r{r}.json")) for r in range(1, rounds + 1)]
               for v in "AB"}
    st = {v: [rep["steps"][0] for rep in reports[v]] for v in "AB"}
    rps = {v: [s["requests_per_s"] for s in st[v]] for v in "AB"}
    p99 = {v: statistics.median(s["latency_ms"]["p99"] for s in st[v]) for v in "AB"}
    cpu = {v: statistics.median(cpu_ms(rep) for rep in reports[v]) for v in "AB"}
    ma, mb = statistics.median(rps["A"]), statistics.median(rps["B"])
    print(f"| {c} | {', '.join(f'{x:.0f}' for x in rps['A'])} | {', '.join(f'{x:.0f}' for x in rps['B'])} "
          f"| {ma:.1f} | {mb:.1f} | {mb / ma:.3f} | {p99['A']:.1f} / {p99['B']:.1f} ms "
          f"| {cpu['A']:.2f} / {cpu['B']:.2f} | {cpu['B'] / cpu['A']:.3f} |")
PYEOF
