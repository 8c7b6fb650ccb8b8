#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A/B of source trees on the GPU machine in one call: TREE1 (the baseline)
# against TREE2.. (variants; "." is the work tree).  Each tree is a copy of
# the sources carried with the call, e.g. made here by
#   mkdir -p .ab/base && git archive HEAD | tar -x -C .ab/base
#   cp -r .ab/base .ab/v1 && (cd .ab/v1 && patch -p1 < ../../bench/diag/X.patch)
# All are built side by side, then the natural-order triangular solves of
# GENS and the ILU(0) solves of SOLVES (generators, or Matrix Market files
# relative to the repository root), with their profile (the iteration's
# fraction of its bandwidth bound), are timed tree after tree, ROUNDS times,
# so that drift of the card shows as spread rather than as a difference; last
# the GPU SUITES of each variant (BSR_TEST_QUICK=1 unless FULL_TESTS=1), with
# the real matrices when REAL names their folder; NCU=1 adds Nsight Compute's
# warp-state, scheduler, memory and source-counter (the stalls sampled by SASS
# line) sections of the pipelined kernel (natural 100^3,
# b = 4) for the first and the last tree.  Output in OUT (the device returns
# only a few files, the first by name): summary.txt (the timing lines and each
# suite's result), trsv.log, solve.log, tests.log, gpu.txt, ncu_tree*.txt, and
# build_i.log only for a build that failed.
# From the repository root, after `. .devdeps/env.sh`:
#   [ROUNDS=2] [GENS="stencil3d:100:4 ..."] [SOLVES="stencil3d:100:4 .realm/af23560.mtx"]
#   [ORDERS=natural/center] [CONFS="reorder=natural reorder=center"]
#   [SUITES="test_gpu_trsv ..."] [REAL=dir] [NCU=1] sh bench/ab_gpu.sh OUT TREE1 TREE2 [TREE3 ...]
# ORDERS: the triangular solves' orderings (default natural); CONFS: solver
# options added to the solves' configuration, each solve run under each
# (default none).
OUT=${1:?OUT}; shift
[ $# -ge 2 ] || { echo "usage: sh bench/ab_gpu.sh OUT BASE VARIANT [VARIANT ...]"; exit 2; }
ROUNDS=${ROUNDS:-2}
GENS=${GENS-"stencil3d:100:4 stencil3d:128:1 stencil3d:64:5 stencil3d:100:2"}
SOLVES=${SOLVES:-stencil3d:100:4}
SUITES=${SUITES:-"test_gpu_trsv test_gpu_ilu test_solver"}
R=$PWD
RD=; [ -n "${REAL:-}" ] && RD=$(cd "$REAL" && pwd)
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"
CF="-DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON -DBSR_MPI=OFF -DBSR_FORTRAN=OFF"
[ -n "$RD" ] && CF="$CF -DBSR_REAL_DIR=$RD"
J=$(( 16 / $# )); [ $J -lt 2 ] && J=2
T0=$(date +%s)
i=0
for t in "$@"; do
    # a fresh folder: a warm machine keeps /tmp, whose cache may name another
    # tree (cmake then refuses, and the old binaries would be timed)
    (rm -rf /tmp/ab-$i && cmake -S "$t" -B /tmp/ab-$i $CF &&
        cmake --build /tmp/ab-$i -j$J --target bsrsolve_cli $SUITES &&
        touch /tmp/ab-$i/built) > "$OUT/build_$i.log" 2>&1 &
    i=$((i + 1))
done
wait
echo "builds: $(( $(date +%s) - T0 )) s"
i=0
for t in "$@"; do
    [ -f /tmp/ab-$i/built ] || { echo "build of tree $i ($t) failed"; tail -30 "$OUT/build_$i.log"; exit 1; }
    echo "tree $i: $t"
    rm -f "$OUT/build_$i.log"   # kept only when it failed: the device returns a few files
    i=$((i + 1))
done
n=$#
r=1
while [ $r -le "$ROUNDS" ]; do
    for G in $GENS; do
        i=0
        while [ $i -lt $n ]; do
            echo "== tree $i $G round $r" >> "$OUT/trsv.log"
            timeout -s KILL 90 /tmp/ab-$i/bsrsolve bench trsv --gen "$G" --k 1 --orders "${ORDERS:-natural}" \
                --kernels level-syncfree >> "$OUT/trsv.log" 2>&1
            i=$((i + 1))
        done
    done
    for P in $SOLVES; do
        case $P in *.mtx) A=$P ;; *) A="--gen $P" ;; esac
        for C in ${CONFS:-"-"}; do
            X=; [ "$C" = - ] || X=",$C"
            i=0
            while [ $i -lt $n ]; do
                echo "== tree $i ilu0$X $P round $r" >> "$OUT/solve.log"
                timeout -s KILL 90 /tmp/ab-$i/bsrsolve $A --backend cuda \
                    --config "precond=ilu0,rtol=1e-8,profile=1$X" >> "$OUT/solve.log" 2>&1
                i=$((i + 1))
            done
        done
    done
    r=$((r + 1))
done
{ [ -f "$OUT/trsv.log" ] && grep -E "^== |level-syncfree" "$OUT/trsv.log" | cut -c1-160
  grep -E "^== |of the bound|^profile     SpMM|^time|converged|diverged" "$OUT/solve.log" | cut -c1-220; } > "$OUT/summary.txt"
cat "$OUT/summary.txt"
if [ "${NCU:-0}" = 1 ] && command -v ncu > /dev/null; then
    for i in 0 $((n - 1)); do
        timeout -s KILL 240 ncu --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section SourceCounters \
            -k regex:team_pipe_kernel --launch-skip 2 --launch-count 2 /tmp/ab-$i/bsrsolve bench trsv \
            --gen stencil3d:100:4 --k 1 --orders natural --kernels level-syncfree --reps 2 > "$OUT/ncu_tree$i.txt" 2>&1
        echo "ncu tree $i rc=$?"
        grep -E "team_pipe|Issue Slots Busy|Eligible Warps|No Eligible|Stall|Warp Cycles Per Issued|L2 Hit|DRAM Through" \
            "$OUT/ncu_tree$i.txt" | head -40
    done
fi
i=1
while [ $i -lt $n ]; do
    for s in $SUITES; do
        ( cd /tmp/ab-$i && BSR_SOURCE_DIR=$R BSR_REAL_DIR=$RD BSR_TEST_QUICK=$([ "${FULL_TESTS:-0}" = 1 ] && echo 0 || echo 1) \
            timeout -s KILL 200 ./$s > "$OUT/test.tmp" 2>&1 )
        line="tree $i $s rc=$?: $(grep -E 'asserts' "$OUT/test.tmp" | head -1)"
        echo "$line" | tee -a "$OUT/summary.txt"
        { echo "== $line"; cat "$OUT/test.tmp"; } >> "$OUT/tests.log"
    done
    i=$((i + 1))
done
rm -f "$OUT/test.tmp"
