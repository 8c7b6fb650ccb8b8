#!/bin/sh
# device call 1: build, GPU tests, the device rows' pattern refresh, issue 44's 1M b=5 with cap=14
tar xJf .stage/bundle.tar.xz -C . ; . .devdeps/env.sh
export OMP_NUM_THREADS=16
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1 2>/dev/null
t0=$(date +%s)
OUT=$OUT sh bench/gpu_check.sh build >/dev/null 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"
tail -3 $OUT/build.log
cli=build-gpu/bsrsolve
(cd build-gpu && OMP_NUM_THREADS=4 timeout 100 ctest -R "test_solver|gpu_ilu|gpu_ilut|precond|fallback" -j5 --timeout 90 > $OUT/ctest1.log 2>&1;
 grep -E "tests passed|Failed|Timeout|Skipped" $OUT/ctest1.log; grep -E "refresh" -A2 Testing/Temporary/LastTest.log | head -8)
echo "== t=$(( $(date +%s)-t0 )) s: refresh vs frozen refactor vs setup"
for g in stencil3d:100:4 rotconv3d:100,4 rotconv3d:40,4; do
  for p in frozen refresh; do
    echo "-- $g pattern=$p"
    timeout 60 $cli --gen $g --backend cuda --no-progress --config precond=ilu2,rtol=1e-8,pattern=$p --steps 3 2>&1 | grep -E "^precond|^time|converged|maxit|diverg|error"
  done
done
echo "== t=$(( $(date +%s)-t0 )) s: issue 44, 1M b=5 couple 0.3"
for x in cap=14 cap=auto; do
  echo "-- $x"
  timeout 100 $cli --gen coupled3d:100,5,couple=0.3 --backend cuda --no-progress --config precond=ilu2,rtol=1e-8,fallback=off,maxit=1000,$x 2>&1 | grep -E "^precond|^time|fill|converged|maxit|diverg|error"
done
echo "== t=$(( $(date +%s)-t0 )) s: all GPU tests"
(cd build-gpu && OMP_NUM_THREADS=4 timeout 240 ctest -j6 --timeout 150 -E "openfoam|petsc|python" > $OUT/ctest.log 2>&1;
 grep -E "tests passed|\*\*\*Failed|Timeout" $OUT/ctest.log)
echo "== done t=$(( $(date +%s)-t0 )) s"
