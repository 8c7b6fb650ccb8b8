#!/bin/sh
# device experiment 3: first-solve overhead (module loading, pipe)
O=$1; B=/tmp/b-e3
cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON > $O/build.log 2>&1 && cmake --build $B -j16 >> $O/build.log 2>&1 || { tail -30 $O/build.log; exit 1; }
cd $B
OMP_NUM_THREADS=8 timeout -s KILL 200 ctest --output-on-failure -j3 -R "gpu_trsv|gpu_ilu|gpu_spmm|test_solver|regression" > $O/ctest.log 2>&1; echo "ctest rc=$?"
grep -E "tests passed|Failed|\*\*\*|sec$" $O/ctest.log | head
S="./bsrsolve --gen stencil3d:100:4 --backend cuda --compare cusparse --steps 2 --config precond=ilu0,reorder=natural,rtol=1e-8,profile=1"
for v in "A" "B BSR_TRSV_PIPE=0" "C CUDA_MODULE_LOADING=EAGER" "D" "E BSR_TRSV_PIPE=0"; do
  set -- $v; echo "== $v" >> $O/solver.log; shift
  env $@ timeout -s KILL 60 $S >> $O/solver.log 2>&1
done
grep -E "^== |prof: solve: Krylov|profile  .*SpMM|time  |bsrsolve vs" $O/solver.log
