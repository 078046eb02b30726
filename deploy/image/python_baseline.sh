#!/usr/bin/env bash
# The comparison of docs/SCALING.md: the seeds' Python stack (FastAPI + uvicorn
# + PyTorch + Pillow, /work/shared/peers/fastapi_torch/app.py) as a root file
# system built from the same mirror by the same tool, and inferd built the
# same way (apt resolving each package's dependencies, no Recommends, no docs,
# man pages or locales), beside build.sh's extract of exactly the loaded
# packages. Prints the three sizes; the first two are removed after measuring.
#
#   deploy/image/python_baseline.sh   (env: BIN=build/inferd OUT=build/image SUITE MIRROR)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "${BIN:-$ROOT/build/inferd}")
OUT=$(realpath -m "${OUT:-$ROOT/build/image}")
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
mkdir -p "$OUT"

# $1: a name, $2: comma-separated packages, $3: a command run in the root to check it.
measure() {
  local dir="$OUT/compare-$1"
  rm -rf "$dir"
  mmdebstrap --variant=essential --mode=root --include="$2" \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/var/log/*' \
    "$SUITE" "$dir" "$MIRROR" > "$OUT/compare-$1.log" 2>&1
  chroot "$dir" sh -c "$3" > /dev/null
  echo "$1: $(du -sb "$dir" | cut -f1) bytes, $(chroot "$dir" dpkg-query -W | wc -l) packages"
  rm -rf "$dir"
}

measure python-pytorch python3-torch,python3-fastapi,python3-uvicorn,python3-pil \
  'python3 -c "import torch, fastapi, uvicorn, PIL"'
measure inferd-by-dependency "$(paste -sd, <("$ROOT/deploy/image/runtime_packages.sh" "$BIN"))" 'test -x /bin/sleep'
[ -d "$OUT/rootfs" ] && echo "inferd (build.sh, loaded packages only): $(du -sb "$OUT/rootfs" | cut -f1) bytes, $(wc -l < "$OUT/packages.txt") packages"
