#!/usr/bin/env bash
# Prints the Debian packages a binary needs at run time, one a line: the
# packages that own every shared library it loads (ldd, each path resolved
# through its symlinks, e.g. libblas.so.3 -> the chosen BLAS, then dpkg -S).
#   deploy/image/runtime_packages.sh build/inferd
set -euo pipefail
bin=${1:?usage: runtime_packages.sh BINARY}
ldd "$bin" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | sort -u | while read -r lib; do
  real=$(readlink -f "$lib")
  # A file is owned under its /usr path or its /lib path (merged /usr): ask for both.
  owner=$(dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null || dpkg -S "/usr$real" 2>/dev/null) || {
    echo "runtime_packages: no package owns $lib ($real)" >&2
    exit 1
  }
  echo "${owner%%:*}"
done | sort -u
