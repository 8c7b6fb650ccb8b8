#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ILU2 set up on the device (issue 39): the device-against-host tests, then
# first setup, refactor and solve of ILU2 at its defaults on the issue's
# problems, each beside our ILU(0) and cuSPARSE's ILU(0) + BiCGStab in the same
# process (--compare cusparse).  Run on the GPU machine from the repository
# root after building into build-gpu; logs go to $OUT (or /tmp/ilu2_gpu).
#   sh bench/ilu2_gpu_setup.sh [tests|bench|orders|all]
set -u
OUT=${OUT:-/tmp/ilu2_gpu}
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
what=${1:-all}
cli=build-gpu/bsrsolve
run() {   # name, then the arguments of one solve
    name=$1; shift
    echo "== $name: $*" >>"$OUT/bench.log"
    timeout ${RUN_TIMEOUT:-300} "$cli" "$@" >>"$OUT/bench.log" 2>&1
    echo "   rc=$?" >>"$OUT/bench.log"
}
if [ "$what" = tests ] || [ "$what" = all ]; then
    for t in test_gpu_ilut test_gpu_ilu2 test_ilu; do
        (cd build-gpu && timeout ${TEST_TIMEOUT:-300} ./$t >"$OUT/$t.log" 2>&1; echo "$t rc=$?") | tee -a "$OUT/tests.log"
        tail -n 12 "$OUT/$t.log"
    done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    for spec in ${SPECS:-stencil3d:100:4 rotconv3d:40,4 rotconv3d:30,5 cfd3d:60,4,10 cfd3d:100,4,10 rotconv3d:100,4}; do
        rt=1e-8
        [ "$spec" = rotconv3d:100,4 ] && rt=1e-10
        run "$spec ilu2" --gen "$spec" --backend cuda --config "precond=ilu2,rtol=$rt,profile=1" --steps 2 --compare cusparse
        run "$spec ilu0" --gen "$spec" --backend cuda --config "precond=ilu0,rtol=$rt" --steps 2
    done
fi
if [ "$what" = orders ] || [ "$what" = all ]; then
    for spec in stencil3d:100:4 rotconv3d:40,4 cfd3d:60,4,10; do
        for ord in natural center rcm nd; do
            run "$spec ilu2 reorder=$ord" --gen "$spec" --backend cuda --config "precond=ilu2,reorder=$ord"
        done
    done
fi
grep -E "^== |^time|^precond|^  0 |converged|maxit|refactor|step|cuSPARSE|rc=" "$OUT/bench.log" >"$OUT/summary.log" 2>/dev/null
