#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# GPU checks and the T1 SpMM benchmark in one go (issue 3), for the GPU machine:
#   sh bench/spmm_gpu.sh OUTDIR      (from the repository root, deps on the paths)
# Builds in /tmp/gpuspmm-b, runs the GPU/context tests, the T1 tables (double,
# float), the speedup plot and a ROWJ (J, threads) sweep; logs go to OUTDIR.
O=${1:-.}; B=/tmp/gpuspmm-b
rm -rf $B && cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON >/dev/null &&
  cmake --build $B -j16 2>&1 | grep -E "error|Error" | head
cd $B || exit 1
timeout 120 ctest --output-on-failure -R "gpu_spmm|context" > $O/test.log 2>&1
grep -E "Test:.*FAIL|asserts|tests passed" $O/test.log | head; grep -A10 "FAILED" $O/test.log | head -24
G=stencil3d:96:4,stencil3d:96:5,stencil3d:48:9
timeout 100 ./bsrsolve bench spmm --gen $G --k 1,2,3,4,5,6,7,8,9 --kernels p11,p12,p13,p14,warp,rowj,auto,cusparse \
  --cpu-reps 1 --csv $O/t1.csv > $O/bench.log 2>&1
grep -E "^(==|rowj|auto|cusp|p14)|copy:" $O/bench.log | cut -c1-92
timeout 30 ./bsrsolve bench spmm --gen stencil3d:96:4,stencil3d:48:9 --k 1,5,9 --kernels p14,rowj,auto,cusparse \
  --float --cpu-reps 1 --csv $O/float.csv > $O/float.log 2>&1
timeout 40 ./bsrsolve bench spmm --gen stencil3d:12:4,stencil3d:24:4,stencil3d:48:4,stencil3d:72:4,stencil3d:96:4 \
  --k 5 --kernels all --cpu-reps 1 --plot $O/speedup_k5.png --csv $O/plot.csv > $O/plot.log 2>&1
for J in 1 2 3 4; do for T in 128 256; do
  BSR_ROWJ_J=$J BSR_ROWJ_T=$T timeout 15 ./bsrsolve bench spmm --gen $G --k 1,2,3,5,9,16 --kernels rowj --no-cpu \
    --reps 5 2>/dev/null | awk -v c="J=$J T=$T" '/^==/{m=$2} /^rowj/{a[m]=a[m]" "$2":"$5} END{for(x in a) print c, x, a[x]}'
done; done > $O/sweep.log
sort -k3,3 -k1,1 $O/sweep.log
