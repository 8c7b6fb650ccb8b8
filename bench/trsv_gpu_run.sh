#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Issue 6 on the GPU machine: build, GPU trsv tests, benchmarks.  Run from the
# repository root after `. .devdeps/env.sh`; OUT = folder for logs/CSV/PNG.
# usage: sh bench/trsv_gpu_run.sh OUT [GEN]
# Parts A and M produced the issue 6 section of bench/RESULTS.md; B and C
# (full renumbering, 8 lanes per row) were not measured yet.
OUT=${1:-/tmp/out}; GEN=${2:-stencil3d:96:4}
B=/tmp/b
mkdir -p "$OUT"
cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON >/dev/null || exit 1
cmake --build $B -j16 --target bsrsolve_cli test_gpu_trsv 2>&1 | grep -E "error|warning" | head -20
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
T0=$(date +%s)
( cd $B && timeout -s KILL 100 ./test_gpu_trsv > "$OUT/test.log" 2>&1; echo "test rc=$?" >> "$OUT/test.log" )
echo "tests took $(( $(date +%s) - T0 )) s"
grep -E "error|Run Summary|asserts|tests |rc=|skip" "$OUT/test.log" | head -40
# A: all level schedules, three orderings, k = 1,5,9, level-ordered storage (default)
timeout -s KILL 100 $B/bsrsolve bench trsv --gen "$GEN" --k 1,5,9 --orders natural/rcm/nd --kernels level \
    --csv "$OUT/trsv.csv" --plot "$OUT/trsv.png" > "$OUT/bench.log" 2>&1
grep -E "==|ours|cusparse|level|analysis" "$OUT/bench.log"
# M: mixed precision (float factors, double vectors)
timeout -s KILL 60 $B/bsrsolve bench trsv --gen "$GEN" --k 1,9 --orders natural/nd --kernels level-syncfree,level-graph \
    --prec mixed --csv "$OUT/trsv_mixed.csv" > "$OUT/bench_mixed.log" 2>&1
grep -E "level|==" "$OUT/bench_mixed.log"
# P: the tree kernels P21-P24 (ND only; slow)
timeout -s KILL 100 $B/bsrsolve bench trsv --gen "$GEN" --k 1,5,9 --orders nd --kernels p21,p22,p23,p24 \
    --csv "$OUT/trsv_tree.csv" > "$OUT/bench_tree.log" 2>&1
grep -E "==|p2" "$OUT/bench_tree.log"
# B: full renumbering of the unknowns
timeout -s KILL 45 $B/bsrsolve bench trsv --gen "$GEN" --k 1,9 --orders natural/nd --kernels level-syncfree,level-graph \
    --renumber full --reps 10 --csv "$OUT/trsv_full.csv" > "$OUT/bench_full.log" 2>&1
grep -E "==|ours|level|analysis" "$OUT/bench_full.log"
# C: 8 lanes per row (4 rows per warp) for k = 1
BSR_TRSV_TEAM=8 timeout -s KILL 30 $B/bsrsolve bench trsv --gen "$GEN" --k 1 --orders natural/nd --kernels level-syncfree \
    --renumber full --reps 10 > "$OUT/bench_team8.log" 2>&1
grep -E "==|level" "$OUT/bench_team8.log"
