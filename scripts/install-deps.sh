#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install bsrsolve's build dependencies from Debian packages, only those missing.
# Idempotent: a machine that has them all runs no apt-get at all.
set -eu
pkgs="cmake build-essential libmetis-dev libsuitesparse-dev liblapack-dev libcunit1-dev zlib1g-dev"
# Optional: the build skips the Fortran module, the pkg-config test, the
# Python package's test (python/) and the MPI layer (src/mpi/) without them;
# `make fuzz` needs clang with its libFuzzer runtime and OpenMP library.
# python3-pip and python3-venv: `pip install ./python` into a virtual
# environment (README.md).
optional="libopenmpi-dev openmpi-bin gfortran pkg-config python3-dev python3-numpy python3-scipy python3-pytest python3-pip python3-venv clang libclang-rt-dev libomp-dev"
# The Python package's build backend, scikit-build-core >= 1.0
# (python/pyproject.toml), where Debian has one that recent (bookworm has
# none, trixie 0.11): otherwise pip fetches it from PyPI into its isolated
# build environment, and only an offline build (--no-build-isolation) needs
# it installed: pip install "scikit-build-core>=1.0" in the virtual environment.
if command -v apt-cache >/dev/null 2>&1; then
  case $(apt-cache policy python3-scikit-build-core 2>/dev/null | sed -n 's/^ *Candidate: *//p') in
    ""|"(none)"|0.*) ;;
    *) optional="$optional python3-scikit-build-core" ;;
  esac
fi
# PETSc (optional): the plugin petsc/ builds against petsc-dev, and its tests
# build PETSc's SNES ex19 from the example sources, whose package is named
# after PETSc's version (libpetsc3.18-dev-examples on bookworm): the newest
# apt knows.
optional="$optional petsc-dev"
if command -v apt-cache >/dev/null 2>&1; then
  petsc_ex=$(apt-cache search --names-only '^libpetsc[0-9.]*-dev-examples$' 2>/dev/null |
             sed 's/ .*//' | sort -V | tail -n 1)
  if [ -n "$petsc_ex" ]; then optional="$optional $petsc_ex"; fi
fi
# OpenFOAM (optional): the plugin openfoam/ builds against Debian's OpenFOAM
# (v1912 on bookworm: package openfoam, its libraries and solvers, 66 MB to
# download, 400 MB installed) and that version's headers, which Debian does
# not ship: scripts/openfoam-headers.sh then fetches them from the source
# package (45 MB to download, about 15 s, 17 MB kept), once.
optional="$optional openfoam"
missing=""
# A package counts as present when dpkg has it, or when what it provides is
# already reachable (a tool on PATH, a header under CPATH / CMAKE_PREFIX_PATH /
# the system folders): the GPU machine gets its libraries that way, with no
# network for apt-get.
have_header() {
  dirs="/usr/include /usr/include/suitesparse /usr/local/include"
  oldifs=$IFS; IFS=:
  for d in ${CPATH:-} ${C_INCLUDE_PATH:-}; do [ -n "$d" ] && dirs="$dirs $d"; done
  for d in ${CMAKE_PREFIX_PATH:-}; do [ -n "$d" ] && dirs="$dirs $d/include $d/include/suitesparse"; done
  IFS=$oldifs
  for d in $dirs; do [ -f "$d/$1" ] && return 0; done
  return 1
}
# clang compiles and links the C program on stdin with flags $@
clang_links() {
  command -v clang >/dev/null 2>&1 || return 1
  t=$(mktemp -d) || return 1
  clang "$@" -x c - -o "$t/a.out" >/dev/null 2>&1
  r=$?
  rm -rf "$t"
  return $r
}
# python3 on PATH imports module $1
py_has() {
  command -v python3 >/dev/null 2>&1 && python3 -c "import $1" >/dev/null 2>&1
}
provided() {
  case "$1" in
    cmake) command -v cmake >/dev/null 2>&1 ;;
    build-essential) command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 ;;
    gfortran) command -v gfortran >/dev/null 2>&1 ;;
    pkg-config) command -v pkg-config >/dev/null 2>&1 ;;
    libmetis-dev) have_header metis.h ;;
    libsuitesparse-dev) have_header umfpack.h ;;
    liblapack-dev) ls /usr/lib/*/liblapack.so /usr/lib/liblapack.so >/dev/null 2>&1 ;;
    libcunit1-dev) have_header CUnit/CUnit.h ;;
    zlib1g-dev) have_header zlib.h ;;
    libopenmpi-dev) command -v mpicc >/dev/null 2>&1 ;;
    openmpi-bin) command -v mpiexec >/dev/null 2>&1 ;;
    python3-dev) py_has sysconfig && python3 -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ;;
    python3-numpy) py_has numpy ;;
    python3-scipy) py_has scipy ;;
    python3-pytest) py_has pytest ;;
    python3-pip) py_has pip ;;
    python3-venv) py_has ensurepip ;;
    python3-scikit-build-core) py_has scikit_build_core ;;
    clang) command -v clang >/dev/null 2>&1 ;;
    libclang-rt-dev) echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' |
                     clang_links -fsanitize=fuzzer,address,undefined ;;
    petsc-dev) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists PETSc ;;
    libpetsc*-dev-examples) ls /usr/share/petsc/*/share/petsc/examples/src/snes/tutorials/ex19.c >/dev/null 2>&1 ;;
    openfoam) command -v icoFoam >/dev/null 2>&1 && command -v blockMesh >/dev/null 2>&1 ;;
    libomp-dev) printf '#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n' | clang_links -fopenmp ;;
    *) return 1 ;;
  esac
}
for p in $pkgs $optional; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
  provided "$p" || missing="$missing $p"
done
# the OpenFOAM headers, once OpenFOAM is installed (nothing when it is not)
here=$(cd "$(dirname "$0")" && pwd)
openfoam_headers() {
  if dpkg-query -W -f='${Status}' libopenfoam 2>/dev/null | grep -q "install ok installed"; then
    "$here/openfoam-headers.sh" ||
      echo "install-deps: the OpenFOAM headers could not be fetched: the plugin openfoam/ is skipped"
  fi
}
if [ -z "$missing" ]; then
  openfoam_headers
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  required=""
  for p in $missing; do
    case " $optional " in *" $p "*) ;; *) required="$required $p" ;; esac
  done
  if [ -z "$required" ]; then
    echo "install-deps: optional$missing not installed (no apt-get here); their parts are skipped"
    exit 0
  fi
  echo "install-deps: missing$missing and no apt-get here; install them or set CMAKE_PREFIX_PATH" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing$missing"
$sudo apt-get update -qq
# OpenFOAM without its recommended tutorials (openfoam-examples, 36 MB more)
rest=""
for p in $missing; do
  if [ "$p" = openfoam ]; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends openfoam
  else
    rest="$rest $p"
  fi
done
[ -z "$rest" ] || DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $rest
openfoam_headers
