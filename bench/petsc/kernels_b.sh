#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# petsc_kernels for b = 1..5 on one thread, each matrix far larger than the
# caches (A 200-400 MB): stencil3d:160:1 (4.1M rows), :100:2, :80:3, :64:4,
# :64:5; by the thread's CPU time (-cputime: a machine shared past its cores
# gives wall times that are mostly other processes' time slices).
# usage: sh bench/petsc/kernels_b.sh [BUILD_DIR] [REPS] [B...]
build=${1:-build-cpu}
reps=${2:-11}
shift 2 2>/dev/null
bs=${*:-1 2 3 4 5}
for b in $bs; do
  case $b in 1) g=160 ;; 2) g=100 ;; 3) g=80 ;; *) g=64 ;; esac
  OMP_NUM_THREADS=1 "$build/petsc/petsc_kernels" -gen "stencil3d:$g:$b" -reps "$reps" -cputime || exit 1
done
