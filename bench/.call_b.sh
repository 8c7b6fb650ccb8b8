set -u
. .devdeps/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
O=$OUT
cmake -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > $O/cfg.log 2>&1 && timeout 200 cmake --build build-gpu -j64 > $O/build.log 2>&1; echo "build rc=$?"
(cd build-gpu && OMP_NUM_THREADS=4 timeout 150 ctest -j12 --timeout 140 -R "ilu|trsv|threads|regression|determinism|dist|spmm|blockops|backend|solver|memory" -E "openfoam|petsc|python" > $O/ctest.log 2>&1; echo "ctest rc=$?"; grep -E "tests passed|\*\*\*Failed|Timeout" $O/ctest.log | head)
THREADS="1 16 64" timeout 150 sh bench/threads_setup.sh build-gpu/bsrsolve 1 > $O/threads.log 2>&1; echo "threads rc=$?"; grep -vE "^\s*$" $O/threads.log | tail -45
WAIT=passive THREADS="16 64" timeout 100 sh bench/threads_setup.sh build-gpu/bsrsolve 1 > $O/threads_passive.log 2>&1; echo "threads passive rc=$?"; grep -E "^\||check" $O/threads_passive.log | tail -25
for i in 1 2; do OMP_NUM_THREADS=16 timeout 40 build-gpu/bsrsolve --gen stencil3d:100:4 --backend cuda --config precond=ilu2,rtol=1e-8,profile=1 --steps 2 > $O/t1_$i.log 2>&1; grep -E "^time" $O/t1_$i.log | head -2; done
grep -E "^prof" $O/t1_2.log | head -30
for r in rcm center natural; do for p in 1 4; do echo "== rotconv3d:48,4 ilu2 overlap=1 reorder=$r, $p ranks"; OMP_NUM_THREADS=$((64/p)) timeout 40 mpiexec -n $p build-gpu/bsrsolve --gen rotconv3d:48,4 --backend cuda --config precond=ilu2,overlap=1,reorder=$r,rtol=1e-8 2>&1 | grep -E "^time|  0  |iterations|converged" | head -3; done; done
CASES="weak strong" HALOS=ipc timeout 110 sh bench/dist_halo.sh $O/dist build-gpu/bsrsolve "1 2 4" > $O/dist.log 2>&1; echo "dist rc=$?"; cat $O/dist/summary.md 2>/dev/null | head -12
