#!/usr/bin/env bash
# The whole measurement behind docs/PERFORMANCE.md, unattended, in one run:
#   1. per model: tools/bench_vs_python.sh with every configuration of the
#      Python baseline (../shared/peers/fastapi_torch/run.sh, the tuned
#      gunicorn2_t1_tcmalloc included) and inferd, the plain binary as built
#      (no LD_PRELOAD, no GLIBC_TUNABLES: both are removed from the
#      environment here), same TorchScript file, same image, `inferd bench`
#      closed-loop sweep at CONCURRENCY, then wrk at HEADLINE; page faults, CPU
#      and RSS of every server's processes around the wrk run;
#   2. per model: the in-process ceiling (build/inferd_ceiling, 2 executors x 1
#      thread, decode + pre-processing + model, the same allocator as the
#      server) and, when build-alloc-system/ holds a ceiling built with glibc's
#      defaults (INFERD_ALLOCATOR=system), the same run with it: page faults
#      per call before/after the allocator change;
#   3. inferd's calibration table and execution variants, from its log.
# Writes everything under OUT and OUT/report.md (the tables, with ratios).
#
#   tools/perf_report.sh
#   env (defaults): MODELS="mobilenet_v3_small resnet50" IMAGE=examples/images/cat.jpg
#     CONFIGS="inferd gunicorn2_t1_tcmalloc gunicorn2_t1 gunicorn2 uvicorn1"
#     CONCURRENCY=1,4,8,16 HEADLINE=8 DURATION=5 WARMUP=3 WINDOWS=3 MAX_WINDOWS=4
#     WRK_DURATION=15s ROUNDS=1 CEIL_S=8 CEILING_BUILDS="build build-alloc-system"
#     OUT=bench-out/report-<time>
#     PEERS=../shared/peers/fastapi_torch
# Takes about 12 min per model and round with the defaults (ResNet-50 needs
# `tools/make_models.py --store examples/model-store --with-resnet50`, which
# bench_vs_python.sh runs when the file is missing). On a noisy machine use
# ROUNDS=3: the tables then give the median per step.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
unset LD_PRELOAD GLIBC_TUNABLES MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_ \
  TCMALLOC_RELEASE_RATE OMP_NUM_THREADS MKL_NUM_THREADS 2>/dev/null || true
MODELS=${MODELS:-"mobilenet_v3_small resnet50"}
IMAGE=$(realpath "${IMAGE:-examples/images/cat.jpg}")
export CONFIGS=${CONFIGS:-"inferd gunicorn2_t1_tcmalloc gunicorn2_t1 gunicorn2 uvicorn1"}
export CONCURRENCY=${CONCURRENCY:-1,4,8,16} HEADLINE=${HEADLINE:-8}
export DURATION=${DURATION:-5} WARMUP=${WARMUP:-3} WINDOWS=${WINDOWS:-3}
export MAX_WINDOWS=${MAX_WINDOWS:-4} WRK_DURATION=${WRK_DURATION:-15s} ROUNDS=${ROUNDS:-1}
CEIL_S=${CEIL_S:-8}
STORE=$(realpath "${STORE:-examples/model-store}")
export STORE
# The Python baseline: ../shared/peers beside the repository (or beside a worktree's parent).
if [ -z "${PEERS:-}" ]; then
  for p in "$ROOT/../shared/peers/fastapi_torch" "$ROOT/../../shared/peers/fastapi_torch"; do
    [ -f "$p/run.sh" ] && PEERS=$(realpath "$p") && break
  done
fi
export PEERS=${PEERS:?no ../shared/peers/fastapi_torch: set PEERS}
OUT=$(realpath -m "${OUT:-bench-out/report-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$OUT"
load() { cut -d" " -f1-3 /proc/loadavg; }
compilers() { pgrep -c -x cc1plus || true; }
started=$(date -u +%s)

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) usable cpus"
  echo "libtorch: $(dpkg-query -W -f='${Version}' libtorch1.13 2>/dev/null || echo '?')"
  echo "inferd's allocator: $(ldd build/inferd | grep -oE 'lib(tcmalloc[a-z_]*|jemalloc)\.so[.0-9]*' | head -1 || echo 'glibc malloc')"
  echo "environment: LD_PRELOAD='${LD_PRELOAD:-}' GLIBC_TUNABLES='${GLIBC_TUNABLES:-}'"
  echo "sweep: CONCURRENCY=$CONCURRENCY DURATION=$DURATION WARMUP=$WARMUP WINDOWS=$WINDOWS MAX_WINDOWS=$MAX_WINDOWS ROUNDS=$ROUNDS; wrk c=$HEADLINE $WRK_DURATION"
  echo "load average at start: $(load); other compilers running: $(compilers)"
} > "$OUT/setup.txt"
cat "$OUT/setup.txt" >&2

# Samples the machine's load every 10 s while the run lasts: the report says
# how noisy it was.
( while :; do echo "$(date -u +%T) load $(load) compilers $(compilers)"; sleep 10; done ) \
  > "$OUT/load.txt" 2>/dev/null &
SAMPLER=$!
trap 'kill $SAMPLER 2>/dev/null || true' EXIT

for model in $MODELS; do
  echo "== $model vs the Python stack, load $(load)" >&2
  OUT="$OUT/$model" tools/bench_vs_python.sh "$model" "$IMAGE" > "$OUT/$model.summary.md"
done

for model in $MODELS; do
  for build in ${CEILING_BUILDS:-build build-alloc-system}; do
    [ -x "$build/inferd_ceiling" ] || continue
    echo "== ceiling $model ($build), load $(load)" >&2
    "$build/inferd_ceiling" --model-store "$STORE" --model "$model" --instances 2 --threads 1 \
      --batch 1,2,4,8 --duration "$CEIL_S" --warmup 2 --image "$IMAGE" \
      > "$OUT/ceiling.$model.$build.txt" 2>&1 || echo "ceiling $model $build failed" >&2
  done
done
kill $SAMPLER 2>/dev/null || true

/usr/bin/python3 - "$OUT" "$MODELS" "$(( $(date -u +%s) - started ))" > "$OUT/report.md" <<'EOF'
import glob, os, re, sys
out, models, seconds = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])
print(open(os.path.join(out, "setup.txt")).read().strip().replace("\n", "  \n"))
loads = [l.split() for l in open(os.path.join(out, "load.txt"))]
if loads:
    one = sorted(float(l[2]) for l in loads)
    comp = sorted(int(l[6]) for l in loads)
    print(f"  \nrun time: {seconds // 60} min {seconds % 60} s; 1-min load average over the run "
          f"(every 10 s): min {one[0]}, median {one[len(one) // 2]}, max {one[-1]}; samples with "
          f"another compiler running: {sum(c > 0 for c in comp)} of {len(comp)}\n")
for model in models:
    print(f"\n## {model}\n")
    print(open(os.path.join(out, f"{model}.summary.md")).read())
    logs = sorted(glob.glob(os.path.join(out, model, "inferd.r*.server.log")))
    if logs:
        text = open(logs[0]).read()
        lines = [re.sub(r"^\[[^]]*\] \[[^]]*\] \[[^]]*\] ", "", l) for l in text.splitlines()
                 if "calibrat" in l or "batch " in l and "ms per item" in l or "variant" in l]
        print("\ninferd's log at load (first round):\n\n```\n" + "\n".join(lines) + "\n```")
    for path in sorted(glob.glob(os.path.join(out, f"ceiling.{model}.*.txt"))):
        build = path.rsplit(".", 2)[1]
        rows = [l for l in open(path) if "items/s" in l]
        print(f"\nin-process ceiling, {build}/inferd_ceiling, 2 executors x 1 thread, image decode + "
              f"pre-processing + model:\n\n```\n" + "".join(rows) + "```")
EOF
echo "report: $OUT/report.md" >&2
