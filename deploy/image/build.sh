#!/usr/bin/env bash
# Builds the inferd container image from Debian packages only.
#  1. The runtime packages: those owning every shared library build/inferd
#     loads (runtime_packages.sh: ldd + dpkg -S), plus coreutils (the preStop's
#     /bin/sleep) with the libraries it loads, and base-files. No compiler, no
#     -dev package, no shell.
#  2. A root file system from the Debian mirror with exactly those packages:
#     mmdebstrap --variant=extract unpacks what apt downloads for them, and
#     prune_rootfs.sh (an extract hook) removes the files of every package
#     not on the list. Debian's libtorch1.13 declares dependencies the binary
#     never loads (Mesa and LLVM through OpenGL, Perl, Tesseract, GDAL data);
#     installing by dependency gives a far larger root file system
#     (python_baseline.sh measures both; docs/SCALING.md has the figures).
#     No documentation (but copyright files), man pages or locales.
#  3. What the packages' install scripts would have done and the binary needs:
#     the BLAS/LAPACK alternatives links as on this machine, ld.so.cache,
#     /etc/passwd with root and the user inferd (uid/gid 10001), /tmp. Then the
#     binary at /usr/local/bin/inferd; the loader must resolve every library.
#  4. An OCI image: buildah from scratch, the root file system copied in,
#     user, entrypoint and ports set, committed to an oci-archive.
# Writes $OUT/rootfs/, $OUT/packages.txt, $OUT/inferd-oci.tar, $OUT/sizes.txt.
#
#   deploy/image/build.sh            (env: BIN=build/inferd OUT=build/image SUITE=bookworm
#                                     MIRROR=http://deb.debian.org/debian NO_OCI=1 to stop after the rootfs)
# Needs root, mmdebstrap and buildah (`scripts/setup.sh image` installs them).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "${BIN:-$ROOT/build/inferd}")
OUT=$(realpath -m "${OUT:-$ROOT/build/image}")
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
HERE="$ROOT/deploy/image"

[ -x "$BIN" ] || { echo "build.sh: $BIN is not built (make build)" >&2; exit 1; }
mkdir -p "$OUT"
{ "$HERE/runtime_packages.sh" "$BIN"; "$HERE/runtime_packages.sh" /bin/sleep
  echo coreutils; echo base-files; } | sort -u > "$OUT/packages.txt"
echo "build.sh: $(wc -l < "$OUT/packages.txt") runtime packages (from ldd $BIN and /bin/sleep)"

rm -rf "$OUT/rootfs"
# shellcheck disable=SC2016  # the hook's $1 is mmdebstrap's root, not ours
mmdebstrap --variant=extract --mode=root \
  --include="$(paste -sd, "$OUT/packages.txt")" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --extract-hook="\"$HERE/prune_rootfs.sh\" \"\$1\" \"$OUT/packages.txt\"" \
  "$SUITE" "$OUT/rootfs" "$MIRROR"
R="$OUT/rootfs"
rm -rf "$R"/var/cache/apt/* "$R"/var/lib/apt/lists/* "$R"/var/log/*
# Libraries reached through /etc/alternatives here (libblas.so.3 -> OpenBLAS):
# the same file, linked directly.
ldd "$BIN" | awk '/=> \// {print $3}' | while read -r lib; do
  if readlink "$lib" > /dev/null && [ ! -e "$R$lib" ]; then
    ln -s "$(readlink -f "$lib")" "$R$lib"
  fi
done
ldconfig -r "$R"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\ninferd:x:10001:10001:inferd:/nonexistent:/usr/sbin/nologin\n' > "$R/etc/passwd"
printf 'root:x:0:\ninferd:x:10001:\n' > "$R/etc/group"
mkdir -p "$R/tmp" "$R/models" "$R/proc" "$R/sys" "$R/dev"
chmod 1777 "$R/tmp"
install -D -m 0755 "$BIN" "$R/usr/local/bin/inferd"
# Every library the binary loads resolves inside the root file system.
if ! chroot "$R" /lib64/ld-linux-x86-64.so.2 --list /usr/local/bin/inferd > "$OUT/ldd.txt" ||
   grep -q 'not found' "$OUT/ldd.txt"; then
  grep 'not found' "$OUT/ldd.txt" >&2 || true
  echo "build.sh: the root file system misses libraries of inferd" >&2
  exit 1
fi
echo "rootfs $(du -sb "$OUT/rootfs" | cut -f1) bytes" > "$OUT/sizes.txt"

if [ -z "${NO_OCI:-}" ]; then
  export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
  ctr=$(buildah from scratch)
  trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
  mnt=$(buildah mount "$ctr")
  cp -a "$OUT/rootfs/." "$mnt/"
  buildah umount "$ctr" >/dev/null
  # The pod's address is reachable: the default command asks for keys,
  # mounted at /etc/inferd-keys (docs/SECURITY.md; `inferd plan` mounts a Secret there).
  buildah config --user 10001:10001 --entrypoint '["/usr/local/bin/inferd"]' \
    --cmd 'serve --model-store /models --bind 0.0.0.0 --auth-keys /etc/inferd-keys/keys.yaml' \
    --port 8080 --port 8081 --port 8082 \
    --label org.opencontainers.image.title=inferd "$ctr"
  rm -f "$OUT/inferd-oci.tar"
  buildah commit --format oci "$ctr" "oci-archive:$OUT/inferd-oci.tar:inferd:latest"
  echo "oci-archive $(stat -c %s "$OUT/inferd-oci.tar") bytes" >> "$OUT/sizes.txt"
fi
cat "$OUT/sizes.txt"
