#!/bin/sh
# A/B of two source trees on the GPU machine in one call: the work tree (the
# variant) against BASE (a copy of the baseline, e.g. `git archive HEAD | tar
# -x -C .ab/base`, carried with the call).  Both are built side by side, then
# the natural-order triangular solves and the ILU(0) iteration's fraction of
# its bandwidth bound are timed alternately, base first, ROUNDS times, so that
# drift of the card shows as spread rather than as a difference; last the GPU
# suites of the variant, with the real matrices when REAL names their folder.
# From the repository root, after `. .devdeps/env.sh`:
#   [ROUNDS=2] [GENS="stencil3d:100:4 ..."] [REAL=dir] sh bench/ab_gpu.sh OUT BASE
OUT=${1:?OUT}; BASE=${2:?BASE}
ROUNDS=${ROUNDS:-2}
GENS=${GENS:-"stencil3d:100:4 stencil3d:128:1 stencil3d:64:5 stencil3d:100:2"}
R=$PWD
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"
CF="-DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON -DBSR_MPI=OFF -DBSR_FORTRAN=OFF"
[ -n "${REAL:-}" ] && CF="$CF -DBSR_REAL_DIR=$(cd "$REAL" && pwd)"
T0=$(date +%s)
(cmake -S . -B /tmp/ab-var $CF && cmake --build /tmp/ab-var -j10 --target bsrsolve_cli test_gpu_trsv test_gpu_ilu test_solver) \
    > "$OUT/build_var.log" 2>&1 &
(cmake -S "$BASE" -B /tmp/ab-base $CF && cmake --build /tmp/ab-base -j6 --target bsrsolve_cli) > "$OUT/build_base.log" 2>&1 &
wait
echo "builds: $(( $(date +%s) - T0 )) s"
for b in var base; do
    [ -x /tmp/ab-$b/bsrsolve ] || { echo "build of $b failed"; tail -30 "$OUT/build_$b.log"; exit 1; }
done
r=1
while [ $r -le "$ROUNDS" ]; do
    for G in $GENS; do
        for b in base var; do
            echo "== $b $G round $r" >> "$OUT/trsv.log"
            timeout -s KILL 90 /tmp/ab-$b/bsrsolve bench trsv --gen "$G" --k 1 --orders natural \
                --kernels level-syncfree >> "$OUT/trsv.log" 2>&1
        done
    done
    for b in base var; do
        echo "== $b ilu0 natural round $r" >> "$OUT/solve.log"
        timeout -s KILL 90 /tmp/ab-$b/bsrsolve --gen stencil3d:100:4 --backend cuda \
            --config precond=ilu0,rtol=1e-8,profile=1 >> "$OUT/solve.log" 2>&1
    done
    r=$((r + 1))
done
grep -E "^== |level-syncfree" "$OUT/trsv.log" | cut -c1-160 > "$OUT/trsv-summary.txt"
grep -E "^== |of the bound" "$OUT/solve.log" | cut -c1-220 > "$OUT/solve-summary.txt"
cat "$OUT/trsv-summary.txt" "$OUT/solve-summary.txt"
cd /tmp/ab-var || exit 1
for t in test_gpu_trsv test_gpu_ilu test_solver; do
    BSR_SOURCE_DIR=$R BSR_REAL_DIR=${REAL:+$(cd "$R" && cd "$REAL" && pwd)} timeout -s KILL 200 ./$t > "$OUT/$t.log" 2>&1
    echo "$t rc=$?: $(grep -E 'asserts' "$OUT/$t.log" | head -1)"
done
