#!/bin/sh
# Issue 6 on the GPU machine: build, GPU trsv tests, benchmarks.  Run from the
# repository root after `. .devdeps/env.sh`; OUT = folder for logs/CSV/PNG.
# usage: sh bench/trsv_gpu_run.sh OUT [GEN] [ORDERS] [KERNELS] [MIXED_ORDERS]
OUT=${1:-/tmp/out}; GEN=${2:-stencil3d:96:4}; ORDERS=${3:-natural/rcm/nd}; KERN=${4:-all}; MIXO=${5:-natural/nd}
B=/tmp/b
mkdir -p "$OUT"
cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON >/dev/null || exit 1
cmake --build $B -j16 --target bsrsolve_cli test_gpu_trsv 2>&1 | grep -E "error|warning" | head -20
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
( cd $B && timeout -s KILL 100 ./test_gpu_trsv > "$OUT/test.log" 2>&1; echo "test rc=$?" >> "$OUT/test.log" )
grep -E "error|Run Summary|asserts|tests |rc=|skip" "$OUT/test.log" | head -40
timeout -s KILL 100 $B/bsrsolve bench trsv --gen "$GEN" --k 1,5,9 --orders "$ORDERS" --kernels "$KERN" \
    --csv "$OUT/trsv.csv" --plot "$OUT/trsv.png" > "$OUT/bench.log" 2>&1
grep -vE "^ +p2[1-4] " "$OUT/bench.log"
[ -n "$MIXO" ] && timeout -s KILL 60 $B/bsrsolve bench trsv --gen "$GEN" --k 1,9 --orders "$MIXO" --kernels level-syncfree,level-graph \
    --prec mixed --csv "$OUT/trsv_mixed.csv" > "$OUT/bench_mixed.log" 2>&1
grep -E "level|==" "$OUT/bench_mixed.log"
