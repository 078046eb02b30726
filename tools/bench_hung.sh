#!/usr/bin/env bash
# Hung forwards beside a small model (issue 38), two binaries side by side (A before, B after),
# ROUNDS rounds, each on A then on B. A round, on a fresh server (stuck threads from the round
# before would count against the node's bound): four requests to `spinner` (the test store's
# `slow` model with max_batch_size 1, asked for 10^7 iterations: a forward of about an hour;
# deadline 2 s), sent a second after `inferd bench` began sending `small` (identity_fp32) at c=4 for
# DURATION seconds, no warm-up: its p50/p99/max and failures while they hang. Then the
# server's inferd_executors_overdue_total / _unwaited_total / _abandoned_total.
# Every server and load step goes through tools/harness.
#
#   tools/bench_hung.sh A_BINARY B_BINARY
#   env: ROUNDS=3 DURATION=5 OUT=bench-out/hung-<time>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
A=$(realpath "${1:?A binary}"); B=$(realpath "${2:?B binary}")
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-5}
OUT=$(realpath -m "${OUT:-bench-out/hung-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$OUT/test-store" "$OUT/store"
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/A" "$OUT/B"' EXIT
/usr/bin/python3 tools/make_models.py --test-store "$OUT/test-store" --threads 1 > /dev/null
rm -rf "$OUT/store/spinner" "$OUT/store/small"
cp -r "$OUT/test-store/slow" "$OUT/store/spinner"
grep -v '^max_batch_size:' "$OUT/test-store/slow/config.yaml" > "$OUT/store/spinner/config.yaml"
echo "max_batch_size: 1" >> "$OUT/store/spinner/config.yaml"
cp -r "$OUT/test-store/identity_fp32" "$OUT/store/small"
echo '{"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}]}' \
  > "$OUT/small.json"
SPIN='{"parameters": {"timeout": 2000000}, "inputs": [{"name": "iterations", "datatype": "INT64", "shape": [1, 1], "data": [10000000]}]}'
field() {  # field JSON KEY...: steps[0][KEY]... of an `inferd bench` report
  /usr/bin/python3 -c 'import functools, json, sys
print(functools.reduce(lambda v, k: v[k], sys.argv[2:], json.load(open(sys.argv[1]))["steps"][0]))' "$@"
}
echo "round binary small_p50_ms small_p99_ms small_max_ms small_rps small_failed spin_codes overdue unwaited abandoned" |
  tee "$OUT/rounds.txt"
for r in $(seq "$ROUNDS"); do
  for v in A B; do
    harness serve "$v" --out "$OUT" --binary "${!v}" --store "$OUT/store" > /dev/null 2>&1
    . "$OUT/$v.env"
    http_var="${v}_HTTP"; metrics_var="${v}_METRICS"
    url="http://127.0.0.1:${!http_var}"
    # The spinner's timing forward at load (B's "expected"): wait for it to be done.
    for _ in $(seq 100); do
      grep -q "one forward timed\|its forward not timed" "$OUT/$v.log" 2>/dev/null && break
      sleep 0.2
    done
    # The small model's load first (the bench takes a moment to start), then, a second
    # into it, the four hung forwards: the small model's requests meet them while running.
    harness bench "$OUT/$v" --binary "$A" --json "$OUT/small.$v.$r.json" -- --model small \
      --form v2json --input "$OUT/small.json" --concurrency 4 --duration "$DURATION" \
      --warmup 0 --windows 1 --max-windows 1 --timeout 60 --no-progress > /dev/null &
    bpid=$!
    for _ in $(seq 100); do  # until its first requests reached the server
      [ "$(harness metric "http://127.0.0.1:${!metrics_var}/metrics" inferd_requests_total \
           model=small 2>/dev/null || echo 0)" != "0" ] && break
      sleep 0.1
    done
    sleep 1
    for i in 1 2 3 4; do
      curl -s -o /dev/null -w '%{http_code}\n' -m 30 -H 'Content-Type: application/json' \
        -d "$SPIN" "$url/v2/models/spinner/infer" > "$OUT/spin$i.code" &
    done
    wait
    codes=$(cat "$OUT"/spin?.code | sort | uniq -c | awk '{printf "%sx%s,", $1, $2}')
    m() { harness metric "http://127.0.0.1:${!metrics_var}/metrics" "$1"; }
    j="$OUT/small.$v.$r.json"
    echo "$r $v $(field "$j" latency_ms p50) $(field "$j" latency_ms p99) $(field "$j" latency_ms max)" \
      "$(field "$j" requests_per_s) $(field "$j" failures) ${codes%,}" \
      "$(m inferd_executors_overdue_total) $(m inferd_executors_unwaited_total)" \
      "$(m inferd_executors_abandoned_total)" | tee -a "$OUT/rounds.txt"
    harness stop "$OUT/$v" 2> /dev/null
    cp "$OUT/$v.log" "$OUT/$v.$r.log"
  done
done
/usr/bin/python3 - "$OUT/rounds.txt" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
for v in "AB":
    r = [x for x in rows if x[1] == v]
    print(f"{v}: small at c=4 beside four hung forwards, medians of {len(r)} rounds: "
          f"p50 {st.median(float(x[2]) for x in r):.1f} ms, p99 {st.median(float(x[3]) for x in r):.1f} ms, "
          f"max {st.median(float(x[4]) for x in r):.1f} ms; failed {sum(int(float(x[6])) for x in r)}")
EOF
echo "load average: $(cat /proc/loadavg)"
