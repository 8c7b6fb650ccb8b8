#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds and runs outside projects against bsrsolve (registered by tests.cmake):
#   run.sh install              install the build tree into $BSR_STAGE
#   run.sh package WORK         CMake project, find_package(bsrsolve) in $BSR_STAGE
#   run.sh pkgconfig WORK       plain compiler with pkg-config flags from $BSR_STAGE
#   run.sh subdir WORK          CMake project, add_subdirectory($BSR_SOURCE)
# Each consumer must succeed, and fail when told to spoil its solution.
# Environment: CMAKE, CC, BSR_BUILD, BSR_SOURCE, BSR_STAGE, BSR_VERSION,
# BSR_FORTRAN (ON when the Fortran module was built), BSR_SAN (sanitizer flags of this build, may be empty), PKG_CONFIG (may be empty).
set -eu
mode=$1
src=$BSR_SOURCE/tests/consumer

# Run a consumer: it must pass, and must fail with --perturb.
run_both() {
  "$@"
  if "$@" --perturb >/dev/null 2>&1; then
    echo "run.sh: $* --perturb passed: the check cannot fail" >&2
    exit 1
  fi
}

# Configure, build and run the CMake consumer in $1 with extra cache arguments.
cmake_consumer() {
  work=$1; shift
  "$CMAKE" -S "$src" -B "$work" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS="$BSR_SAN" -DCMAKE_Fortran_FLAGS="$BSR_SAN" \
    -DCMAKE_EXE_LINKER_FLAGS="$BSR_SAN" -DCMAKE_SHARED_LINKER_FLAGS="$BSR_SAN" \
    -DBSR_EXPECT_VERSION="$BSR_VERSION" -DBSR_FORTRAN_EXPECTED="$BSR_FORTRAN" "$@"
  "$CMAKE" --build "$work" -j 2
  run_both "$work/consumer"
  if [ "$BSR_FORTRAN" = ON ]; then
    run_both "$work/consumer_fortran"
  else
    echo "run.sh: no Fortran consumer: bsrsolve was built without the Fortran module"
  fi
}

case $mode in
install)
  rm -rf "$BSR_STAGE"
  "$CMAKE" --install "$BSR_BUILD" --prefix "$BSR_STAGE"
  lib=$(ls -d "$BSR_STAGE"/lib*/libbsrsolve.so)
  real=$(readlink -f "$lib")
  case $real in *.so."$BSR_VERSION") ;; *) echo "run.sh: $lib -> $real, not version $BSR_VERSION" >&2; exit 1 ;; esac
  "$BSR_STAGE/bin/bsrsolve" --help >/dev/null
  ;;
package)
  cmake_consumer "$2" -DBSR_MODE=package -DCMAKE_PREFIX_PATH="$BSR_STAGE"
  ;;
subdir)
  cmake_consumer "$2" -DBSR_MODE=subdir -DBSRSOLVE_SOURCE="$BSR_SOURCE" -DBSR_CUDA=OFF
  ;;
pkgconfig)
  if [ -z "$PKG_CONFIG" ]; then
    echo "skipped: pkg-config not found (scripts/install-deps.sh installs it)"
    exit 77
  fi
  work=$2
  mkdir -p "$work"
  PKG_CONFIG_PATH=$(ls -d "$BSR_STAGE"/lib*/pkgconfig)
  export PKG_CONFIG_PATH
  v=$("$PKG_CONFIG" --modversion bsrsolve)
  [ "$v" = "$BSR_VERSION" ] || { echo "run.sh: pkg-config version $v, expected $BSR_VERSION" >&2; exit 1; }
  libdir=$("$PKG_CONFIG" --variable=libdir bsrsolve)
  # shellcheck disable=SC2046 (the flags are words)
  $CC $BSR_SAN -DEXPECT_VERSION="\"$BSR_VERSION\"" "$src/main.c" -o "$work/consumer" \
    $("$PKG_CONFIG" --cflags --libs bsrsolve) -lm -Wl,-rpath,"$libdir"
  run_both "$work/consumer"
  # Libs.private must name libraries that exist: link with them too.
  $CC $BSR_SAN "$src/main.c" -o "$work/consumer_private" \
    $("$PKG_CONFIG" --cflags --libs --static bsrsolve) -Wl,-rpath,"$libdir"
  "$work/consumer_private" >/dev/null
  ;;
*)
  echo "run.sh: unknown mode $mode" >&2
  exit 2
  ;;
esac
