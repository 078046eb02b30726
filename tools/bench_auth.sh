#!/usr/bin/env bash
# What --auth-keys costs (issue 30): the trivial model (the test store's
# identity_fp32, 4 floats in and out, v2 JSON) served with and without API
# keys by the same binary, side by side through tools/bench_ab.sh (both
# servers up, interleaved rounds, medians, CPU per answered request). A has no
# keys; B has a key file of 3 inference keys and 1 management key, and the
# bench sends the last inference key (the check compares against every key).
#
#   tools/bench_auth.sh [BINARY]      env: as bench_ab.sh (CONCS="8" ROUNDS=7 DURATION=4
#                                     WARM_S=5 OUT=bench-out/auth-<time>); SWAP=1 puts the
#                                     keys on A instead (order effects show as a sign flip)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=$(realpath "${1:-build/inferd}")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 tools/make_models.py --test-store "$TMP/store" --threads 1 > /dev/null
cat > "$TMP/keys.yaml" <<'YAML'
inference: [bench-inference-key-00000001, bench-inference-key-00000002, bench-inference-key-00000003]
management: [bench-management-key-0000001]
YAML
KEYED=B
[ "${SWAP:-0}" = 1 ] && KEYED=A
echo '{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}' > "$TMP/body.json"
env STORE_A="$TMP/store" MODEL=identity_fp32 IMAGE="$TMP/body.json" FORM=v2json \
  CONCS="${CONCS:-8}" ROUNDS="${ROUNDS:-7}" DURATION="${DURATION:-4}" WARM_S="${WARM_S:-5}" \
  "SERVE_ARGS_$KEYED=--auth-keys $TMP/keys.yaml" \
  "HEADER_$KEYED=Authorization: Bearer bench-inference-key-00000003" \
  OUT="${OUT:-bench-out/auth-$(date +%Y%m%d-%H%M%S)}" \
  bash tools/bench_ab.sh "$BIN" "$BIN"
