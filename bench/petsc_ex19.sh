#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The PETSc plugin against PETSc's own preconditioners in PETSc's SNES ex19
# (driven cavity, 4 x 4 blocks, -dm_mat_type baij) at lid velocity 100,
# Grashof 1e4, on G x G grids: PETSc's ILU(0) and LU, bsrilu (ILU(0), ILU2)
# under PETSc's GMRES, and bsrsolve (the library's GMRES + ILU2) with
# -ksp_type preonly; every linear solve to rtol 1e-8.  Per run: Newton steps,
# PETSc's linear iterations (for bsrsolve: the library's iterations), the
# times -log_view gives for SNESSolve, PCSetUp and PCApply, the wall time, and
# how the nonlinear solve ended.
#
# usage: sh bench/petsc_ex19.sh [BUILD] [G...]
#   BUILD  the build folder holding petsc/ex19 and petsc/libbsrsolve_petsc.so
#          (default build)
#   G      grid sizes (default 64 128)
# Environment: OMP_NUM_THREADS (default 1: PETSc runs on one core, so do the
# library's solves), KSP_MAX_IT (default 10000, PETSc's), RTOL (default 1e-8),
# PCS (the preconditioners run, default "lu ilu bsrilu:ilu0 bsrilu:ilu2
# bsrsolve"), BSRILU_CONFIG (passed as -pc_bsrilu_config to bsrilu:*, e.g.
# reorder=natural), EX19_ARGS (more ex19 options for every run, e.g.
# -snes_max_it 1).  apply_ms: PCApply's time over its count.
BUILD=${1:-build}
[ $# -gt 0 ] && shift
GRIDS=${*:-64 128}
EX19=$BUILD/petsc/ex19
PLUGIN=$(cd "$BUILD/petsc" 2>/dev/null && pwd)/libbsrsolve_petsc.so
RTOL=${RTOL:-1e-8}
KSP_MAX_IT=${KSP_MAX_IT:-10000}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
[ -x "$EX19" ] && [ -f "$PLUGIN" ] || {
  echo "petsc_ex19.sh: no $EX19 or $PLUGIN: build with PETSc found (petsc/CMakeLists.txt)" >&2
  exit 2
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT INT TERM

# the 4th field of -log_view's line for event $1 (its time, seconds)
event() {
  awk -v e="$1" '$1 == e { print $4; f = 1; exit } END { if (!f) print "nan" }' "$out"
}

echo "# bench/petsc_ex19.sh $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(getconf _NPROCESSORS_ONLN) CPUs, OMP_NUM_THREADS=$OMP_NUM_THREADS"
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "# ex19 -lidvelocity 100 -grashof 1e4 -dm_mat_type baij -ksp_rtol $RTOL -ksp_max_it $KSP_MAX_IT -log_view"
echo "# PCS=${PCS:-default} BSRILU_CONFIG=${BSRILU_CONFIG:-} EX19_ARGS=${EX19_ARGS:-}"
printf '%-5s %-12s %6s %8s %9s %9s %9s %8s %8s  %s\n' grid pc newton lin_its snes_s pcsetup_s pcapply_s apply_ms wall_s result
for g in $GRIDS; do
  for pc in ${PCS:-lu ilu bsrilu:ilu0 bsrilu:ilu2 bsrsolve}; do
    case $pc in
    lu | ilu) args="-pc_type $pc" ;;
    bsrilu:*) args="-pc_type bsrilu -pc_bsrilu_type ${pc#bsrilu:}${BSRILU_CONFIG:+ -pc_bsrilu_config $BSRILU_CONFIG}" ;;
    bsrsolve) args="-ksp_type preonly -pc_type bsrsolve -pc_bsrsolve_config method=gmres,precond=ilu2,rtol=$RTOL,maxit=$KSP_MAX_IT" ;;
    esac
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$EX19" -da_grid_x "$g" -da_grid_y "$g" -lidvelocity 100 -grashof 1e4 -dm_mat_type baij \
      -ksp_rtol "$RTOL" -ksp_max_it "$KSP_MAX_IT" -snes_converged_reason -ksp_converged_reason \
      -dll_append "$PLUGIN" $args ${EX19_ARGS:-} -snes_view -log_view >"$out" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    newton=$(sed -n 's/.*Nonlinear solve.* iterations \([0-9]*\).*/\1/p' "$out")
    if [ "$pc" = bsrsolve ]; then
      its=$(sed -n 's/.* solves, \([0-9]*\) iterations in all.*/\1/p' "$out" | tail -n 1)
    else
      its=$(awk '/Linear solve/ { s += $NF } END { print s + 0 }' "$out")
    fi
    result=$(sed -n 's/.*Nonlinear solve \(.*\) due to \([A-Z_]*\).*/\1 (\2)/p' "$out")
    [ $rc -eq 0 ] || result="exit $rc: $(grep -m1 'PETSC ERROR: [^-]' "$out" | sed 's/.*PETSC ERROR: //')"
    napply=$(awk '$1 == "PCApply" { print $2; f = 1; exit } END { if (!f) print 0 }' "$out")
    printf '%-5s %-12s %6s %8s %9.3f %9.3f %9.3f %8.3f %8.2f  %s\n' "${g}^2" "$pc" "${newton:--}" "${its:--}" \
      "$(event SNESSolve)" "$(event PCSetUp)" "$(event PCApply)" \
      "$(awk -v t="$(event PCApply)" -v n="$napply" 'BEGIN { print (n > 0 ? 1e3 * t / n : "nan") }')" \
      "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$result"
  done
done
