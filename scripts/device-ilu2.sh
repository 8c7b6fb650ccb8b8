#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ILU2 at GPU speed, in one device call: build with CUDA, the ILU suites (the
# GPU ones run there), then the figures of the ILU2 issue, each beside its
# anchor measured in the same process (cuSPARSE ILU(0)+BiCGStab, UMFPACK, the
# host-factored ILU2).  From the repository root, dependencies on the paths
# (. .devdeps/env.sh on the lent machine); MATS: a folder of real matrices.
#   [PART=1|2] MATS=.devmats sh scripts/device-ilu2.sh OUTDIR [BUILDDIR]
# PART 1 (default): build, tests, stencil3d and the real matrices; PART 2: the
# hard class against UMFPACK (each part fits one 10-minute device call).
O=${1:-/tmp/out}; B=${2:-/tmp/b-ilu2}; M=${MATS:-../shared/matrices/real}
mkdir -p "$O"
cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DBSR_CUDA=ON > "$O/build.log" 2>&1 &&
  cmake --build "$B" -j16 >> "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
M=$(cd "$M" 2>/dev/null && pwd); R=$(pwd)
cd "$B" || exit 1
run() { f=$1; t=$2; shift 2; echo "== bsrsolve $*" >> "$O/$f"; timeout -s KILL "$t" ./bsrsolve "$@" >> "$O/$f" 2>&1; echo "rc=$?" >> "$O/$f"; }
if [ "${PART:-1}" = 2 ]; then
  # target 2: the hard class, ILU2 on the device against ILU(0), cuSPARSE and UMFPACK in the same process
  for g in ${HARD:-rotconv3d:40,4 rotconv3d:30,5}; do
    run hard.log 280 --gen $g --backend cuda --compare cusparse --reference umfpack --steps 2 --config precond=ilu2,tau1=${TAU:-0.02},rtol=1e-10,profile=1
    run hard.log 60 --gen $g --backend cuda --config precond=ilu0,rtol=1e-10,maxit=1000
  done
  # target 3: the CPU backend at 27,000 block rows against UMFPACK (this machine's 16 cores)
  run hard.log 200 --gen rotconv3d:30,4 --reference umfpack --config precond=ilu2,tau1=${TAU:-0.02},rtol=1e-10
  # ILU2 beside INMOST's (one thread each; the driver in the matrix folder when carried along)
  [ -x "$M/ilu2_driver" ] && OMP_NUM_THREADS=1 INMOST="$M/ilu2_driver" sh "$R/bench/ilu2_vs_inmost.sh" ./bsrsolve "$M" > "$O/inmost.md" 2>&1
  grep -vE "^ *(n =|problem)|^prof: (solve|gpu)" "$O/hard.log" | cut -c1-170
  exit 0
fi
T0=$(date +%s)
OMP_NUM_THREADS=8 timeout -s KILL 200 ctest --output-on-failure -j3 --timeout 190 -R "${TESTS:-gpu_ilu|test_ilu$|test_solver$}" > "$O/ctest.log" 2>&1
echo "ctest rc=$? in $(( $(date +%s) - T0 )) s"
grep -E "tests passed|Failed|\*\*\*|Skipped|asserts" "$O/ctest.log"
# target 1: stencil3d:100:4, ILU2 at fill <= 1.2 against ILU(0) and cuSPARSE's ILU(0)+BiCGStab
for pc in "ilu2,tau1=0.05" "ilu0"; do
  run stencil.log 90 --gen stencil3d:100:4 --backend cuda --compare cusparse --steps 3 --config precond=$pc,reorder=natural,rtol=1e-8,profile=1
done
# target 4: real matrices, ILU2 factored on the device against the host-factored one
if [ -d "$M" ]; then
  for mtx in "$M"/*.mtx; do
    case $mtx in *_rhs.mtx) continue;; esac
    for be in cpu cuda; do run real.log 60 "$mtx" --backend $be --config precond=ilu2,tau1=1e-2,rtol=1e-8,maxit=2000; done
  done
  grep -E "^== |^  0 " "$O/real.log" | paste - - | sed "s|$M/||; s|  *| |g" > "$O/real-summary.log"
fi
for f in stencil real-summary; do [ -f "$O/$f.log" ] && cut -c1-170 "$O/$f.log" | grep -vE "^ *(n =|problem)" | tail -n 60; done
