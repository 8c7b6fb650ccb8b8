#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ctests petsc_ex19, petsc_ex19_np2 and petsc_bad_options: PETSc's SNES ex19
# (driven cavity, 4 x 4 blocks with -dm_mat_type baij) with the plugin loaded
# by -dll_append.  Newton converges to the same iterates whatever the
# preconditioner when every linear solve reaches 1e-12, so the SNES monitor
# lines of bsrilu and bsrsolve must equal those of PETSc's LU exactly.
#   ex19.sh EX19 PLUGIN serial          bsrilu (ilu0, ilut, ilu2; baij and aij),
#                                       bsrsolve with -ksp_type preonly, and its
#                                       unconverged solve as a failed PC
#   ex19.sh EX19 PLUGIN mpi MPIEXEC     2 ranks: bsrilu under bjacobi and asm
#   ex19.sh EX19 PLUGIN bad HAVE_CUDA   bad options: a PETSc error naming them
#   ex19.sh EX19 PLUGIN cuda            bsrsolve on the CUDA backend (exit 77, a
#                                       skip, where the library finds no device)
set -eu
ex19=$1
plugin=$2
mode=$3
common="-da_refine 3 -snes_monitor_short -dm_mat_type baij -ksp_rtol 1e-12"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# run NAME CMD...: CMD's output in $work/NAME.out; it must succeed
run() {
  name=$1
  shift
  echo "+ $*"
  "$@" >"$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name exited with $?"; }
}
# the SNES monitor lines of run NAME
monitor() {
  grep "SNES Function norm" "$work/$1.out" || true
}
# same NAME: run NAME printed the reference's monitor lines exactly
same() {
  monitor "$1" >"$work/$1.mon"
  if ! diff "$work/lu.mon" "$work/$1.mon" >"$work/$1.diff"; then
    cat "$work/$1.out"
    cat "$work/$1.diff"
    fail "$1: SNES monitor lines differ from -pc_type lu's"
  fi
  echo "  $1: the same $(wc -l <"$work/$1.mon") SNES monitor lines as lu"
}
# has NAME TEXT: run NAME printed TEXT (the PC really was ours, and so set up)
has() {
  grep -F -q -- "$2" "$work/$1.out" || { cat "$work/$1.out"; fail "$1: no '$2' in the output"; }
}
# bad NAME TEXT CMD...: CMD fails cleanly (a PETSc error, no signal, no sanitizer
# report) naming TEXT
bad() {
  name=$1
  text=$2
  shift 2
  echo "+ $*"
  rc=0
  "$@" >"$work/$name.out" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || { cat "$work/$name.out"; fail "$name: exited 0"; }
  [ "$rc" -lt 128 ] || { cat "$work/$name.out"; fail "$name: killed by a signal (exit $rc)"; }
  grep -q "PETSC ERROR" "$work/$name.out" || { cat "$work/$name.out"; fail "$name: no PETSc error"; }
  if grep -q -i -e "Caught signal" -e "Segmentation" -e "Sanitizer" -e "runtime error" "$work/$name.out"; then
    cat "$work/$name.out"
    fail "$name: crashed"
  fi
  has "$name" "$text"
  echo "  $name: exit $rc, $(grep -F -m1 -- "$text" "$work/$name.out")"
}

# the reference: PETSc's LU; a comparison with fewer than 2 lines proves nothing
run lu "$ex19" $common -pc_type lu
monitor lu >"$work/lu.mon"
[ "$(wc -l <"$work/lu.mon")" -ge 2 ] || { cat "$work/lu.out"; fail "lu: fewer than 2 SNES monitor lines"; }
cat "$work/lu.mon"

case $mode in
serial)
  for t in ilu0 ilut ilu2; do
    run bsrilu_$t "$ex19" $common -dll_append "$plugin" -pc_type bsrilu -pc_bsrilu_type $t -snes_view
    same bsrilu_$t
    has bsrilu_$t "type: bsrilu"
    has bsrilu_$t "bsrsolve $t, config"
    # every Newton step after the first gives new values on the same pattern
    has bsrilu_$t "full setups 1, refactors"
  done
  run bsrilu_aij "$ex19" $common -dm_mat_type aij -dll_append "$plugin" -pc_type bsrilu -pc_bsrilu_type ilu2 -snes_view
  same bsrilu_aij
  has bsrilu_aij "blocks of 1 x 1"
  run bsrsolve "$ex19" $common -dll_append "$plugin" -ksp_type preonly -pc_type bsrsolve \
    -pc_bsrsolve_config method=gmres,precond=ilu2,rtol=1e-12 -snes_view
  same bsrsolve
  has bsrsolve "type: bsrsolve"
  has bsrsolve "full setups 1, refactors"
  # a library solve that stops short fails the PC, and Newton says so
  run noconv "$ex19" $common -dll_append "$plugin" -ksp_type preonly -pc_type bsrsolve \
    -pc_bsrsolve_config maxit=2 -snes_converged_reason -ksp_converged_reason
  has noconv "PC failed due to SUBPC_ERROR"
  has noconv "DIVERGED_LINEAR_SOLVE"
  ;;
mpi)
  mpiexec=$4
  run np2_bjacobi "$mpiexec" -n 2 --oversubscribe "$ex19" $common -dll_append "$plugin" \
    -sub_pc_type bsrilu -sub_pc_bsrilu_type ilu2 -snes_view
  same np2_bjacobi
  has np2_bjacobi "type: bsrilu"
  has np2_bjacobi "full setups 1, refactors 1"
  run np2_asm "$mpiexec" -n 2 --oversubscribe "$ex19" $common -dll_append "$plugin" \
    -pc_type asm -sub_pc_type bsrilu -sub_pc_bsrilu_type ilu2 -snes_view
  same np2_asm
  has np2_asm "type: bsrilu"
  has np2_asm "full setups 1, refactors 1"
  # the whole parallel matrix is not ours: an error that says what to do
  bad np2_whole "-sub_pc_type bsrilu" "$mpiexec" -n 2 --oversubscribe "$ex19" $common -dll_append "$plugin" -pc_type bsrilu
  ;;
bad)
  have_cuda=$4
  bad config "-pc_bsrilu_config tau1=abc: solver options: tau1=abc" \
    "$ex19" $common -dll_append "$plugin" -pc_type bsrilu -pc_bsrilu_config tau1=abc
  bad key "-pc_bsrilu_config tau=0.1: solver options: unknown key 'tau'" \
    "$ex19" $common -dll_append "$plugin" -pc_type bsrilu -pc_bsrilu_config tau=0.1
  bad type "-pc_bsrilu_type" "$ex19" $common -dll_append "$plugin" -pc_type bsrilu -pc_bsrilu_type ilu9
  bad notilu "precond=jacobi is not an ILU" \
    "$ex19" $common -dll_append "$plugin" -pc_type bsrilu -pc_bsrilu_config precond=jacobi
  bad prefix "-sub_pc_bsrilu_config tau1=-1: solver options: tau1=-1" \
    "$ex19" $common -dll_append "$plugin" -pc_type bjacobi -sub_pc_type bsrilu -sub_pc_bsrilu_config tau1=-1
  bad solve "-pc_bsrsolve_config method=foo: solver options: method=foo" \
    "$ex19" $common -dll_append "$plugin" -ksp_type preonly -pc_type bsrsolve -pc_bsrsolve_config method=foo
  # the same, where a linear solve that does not converge is an error
  bad noconv "bsrsolve: solve: maxit after 2 iterations" "$ex19" $common -dll_append "$plugin" -ksp_type preonly \
    -pc_type bsrsolve -pc_bsrsolve_config maxit=2 -ksp_error_if_not_converged
  if [ "$have_cuda" = OFF ]; then
    bad cuda "-pc_bsrsolve_cuda (device 0): no CUDA device" \
      "$ex19" $common -dll_append "$plugin" -ksp_type preonly -pc_type bsrsolve -pc_bsrsolve_cuda
  fi
  ;;
cuda)
  cfg="-ksp_type preonly -pc_type bsrsolve -pc_bsrsolve_cuda -pc_bsrsolve_config method=gmres,precond=ilu2,rtol=1e-12"
  rc=0
  "$ex19" $common -dll_append "$plugin" $cfg -snes_view >"$work/cuda.out" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && grep -q "no CUDA device" "$work/cuda.out"; then
    grep -m1 "no CUDA device" "$work/cuda.out"
    echo "skipped: the library finds no CUDA device"
    exit 77
  fi
  [ "$rc" -eq 0 ] || { cat "$work/cuda.out"; fail "cuda exited with $rc"; }
  same cuda
  has cuda "type: bsrsolve"
  has cuda "full setups 1, refactors"
  has cuda " on cuda"
  ;;
*) fail "unknown mode $mode" ;;
esac
echo "PASS ($mode)"
