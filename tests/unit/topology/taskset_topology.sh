#!/usr/bin/env bash
# `taskset -c CPU inferd topology --json` must report 1 usable core, pinned to CPU.
# Usage: taskset_topology.sh PATH/TO/inferd   (ctest: add_test with $<TARGET_FILE:inferd>)
# Exit 0 on success, 1 on failure, 77 (skip) when taskset is missing.
set -u
bin=${1:?usage: $0 PATH/TO/inferd}
command -v taskset >/dev/null || { echo "SKIP: taskset not installed"; exit 77; }
# The first CPU this shell may run on (cpu 0 unless excluded).
cpu=$(taskset -cp $$ | sed 's/.*: //; s/[,-].*//')
out=$(taskset -c "$cpu" "$bin" topology --json) || { echo "FAIL: $bin topology --json failed"; exit 1; }
usable=$(grep -o '"usable_cores":[0-9]*' <<<"$out" | cut -d: -f2)
cpus=$(grep -o '"usable_cpus":\[[0-9,]*\]' <<<"$out")
if [[ "$usable" != 1 || "$cpus" != "\"usable_cpus\":[$cpu]" ]]; then
  echo "FAIL: under taskset -c $cpu: usable_cores=$usable, $cpus; want 1 and [$cpu]"
  echo "$out"
  exit 1
fi
echo "OK: taskset -c $cpu gives usable_cores 1 on cpu $cpu"
