#!/usr/bin/env bash
# Builds and runs tools/auth_check_cost.cc against build/'s libraries: the
# cost of one API key check with 3 inference keys and 1 management key.
#   tools/auth_check_cost.sh            (env: BUILD=build)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/keys.yaml" <<'YAML'
inference: [bench-inference-key-00000001, bench-inference-key-00000002, bench-inference-key-00000003]
management: [bench-management-key-0000001]
YAML
S=src; L=$BUILD/src
g++ -O2 -std=c++20 -I"$S" tools/auth_check_cost.cc "$S/http/access_guard.cc" "$S/http/request_head.cc" \
  "$S/http/status_map.cc" "$S/http/json_body.cc" "$S/serving/status_codes.cc" \
  "$L/auth/libinferd_auth.a" "$L/common/libinferd_common.a" \
  -lcrypto -lyaml-cpp -lspdlog -lfmt -lsimdjson -lpthread -o "$TMP/auth_check_cost"
"$TMP/auth_check_cost" "$TMP/keys.yaml" bench-inference-key-00000003
