#!/usr/bin/env bash
# Installs the Debian packages that building, the examples and the tests need.
# Idempotent: does nothing when they are all present; runs `apt-get update` once
# before the first install. `setup.sh fuzz` adds what `make fuzz` needs
# (libFuzzer and the sanitizer runtimes of clang).
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ pkg-config
  # OpenBLAS's OpenMP build: the pthread one (which libtorch's and scipy's
  # dependencies would otherwise pull in, and which wins the libblas.so.3
  # alternative) starts threads of its own beside the executors, unpinned.
  libtorch-dev libopenblas0-openmp libopenblas-openmp-dev
  libhwloc-dev hwloc
  libboost-dev libsimdjson-dev libyaml-cpp-dev libspdlog-dev libcli11-dev
  libopencv-imgcodecs-dev libopencv-imgproc-dev libjpeg62-turbo-dev libicu-dev libsentencepiece-dev
  libgoogle-perftools-dev libjemalloc-dev libdnnl-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3-torch python3-torchvision python3-sklearn python3-numpy python3-pil python3-pytest python3-sentencepiece
  python3-pytest-xdist  # the e2e test files two at a time (tests/e2e/CMakeLists.txt)
  wrk
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler python3-grpcio python3-grpc-tools
  python3-yaml
  libssl-dev openssl  # --auth-keys (SHA-256), TLS (Beast ssl_stream); openssl makes the tests' certificates
  chromium chromium-driver python3-selenium  # tests/e2e/test_dashboard.py: the page in headless Chromium
  libxgboost-dev python3-xgboost  # backend: xgboost (src/backend/xgboost) and its reference answers
  libzip-dev  # TorchServe model archives (src/archive: .mar files are zips)
  python3-onnx  # inferd optimize: the int8 copy of an ONNX export (tools/optimize_export.py)
)
# `scripts/setup.sh image`: also the tools of deploy/image/ (make image, make image-test).
if [ "${1:-}" = image ]; then packages+=(mmdebstrap buildah); fi
# `scripts/setup.sh thread-safety`: also clang (make thread-safety, CI: its
# -Wthread-safety over src/; 42 MB that `make test` does not need).
if [ "${1:-}" = thread-safety ]; then packages+=(clang-14); fi
# `scripts/setup.sh fuzz`: also clang, libFuzzer and its sanitizer runtimes (make fuzz).
if [ "${1:-}" = fuzz ]; then packages+=(clang-14 libclang-rt-14-dev); fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# A machine that has the pthread build too (installed before): the OpenMP one
# chosen for libblas.so.3 and liblapack.so.3 (libtorch's BLAS and LAPACK).
for lib in libblas.so.3 liblapack.so.3; do
  link=$lib-x86_64-linux-gnu
  want=/usr/lib/x86_64-linux-gnu/openblas-openmp/$lib
  if [ -e "$want" ] && update-alternatives --query "$link" 2>/dev/null | grep -q '^Value: .*openblas-pthread'; then
    echo "setup: $lib: OpenBLAS's OpenMP build instead of its pthread build"
    $SUDO update-alternatives --set "$link" "$want"
  fi
done
# ONNX Runtime (backend: onnxruntime) is not a Debian package: from the npm
# registry, pinned (setup_onnxruntime.sh; no npm needed).
bash "$(dirname "$0")/setup_onnxruntime.sh"
