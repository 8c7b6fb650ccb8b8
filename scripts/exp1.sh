#!/bin/sh
# device experiment 2: LOOPT tail layout, pipe, ILU2 comparable fill
O=$1; B=/tmp/b-e2
cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON > $O/build.log 2>&1 && cmake --build $B -j16 >> $O/build.log 2>&1 || { tail -30 $O/build.log; exit 1; }
cd $B
OMP_NUM_THREADS=8 timeout -s KILL 200 ctest --output-on-failure -j3 -R "gpu_trsv|gpu_ilu|test_solver|trsv_plan" > $O/ctest.log 2>&1; echo "ctest rc=$?"
grep -E "tests passed|Failed|\*\*\*|sec$" $O/ctest.log | head
T="bench trsv --kernels level-syncfree"
timeout -s KILL 120 ./bsrsolve $T --gen stencil3d:96:4 --k 1,9 --orders natural/nd --variants "-;pipe=0;wide=4" > $O/trsv4.log 2>&1; echo rc=$?
timeout -s KILL 100 ./bsrsolve $T --gen stencil3d:64:5 --k 9 --orders natural/nd --variants "-;wide=4" > $O/trsv5.log 2>&1; echo rc=$?
timeout -s KILL 100 ./bsrsolve $T --gen stencil3d:48:9 --k 9 --orders natural/nd --variants "-;wide=4" > $O/trsv9.log 2>&1; echo rc=$?
for f in trsv4 trsv5 trsv9; do echo "## $f"; grep -E "^== |variant|level-syncfree|cusparse-bsrsv2|analysis:" $O/$f.log | cut -c1-140; done
S="./bsrsolve --gen stencil3d:100:4 --backend cuda --compare cusparse"
for c in natural natural; do timeout -s KILL 60 $S --steps 2 --config precond=ilu0,reorder=$c,rtol=1e-8,profile=1 >> $O/solver.log 2>&1; done
for p in ilu0 "ilu2,tau1=0.05"; do timeout -s KILL 150 $S --config precond=$p,reorder=nd:auto,rtol=1e-8 >> $O/solver.log 2>&1; done
grep -E "^precond|fill|time  |bsrsolve vs|cuSPARSE  |  0  conv" $O/solver.log
