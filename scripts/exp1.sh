#!/bin/sh
# device experiment 4: module split, first-solve overhead
O=$1; B=/tmp/b-e4
cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON > $O/build.log 2>&1 && cmake --build $B -j16 >> $O/build.log 2>&1 || { tail -30 $O/build.log; exit 1; }
cd $B
S="./bsrsolve --gen stencil3d:100:4 --backend cuda --compare cusparse --steps 2 --config precond=ilu0,reorder=natural,rtol=1e-8,profile=1"
for v in "A" "B" "C CUDA_MODULE_LOADING=EAGER" "D" "W --warm"; do
  set -- $v; echo "== $v" >> $O/solver.log; shift
  case "$1" in --*) timeout -s KILL 60 $S $@ >> $O/solver.log 2>&1;; *) env $@ timeout -s KILL 60 $S >> $O/solver.log 2>&1;; esac
done
grep -E "^== |prof: solve: Krylov|profile  |time  |bsrsolve vs" $O/solver.log
OMP_NUM_THREADS=8 timeout -s KILL 250 ctest --output-on-failure -j3 -E "test_real" > $O/ctest.log 2>&1; echo "ctest rc=$?"
grep -E "tests passed|Failed|\*\*\*" $O/ctest.log | head
