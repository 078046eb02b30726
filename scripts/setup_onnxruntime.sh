#!/usr/bin/env bash
# Installs ONNX Runtime for `backend: onnxruntime` into third_party/onnxruntime
# (include/, lib/: the layout of Microsoft's release tarball, which
# -DONNXRUNTIME_ROOT=DIR can point at instead). Debian 12 has no package:
#   - the official Linux x64 build, libonnxruntime.so.1 (1.30), from the npm
#     package onnxruntime-node (bin/napi-v6/linux/x64/; only the tarball is
#     fetched: its install script, which would download a CUDA provider, never runs);
#   - the C/C++ headers of API version 29 from com.github.asus4.onnxruntime
#     (the C API is versioned: headers of 29 work with a 1.30 library).
# The tarballs come from the npm registry by npm_tarball.py (checked against
# the registry's sha512, as npm does): neither npm nor Node.js is needed.
# Idempotent: does nothing when the pinned versions are there.
# Optional: without the npm registry (some CI machines) it warns and exits 0
# within seconds; the build then has no onnxruntime backend (CMake says so, and
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
echo "setup: installing ONNX Runtime ($stamp) into $dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pkg in "$ORT_NODE" "$ORT_HEADERS"; do
  err=$(python3 "$(dirname "$0")/npm_tarball.py" "$pkg" "$tmp" 2>&1 > /dev/null) || skip "$err"
done
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
