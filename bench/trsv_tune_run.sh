#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Issue 6 tuning of the sync-free level kernel, one device call: build, GPU
# trsv tests (every variant against the CPU), then every variant timed next
# to cuSPARSE in the same process, natural and ND, storage and full
# renumbering.  Run from the repository root after `. .devdeps/env.sh`.
# usage: sh bench/trsv_tune_run.sh OUT [GEN] [BUILD]
OUT=${1:-/tmp/out}; GEN=${2:-stencil3d:96:4}; B=${3:-/tmp/b-trsv2}
mkdir -p "$OUT"
T0=$(date +%s)
cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON >/dev/null || exit 1
cmake --build $B -j16 --target bsrsolve_cli test_gpu_trsv 2>&1 | grep -E "error|warning" | head -20
echo "build took $(( $(date +%s) - T0 )) s"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
T0=$(date +%s)
( cd $B && timeout -s KILL 130 stdbuf -oL ./test_gpu_trsv > "$OUT/test.log" 2>&1; echo "test rc=$?" >> "$OUT/test.log" )
echo "tests took $(( $(date +%s) - T0 )) s"
grep -E "error|Run Summary|asserts|tests |rc=|skip" "$OUT/test.log" | head -30
V="-;persist=0;persist=0+team=8;persist=1;persist=1+team=8;persist=1+team=4;persist=2+grab=1;persist=2;persist=2+team=8"
V="$V;persist=2+team=4;persist=2+team=8+grab=16;persist=1+team=8+sleep=100;persist=1+team=8+sleep=0"
V="$V;persist=0+wide=1;persist=1+wide=1;persist=2+wide=1"
for RN in full storage; do
    T0=$(date +%s)
    timeout -s KILL 110 stdbuf -oL $B/bsrsolve bench trsv --gen "$GEN" --k 1,9 --orders natural/nd --kernels level-syncfree \
        --renumber $RN --variants "$V" --csv "$OUT/tune_$RN.csv" > "$OUT/tune_$RN.log" 2>&1
    echo "bench $RN rc=$? took $(( $(date +%s) - T0 )) s"
done
# short table: order, variant, k, ms, x cuSPARSE
for RN in full storage; do
    echo "== renumber $RN"
    awk -F, 'NR > 1 { printf "%-8s %-42s %2s %8.3f %8.3f %6.2f\n", $2, $3, $4, $8, $10, $11 }' "$OUT/tune_$RN.csv"
done
