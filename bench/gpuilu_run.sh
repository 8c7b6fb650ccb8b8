#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# On-device ILU(0) factorization (gpuilu): build, its tests, the solver /
# regression / gpu_trsv suites and the stencil3d:100:4 time-step benchmark
# against cuSPARSE, in one device call (about 4-5 minutes).  From the
# repository root with the dependencies on the paths:
#   sh bench/gpuilu_run.sh OUTDIR [BUILDDIR]
O=${1:-/tmp/out}; B=${2:-/tmp/b-gpuilu}
mkdir -p "$O"
T0=$(date +%s)
left() { echo $(( 285 - ($(date +%s) - T0) )); }
cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON > "$O/build.log" 2>&1 &&
  cmake --build "$B" -j16 >> "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
echo "built in $(( $(date +%s) - T0 )) s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$O/gpu.txt"
date -u | tee -a "$O/gpu.txt"
cd "$B" || exit 1
timeout -s KILL 60 ./test_gpu_ilu > "$O/test_gpu_ilu.log" 2>&1; echo "test_gpu_ilu rc=$?"
grep -E "asserts|tests |Test:.*FAIL|^  [a-z]" "$O/test_gpu_ilu.log" | head -20
run() { f=$1; t=$2; shift 2; echo "== bsrsolve $*" >> "$O/$f"; timeout -s KILL "$t" ./bsrsolve "$@" >> "$O/$f" 2>&1; echo "rc=$?" >> "$O/$f"; }
OMP_NUM_THREADS=16 run bench.log 50 --gen stencil3d:100:4 --backend cuda --compare cusparse --steps 3 --config precond=ilu0,reorder=natural,rtol=1e-8
OMP_NUM_THREADS=16 run bench.log 30 --gen stencil3d:100:4 --backend cuda --steps 2 --config precond=ilu0,reorder=natural,rtol=1e-8,factor=cpu
cat "$O/bench.log" | cut -c1-200
L=$(left); [ "$L" -gt 20 ] || L=20
OMP_NUM_THREADS=8 timeout -s KILL "$L" ctest --output-on-failure -j3 -R "solver|regression|gpu_trsv" --timeout "$L" > "$O/ctest.log" 2>&1
echo "ctest rc=$? (limit $L s)"
grep -E "tests passed|Failed|\*\*\*|Passed|Skipped" "$O/ctest.log" | head
