#!/usr/bin/env bash
# Adds to a target's seed corpus (tests/fuzz/<target>/corpus) the inputs of
# a fuzzing run's corpus (BUILD_DIR/fuzz-corpus/<target>) that reach coverage
# the seeds do not: libFuzzer's -merge=1, which keeps a minimal set. The seed
# corpus is what `make test` replays, so only inputs that add coverage go in.
#
#   tests/fuzz/merge_corpus.sh BUILD_DIR [TARGET...]     (default: every target with a run corpus)
set -euo pipefail
build=${1:?build dir}
shift
src=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for d in "$build"/fuzz-corpus/*/; do targets+=("$(basename "$d")"); done
fi
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t" seeds="$src/$t/corpus" found="$build/fuzz-corpus/$t"
  [ -x "$bin" ] || { echo "merge_corpus: no $bin" >&2; exit 1; }
  [ -d "$found" ] || { echo "merge_corpus: no $found" >&2; exit 1; }
  before=$(ls "$seeds" | wc -l)
  "$bin" -merge=1 -timeout=30 -rss_limit_mb=3072 -malloc_limit_mb=2048 "$seeds" "$found" \
    > "$build/fuzz-logs/$t.merge.log" 2>&1
  echo "$t: $before -> $(ls "$seeds" | wc -l) seed inputs"
done
