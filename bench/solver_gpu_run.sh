#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Issue 7 on the GPU machine: build, GPU solver tests, end-to-end comparison
# with the cuSPARSE ILU(0)+BiCGStab pipeline.  Run from the repository root
# after `. .devdeps/env.sh`; OUT = folder for logs.
# usage: sh bench/solver_gpu_run.sh OUT [GRID]      (GRID 100: 1M block rows, b = 4)
OUT=${1:-/tmp/out}; G=${2:-100}
B=/tmp/b
mkdir -p "$OUT"
cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON >/dev/null || exit 1
cmake --build $B -j16 --target bsrsolve_cli test_solver test_regression 2>&1 | grep -E "error|warning" | head -20
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
# GPU tests (CPU ones run in CI): CPU vs GPU agreement, host and device vectors; regression on the device
( cd $B && BSR_TEST_FILTER=GPU BSR_CLI=$B/bsrsolve timeout -s KILL 60 stdbuf -o0 ./test_solver > "$OUT/test.log" 2>&1
  echo "test_solver rc=$?" >> "$OUT/test.log"
  [ -n "$SKIP_REGRESSION" ] || { BSR_TEST_FILTER=GPU timeout -s KILL 120 stdbuf -o0 ./test_regression >> "$OUT/test.log" 2>&1
  echo "test_regression rc=$?" >> "$OUT/test.log"; } )
grep -E "Test:|FAIL|GPU |tol|rc=|asserts" "$OUT/test.log" | head -40
bench() { t=$1; shift; echo "== $*"; timeout -s KILL "$t" $B/bsrsolve "$@" 2>&1 | grep -v "^  iteration" | grep -vE "^ +n = |fill |^bsrsolve: stencil|^bsrsolve: cfd"; }
{
bench 60 --gen stencil3d:$G:4 --backend cuda --compare cusparse --steps 2 --config precond=ilu0,reorder=natural,rtol=1e-8
bench 60 --gen stencil3d:$G:4 --backend cuda --config precond=ilu0,reorder=natural,rtol=1e-8,profile=1
bench 60 --gen stencil3d:$G:4 --backend cuda --compare cusparse --rhs random:9 --config precond=ilu0,reorder=natural,rtol=1e-8
bench 60 --gen stencil3d:$G:4 --backend cuda --rhs random:9 --config precond=ilu0,reorder=natural,rtol=1e-8,profile=1
bench 60 --gen stencil3d:$G:4 --backend cuda --compare cusparse --config precond=ilu0,reorder=natural,precond_precision=float,rtol=1e-8
bench 60 --gen stencil3d:64:4 --backend cuda --compare cusparse --config precond=ilu2,tau1=3e-2,reorder=natural,rtol=1e-8
bench 60 --gen cfd3d:64,4,10 --backend cuda --compare cusparse --config precond=ilu0,reorder=natural,rtol=1e-8
bench 60 --gen cfd3d:48,4,10 --backend cuda --compare cusparse --config precond=ilu0,reorder=natural,rtol=1e-8
bench 60 --gen cfd3d:48,4,10 --backend cuda --compare cusparse --config precond=ilu2,tau1=3e-2,reorder=natural,rtol=1e-8
bench 60 --gen cfd3d:48,4,10 --backend cuda --compare cusparse --config precond=ilu2,tau1=1e-2,rtol=1e-8,precond_precision=float
} > "$OUT/bench.log" 2>&1
cat "$OUT/bench.log"
