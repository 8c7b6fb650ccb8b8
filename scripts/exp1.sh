#!/bin/sh
# device experiment: trsv pipeline + device layout
O=$1; B=/tmp/b-e1
cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON > $O/build.log 2>&1 && cmake --build $B -j16 >> $O/build.log 2>&1 || { tail -30 $O/build.log; exit 1; }
cd $B
OMP_NUM_THREADS=8 timeout -s KILL 200 ctest --output-on-failure -j3 -R "gpu_trsv|gpu_ilu|test_solver|regression|trsv_plan" > $O/ctest.log 2>&1; echo "ctest rc=$?"
grep -E "tests passed|Failed|\*\*\*" $O/ctest.log
T="bench trsv --gen stencil3d:96:4 --kernels level-syncfree"
timeout -s KILL 90 ./bsrsolve $T --k 1,9 --orders natural/nd > $O/trsv.log 2>&1; echo rc=$?
BSR_TRSV_PIPE=0 timeout -s KILL 40 ./bsrsolve $T --k 1 --orders natural > $O/trsv_nopipe.log 2>&1
BSR_TRSV_TEAM=8 timeout -s KILL 40 ./bsrsolve $T --k 1 --orders natural > $O/trsv_t8.log 2>&1
BSR_TRSV_TEAM=4 timeout -s KILL 40 ./bsrsolve $T --k 1 --orders natural > $O/trsv_t4.log 2>&1
for f in trsv trsv_nopipe trsv_t8 trsv_t4; do echo "## $f"; grep -E "ours|level-syncfree|cusparse-bsrsv2|analysis:" $O/$f.log | cut -c1-150; done
timeout -s KILL 60 ./bsrsolve --gen stencil3d:100:4 --backend cuda --compare cusparse --steps 2 --config precond=ilu0,reorder=natural,rtol=1e-8 > $O/solver.log 2>&1
grep -E "time  |bsrsolve vs|cuSPARSE  " $O/solver.log
