#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# One call on the GPU machine after a merge: build (CUDA, no MPI), the GPU
# build's ctest, the CPU triangular-solve paths on ILU2's factors, the device
# memory of a 4M-row ILU(0) solve step by step, the headline problems beside
# cuSPARSE, and IDR(s) on the hard class.  Run from the repository root after
# `. .devdeps/env.sh`; logs go to $OUT (or /tmp/gpu_check).
#   sh bench/gpu_check.sh [build] [tests] [trsv] [memory] [headline] [idr]
# (no argument: all of them, in that order)
set -u
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
steps=${*:-build tests trsv memory headline idr}
cli=build-gpu/bsrsolve
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
if has build; then
    cmake -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=${ARCH:-90} -DBSR_MPI=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null &&
        cmake --build build-gpu -j"$(nproc)" >"$OUT/build.log" 2>&1
    echo "build rc=$?"
fi
if has tests; then
    # (ctest --rerun-failed runs every test when none failed: only after a failure)
    (cd build-gpu && OMP_NUM_THREADS=4 timeout 300 ctest -j5 --timeout 150 -E "openfoam|petsc|python" >"$OUT/ctest.log" 2>&1
     rc=$?; echo "ctest rc=$rc"; grep -E "tests passed|\*\*\*Failed|Timeout" "$OUT/ctest.log"
     [ $rc = 0 ] || timeout 120 ctest --rerun-failed --output-on-failure 2>&1 | grep -vE "passed$" | tail -40)
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
if has trsv; then
    for s in stencil3d:100:4 rotconv3d:100,4; do
        timeout 90 "$cli" bench trsvcpu --gen "$s" --orders rcm --kind ilu2 --cap auto --reps 5 2>&1 | tail -3
    done
fi
if has memory; then
    echo "== device memory, stencil3d:160:4 ILU(0)"
    timeout 90 "$cli" --gen stencil3d:160:4 --backend cuda --config precond=ilu0,profile=1,maxit=5 2>&1 |
        grep -E "device memory|^memory|^time|^problem"
fi
if has headline; then
    SPECS=${SPECS:-"stencil3d:100:4 rotconv3d:40,4 rotconv3d:30,5"} RUN_TIMEOUT=60 OUT=$OUT sh bench/ilu2_gpu_setup.sh bench
    grep -E "^==|^time|converged|maxit|break|diverg|cuSPARSE" "$OUT/bench.log"
fi
if has idr; then
    for s in rotconv3d:40,4 rotconv3d:30,5; do
        for m in idr idr,idr_s=8; do
            echo "== $s method=$m"
            timeout 60 "$cli" --gen "$s" --backend cuda --config "precond=ilu2,rtol=1e-8,method=$m" --steps 2 2>&1 |
                grep -E "^time|converged|maxit|break|diverg"
        done
    done
fi
