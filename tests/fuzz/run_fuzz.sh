#!/usr/bin/env bash
# Runs each fuzz target of a fuzzing build for a given time (make fuzz).
#
#   tests/fuzz/run_fuzz.sh BUILD_DIR SECONDS [TARGET...]
#
# New corpus entries go to BUILD_DIR/fuzz-corpus/<target> (merge the useful
# ones into tests/fuzz/<target>/corpus with tests/fuzz/merge_corpus.sh); a
# crashing input is written to tests/fuzz/<target>/crashes/ so that it can be
# committed with its fix, and the replay test runs it from then on.
# Prints one line per target: executions, seconds, corpus size, result.
# Environment: FUZZ_JOBS (parallel targets, default 1), FUZZ_ARGS (extra
# libFuzzer flags), FUZZ_NICE (default 10).
set -uo pipefail
build=${1:?build dir}
seconds=${2:?seconds}
shift 2
src=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in "$build"/tests/fuzz/fuzz_*; do
    [ -x "$f" ] && targets+=("$(basename "$f" | sed 's/^fuzz_//')")
  done
fi
[ ${#targets[@]} -gt 0 ] || { echo "run_fuzz: no fuzz targets in $build/tests/fuzz" >&2; exit 1; }
mkdir -p "$build/fuzz-logs"
status=0
run_one() {
  local t=$1 bin="$build/tests/fuzz/fuzz_$1" work="$build/fuzz-corpus/$1" log="$build/fuzz-logs/$1.log"
  mkdir -p "$work" "$src/$t/crashes"
  local dict=()
  [ -f "$src/$t/dict" ] && dict=(-dict="$src/$t/dict")
  # ASan's allocator limit stands in for the server's body limit; a leak check
  # at exit would flag the per-thread simdjson parser that lives for the process.
  nice -n "${FUZZ_NICE:-10}" "$bin" "$work" "$src/$t/corpus" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 -malloc_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$src/$t/crashes/" ${FUZZ_ARGS:-} >"$log" 2>&1
  local rc=$?
  local execs secs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  local result=clean
  [ $rc -ne 0 ] && result="FOUND (rc $rc, see $log)"
  printf '%-18s %12s execs %6ss  corpus %5s  %s\n' "$t" "${execs:-?}" "${secs:-?}" \
    "$(ls "$work" | wc -l)" "$result"
  return $rc
}
export -f run_one
export build seconds src
printf '%s\n' "${targets[@]}" | xargs -P "${FUZZ_JOBS:-1}" -I{} bash -c 'run_one {}' || status=1
exit $status
