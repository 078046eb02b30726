#!/usr/bin/env bash
# mmdebstrap extract hook of build.sh: keeps exactly the packages of LIST.
# mmdebstrap's extract variant unpacks every package apt downloads, that is
# the listed packages and all they declare as dependencies; this removes the
# files of each downloaded package not on LIST (still in ROOT's apt cache at
# this stage), and the directories left empty. (Documentation, man pages and
# locales are kept out by build.sh's dpkg path-exclude options.)
#   prune_rootfs.sh ROOT LIST
set -euo pipefail
root=${1:?usage: prune_rootfs.sh ROOT LIST}
list=${2:?usage: prune_rootfs.sh ROOT LIST}
removed=0
for deb in "$root"/var/cache/apt/archives/*.deb; do
  pkg=$(dpkg-deb -f "$deb" Package)
  grep -qxF "$pkg" "$list" && continue
  # Files and links only: directories may be shared with kept packages.
  dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -v '/$' | while read -r f; do
    rm -f "$root/${f#./}"
  done
  removed=$((removed + 1))
done
find "$root/usr" "$root/etc" -depth -type d -empty -delete
echo "prune_rootfs: removed the files of $removed packages not loaded by the binary"
