#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The OpenFOAM headers the plugin openfoam/ compiles against: Debian ships
# OpenFOAM's libraries (package openfoam / libopenfoam) but not its headers
# nor wmake, so this fetches the same version's Debian source package and
# keeps only src/OpenFOAM and src/OSspecific/POSIX, with the flat lnInclude
# folders wmake would make, under
#   ${BSR_OPENFOAM_CACHE:-/var/cache/bsrsolve (root) or ~/.cache/bsrsolve}/openfoam-VERSION/src
# (openfoam/CMakeLists.txt looks there).  Idempotent: nothing is fetched
# when that folder is complete.  Cost once: a deb-src line for apt when the
# machine has none (one `apt-get update`), a 45 MB download (the orig
# tarball), about 20 s to extract, 17 MB kept.
set -eu
ver=$(dpkg-query -W -f='${source:Version}' libopenfoam 2>/dev/null || true)
if [ -z "$ver" ]; then
  echo "openfoam-headers: libopenfoam is not installed; nothing to do"
  exit 0
fi
if [ -n "${BSR_OPENFOAM_CACHE:-}" ]; then cache=$BSR_OPENFOAM_CACHE
elif [ "$(id -u)" -eq 0 ]; then cache=/var/cache/bsrsolve
else cache=${XDG_CACHE_HOME:-$HOME/.cache}/bsrsolve
fi
dest=$cache/openfoam-$ver
if [ -f "$dest/src/OpenFOAM/lnInclude/lduMatrix.H" ] && [ -f "$dest/src/OSspecific/POSIX/lnInclude/fileStat.H" ]; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
# apt needs a deb-src entry: one made from the deb entries this machine has
if ! apt-get source --print-uris -qq "openfoam=$ver" >/dev/null 2>&1; then
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      $sudo tee /etc/apt/sources.list.d/bsrsolve-deb-src.sources >/dev/null
  else
    grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | sed 's/^deb /deb-src /' |
      $sudo tee /etc/apt/sources.list.d/bsrsolve-deb-src.list >/dev/null
  fi
  $sudo apt-get update -qq
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/openfoam-src.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "openfoam-headers: fetching the source of openfoam $ver (45 MB) into $dest"
(cd "$tmp" && apt-get source --download-only -qq "openfoam=$ver" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
orig=$(ls "$tmp"/openfoam_*.orig.tar.* 2>/dev/null | head -n 1)
if [ -z "$orig" ]; then
  echo "openfoam-headers: apt-get source openfoam=$ver downloaded no orig tarball" >&2
  exit 1
fi
top=$(tar -tf "$orig" | head -n 1 | cut -d/ -f1)
tar -xf "$orig" -C "$tmp" "$top/src/OpenFOAM" "$top/src/OSspecific/POSIX"
# wmakeLnInclude: every header and template source of a library, flat
for lib in OpenFOAM OSspecific/POSIX; do
  d=$tmp/$top/src/$lib
  mkdir -p "$d/lnInclude"
  (cd "$d" && find . -path ./lnInclude -prune -o -type f \
     \( -name '*.[CHh]' -o -name '*.[ch]xx' -o -name '*.[ch]pp' -o -name '*.type' \) -print |
   while read -r f; do ln -sf "../$f" "lnInclude/${f##*/}"; done)
done
rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/$top/src" "$dest/src"
echo "openfoam-headers: OpenFOAM $ver headers in $dest/src"
