#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Packs what the plugin's tests and bench_cube.sh need from this machine's
# Debian OpenFOAM into one tarball, for a machine that has no network (and
# no apt) to install it: icoFoam and blockMesh with the shared libraries
# they load (glibc's own excepted), OpenFOAM's etc/ folder and the headers
# scripts/openfoam-headers.sh fetched.  About 20 MB (xz).  On the other
# machine:
#   mkdir -p /opt/foam && tar -xJf openfoam-bundle.tar.xz -C /opt/foam
#   . /opt/foam/env.sh        # PATH, LD_LIBRARY_PATH, WM_PROJECT_DIR, FOAM_SRC, FOAM_LIBBIN
#   cmake -S . -B build ... && cmake --build build && (cd build && ctest -R openfoam)
# usage: openfoam/bundle.sh OUT.tar.xz
set -eu
out=$1
for p in icoFoam blockMesh; do
  command -v "$p" >/dev/null 2>&1 || { echo "bundle: $p not found (Debian package openfoam)" >&2; exit 1; }
done
ver=$(dpkg-query -W -f='${source:Version}' libopenfoam)
src=""
for c in ${BSR_OPENFOAM_CACHE:-} /var/cache/bsrsolve ${XDG_CACHE_HOME:-$HOME/.cache}/bsrsolve; do
  [ -f "$c/openfoam-$ver/src/OpenFOAM/lnInclude/lduMatrix.H" ] && { src=$c/openfoam-$ver/src; break; }
done
[ -n "$src" ] || { echo "bundle: no headers for openfoam $ver: run scripts/openfoam-headers.sh" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib" "$tmp/share"
cp -L "$(command -v icoFoam)" "$(command -v blockMesh)" "$tmp/bin/"
ldd "$tmp/bin/icoFoam" "$tmp/bin/blockMesh" | awk '/=> \// { print $3 }' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
  while read -r l; do cp -L "$l" "$tmp/lib/"; done
cp -r /usr/share/openfoam "$tmp/share/openfoam"
cp -r "$src" "$tmp/src"
cat > "$tmp/env.sh" <<'EOS'
# source me: the bundled OpenFOAM
foam_dir=$(cd "$(dirname "${BASH_SOURCE:-$0}")" 2>/dev/null && pwd)
[ -f "$foam_dir/bin/icoFoam" ] || foam_dir=/opt/foam
export PATH=$foam_dir/bin:$PATH
export LD_LIBRARY_PATH=$foam_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export WM_PROJECT_DIR=$foam_dir/share/openfoam
export FOAM_SRC=$foam_dir/src
export FOAM_LIBBIN=$foam_dir/lib
EOS
tar -cJf "$out" -C "$tmp" .
echo "bundle: $out ($(du -h "$out" | cut -f1)): OpenFOAM $ver, $(ls "$tmp/lib" | wc -l) libraries"
