#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The PETSc plugin against PETSc's own preconditioners in PETSc's SNES ex19
# (driven cavity, 4 x 4 blocks, -dm_mat_type baij) at lid velocity 100,
# Grashof 1e4, on G x G grids: PETSc's ILU(0) (-pc_type ilu) and LU, bsrilu
# (the library's ILU(0) or ILU2 under PETSc's GMRES) and bsrsolve (the
# library's GMRES + ILU2) with -ksp_type preonly; every linear solve to rtol
# RTOL.  Each run is one ex19 process, every run of a table comes from one
# run of this script on one machine, one after the other.  Per run: Newton
# steps, linear iterations in all (for bsrsolve: the library's), the times
# -log_view gives for SNESSolve, KSPSolve, PCSetUp and PCApply, the plugin's
# own events (BsrSetUp: full setups, BsrRefactor: refactors on the kept
# pattern, with their counts), the process's wall time, and how the solve
# ended.  A run past TIMEOUT seconds is stopped and reported as such.
#
# usage: sh bench/petsc_ex19.sh [BUILD] [G...]
#   BUILD  the build folder holding petsc/ex19 and petsc/libbsrsolve_petsc.so
#          (default build)
#   G      grid sizes (default 64 128 256 512)
# Environment:
#   PCS           the preconditioners run (default "ilu lu bsrilu:ilu2 bsrsolve";
#                 also bsrilu:ilu0, bsrilu:ilut, and bsrsolve-cuda: bsrsolve on the
#                 CUDA backend, -pc_bsrsolve_cuda)
#   BSRILU_CONFIG passed as -pc_bsrilu_config to bsrilu:*; for bsrsolve it is
#                 appended to method=gmres,precond=ilu2,rtol=RTOL,maxit=KSP_MAX_IT
#   OMP_NUM_THREADS  the library's threads (default: unset, the library's
#                 default team; PETSc itself is serial)
#   RTOL (1e-8), KSP_MAX_IT (10000), TIMEOUT (300 s a run)
#   EX19_ARGS     more ex19 options for every run (e.g. -snes_max_it 1)
BUILD=${1:-build}
[ $# -gt 0 ] && shift
GRIDS=${*:-64 128 256 512}
EX19=$BUILD/petsc/ex19
PLUGIN=$(cd "$BUILD/petsc" 2>/dev/null && pwd)/libbsrsolve_petsc.so
RTOL=${RTOL:-1e-8}
KSP_MAX_IT=${KSP_MAX_IT:-10000}
TIMEOUT=${TIMEOUT:-300}
[ -x "$EX19" ] && [ -f "$PLUGIN" ] || {
  echo "petsc_ex19.sh: no $EX19 or $PLUGIN: build with PETSc found (petsc/CMakeLists.txt)" >&2
  exit 2
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT INT TERM

# the time (4th field) and count (2nd) of -log_view's line for event $1
event() {
  awk -v e="$1" '$1 == e { printf "%.3f\n", $4; f = 1; exit } END { if (!f) print "-" }' "$out"
}
count() {
  awk -v e="$1" '$1 == e { print $2; f = 1; exit } END { if (!f) print 0 }' "$out"
}

echo "# bench/petsc_ex19.sh $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(getconf _NPROCESSORS_ONLN) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "# ex19 -lidvelocity 100 -grashof 1e4 -dm_mat_type baij -ksp_rtol $RTOL -ksp_max_it $KSP_MAX_IT -snes_monitor_short -log_view; timeout ${TIMEOUT}s"
echo "# PCS=${PCS:-default} BSRILU_CONFIG=${BSRILU_CONFIG:-} EX19_ARGS=${EX19_ARGS:-}"
echo "# setup: BsrSetUp count/s + BsrRefactor count/s (the plugin's events); times in seconds"
printf '%-5s %-12s %6s %7s %8s %8s %8s %8s %8s %-17s  %s\n' grid pc newton lin_its wall snes ksp pcsetup pcapply setup+refactor result
for g in $GRIDS; do
  for pc in ${PCS:-ilu lu bsrilu:ilu2 bsrsolve}; do
    case $pc in
    lu | ilu) args="-pc_type $pc" ;;
    bsrilu:*) args="-pc_type bsrilu -pc_bsrilu_type ${pc#bsrilu:}${BSRILU_CONFIG:+ -pc_bsrilu_config $BSRILU_CONFIG}" ;;
    bsrsolve) args="-ksp_type preonly -pc_type bsrsolve -pc_bsrsolve_config method=gmres,precond=ilu2,rtol=$RTOL,maxit=$KSP_MAX_IT${BSRILU_CONFIG:+,$BSRILU_CONFIG}" ;;
    bsrsolve-cuda) args="-ksp_type preonly -pc_type bsrsolve -pc_bsrsolve_cuda -pc_bsrsolve_config method=gmres,precond=ilu2,rtol=$RTOL,maxit=$KSP_MAX_IT${BSRILU_CONFIG:+,$BSRILU_CONFIG}" ;;
    *) echo "petsc_ex19.sh: unknown preconditioner '$pc' in PCS" >&2; exit 2 ;;
    esac
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout "$TIMEOUT" "$EX19" -da_grid_x "$g" -da_grid_y "$g" -lidvelocity 100 -grashof 1e4 -dm_mat_type baij \
      -ksp_rtol "$RTOL" -ksp_max_it "$KSP_MAX_IT" -snes_monitor_short -snes_converged_reason -ksp_converged_reason \
      -dll_append "$PLUGIN" $args ${EX19_ARGS:-} -snes_view -log_view >"$out" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    newton=$(sed -n 's/.*Nonlinear solve.* iterations \([0-9]*\).*/\1/p' "$out")
    if [ "${pc%-cuda}" = bsrsolve ]; then
      its=$(sed -n 's/.* solves, \([0-9]*\) iterations in all.*/\1/p' "$out" | tail -n 1)
    else
      its=$(awk '/Linear solve/ { s += $NF } END { print s + 0 }' "$out")
    fi
    result=$(sed -n 's/.*Nonlinear solve \(.*\) due to \([A-Z_]*\).*/\1 (\2)/p' "$out")
    if [ $rc -eq 124 ]; then
      result="stopped at the ${TIMEOUT} s limit after $(grep -c 'SNES Function norm' "$out") SNES norms, $its linear iterations"
      newton=-
    elif [ $rc -ne 0 ]; then
      result="exit $rc: $(grep -m1 'PETSC ERROR: [^-]' "$out" | sed 's/.*PETSC ERROR: //')"
    fi
    case $pc in
    bsr*) setup="$(count BsrSetUp)/$(event BsrSetUp)+$(count BsrRefactor)/$(event BsrRefactor)" ;;
    *) setup=- ;;
    esac
    printf '%-5s %-12s %6s %7s %8.2f %8s %8s %8s %8s %-17s  %s\n' "${g}^2" "$pc" "${newton:--}" "${its:--}" \
      "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
      "$(event SNESSolve)" "$(event KSPSolve)" "$(event PCSetUp)" "$(event PCApply)" "$setup" "$result"
  done
done
