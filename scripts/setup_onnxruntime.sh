#!/usr/bin/env bash
# Installs ONNX Runtime for `backend: onnxruntime` into third_party/onnxruntime
# (include/, lib/: the layout of Microsoft's release tarball, which
# -DONNXRUNTIME_ROOT=DIR can point at instead). Debian 12 has no package:
#   - the official Linux x64 build, libonnxruntime.so.1 (1.30), from the npm
#     package onnxruntime-node (bin/napi-v6/linux/x64/; only the tarball is
#     fetched: its install script, which would download a CUDA provider, never runs);
#   - the C/C++ headers of API version 29 from com.github.asus4.onnxruntime
#     (the C API is versioned: headers of 29 work with a 1.30 library).
# Idempotent: does nothing when the pinned versions are there. Node.js is not
# needed at run time.
# Optional: without npm or the npm registry (some CI machines) it warns and
# exits 0; the build then has no onnxruntime backend (CMake says so, and
# tests/e2e/test_onnxruntime.py skips when the server says it is not built).
set -euo pipefail

skip() {
  echo "setup: WARNING: ONNX Runtime not installed: $1; the onnxruntime backend will not be built" >&2
  exit 0
}

ORT_NODE=onnxruntime-node@1.30.0
ORT_HEADERS=com.github.asus4.onnxruntime@0.4.9
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${ONNXRUNTIME_INSTALL_DIR:-$root/third_party/onnxruntime}
stamp="$ORT_NODE $ORT_HEADERS"
if [ -f "$dest/lib/libonnxruntime.so.1" ] && [ -f "$dest/include/onnxruntime_cxx_api.h" ] &&
   [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
if ! command -v npm > /dev/null; then  # any npm will do (a NodeSource nodejs brings its own)
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  { $SUDO apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends npm; } ||
    skip "no npm on the PATH and apt-get could not install Debian's npm"
  command -v npm > /dev/null || skip "no npm on the PATH after installing Debian's npm"
fi
echo "setup: installing ONNX Runtime ($stamp) into $dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$ORT_NODE" "$ORT_HEADERS" > /dev/null) ||
  skip "npm pack $ORT_NODE $ORT_HEADERS failed (no npm registry reachable?)"
mkdir -p "$tmp/node" "$tmp/headers"
tar -xzf "$tmp"/onnxruntime-node-*.tgz -C "$tmp/node" package/bin/napi-v6/linux/x64/libonnxruntime.so.1 ||
  skip "$ORT_NODE has no bin/napi-v6/linux/x64/libonnxruntime.so.1"
tar -xzf "$tmp"/com.github.asus4.onnxruntime-*.tgz -C "$tmp/headers" \
  "package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers" ||
  skip "$ORT_HEADERS has no onnxruntime.framework/Headers"
rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/include"
cp "$tmp/node/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$dest/lib/"
ln -s libonnxruntime.so.1 "$dest/lib/libonnxruntime.so"
cp "$tmp/headers/package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers/"*.h \
  "$dest/include/"
echo "$stamp" > "$dest/VERSION"
