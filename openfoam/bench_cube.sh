#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Times icoFoam on the lid-driven cube (tests/cube, N^3 cells, STEPS time
# steps at Courant number 0.5) with OpenFOAM's PCG (DIC) and GAMG for p, and
# with the plugin's bsrsolve (CPU, and CUDA where asked) for p and U; U with
# PBiCGStab (DILU) in the stock runs.  Prints per run: the wall time of the
# whole run, the time in the p and U solves (OpenFOAM's profiling of
# lduMatrix::solver.*), the p iterations in all, and the final fields'
# largest difference from the PCG run's (and p's mean difference: a level
# offset).
# usage: bench_cube.sh PLUGIN.so N STEPS WORKDIR [RUN...]
#   RUN: pcg gamg bsr bsr-ujac (U with Jacobi, not ILU(0)) bsr-ic2 (p with
#   CG + IC2, not IC(0)) bsr-cuda bsr-cuda-bicg (p with BiCGStab + ILU(0)
#   on the device, not CG + IC(0))
#   (default: pcg gamg bsr); RUN-loose stops the
#   p solves 10x early (relTol 0.49 where 0.05, pFinal tolerance 1e-5 where
#   1e-6): how far an early stop moves p.  VERBOSE=1: the plugin's runs
#   print each pass (iterations, setup and solve seconds) into their log.icoFoam
set -eu
plugin=$1 n=$2 steps=$3 work=$4
shift 4
runs=${*:-pcg gamg bsr}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${WM_PROJECT_DIR:-}" ] && [ -d /usr/share/openfoam/etc ]; then
  export WM_PROJECT_DIR=/usr/share/openfoam
fi
dt=$(awk -v n="$n" 'BEGIN { printf "%.6g", 0.5 / n }')
end=$(awk -v d="$dt" -v s="$steps" 'BEGIN { printf "%.6g", d * s }')
mkdir -p "$work"
base=$work/cube$n
rm -rf "$base"
cp -r "$here/tests/cube" "$base"
sed -i "s/^n .*/n $n;/" "$base/system/blockMeshDict"
sed -i "s/^deltaT .*/deltaT $dt;/; s/^endTime .*/endTime $end;/; s/^writeInterval .*/writeInterval $steps;/" "$base/system/controlDict"
echo 'profiling { active true; cpuInfo false; memInfo false; sysInfo false; }' >> "$base/system/controlDict"
(cd "$base" && blockMesh > log.blockMesh 2>&1)
echo "cube $n^3 = $((n * n * n)) cells, $steps steps of $dt; $(nproc) cores; OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"
printf '%-13s %8s %8s %8s %8s %9s %12s %12s %12s\n' run wall_s p_s U_s p_its p_solves "max|dp|" "mean(dp)" "max|dU|"
for r in $runs; do
  tol="tolerance 1e-06; relTol 0.05;" ftol="relTol 0;"
  case $r in *-loose) tol="tolerance 1e-06; relTol 0.49;" ftol="tolerance 1e-05; relTol 0;" ;; esac
  case ${r%-loose} in
    pcg)      p="solver PCG; preconditioner DIC;" u="solver PBiCGStab; preconditioner DILU;" ;;
    gamg)     p="solver GAMG; smoother GaussSeidel;" u="solver PBiCGStab; preconditioner DILU;" ;;
    bsr)      p="solver bsrsolve;" u="solver bsrsolve;" ;;
    bsr-ujac) p="solver bsrsolve;" u="solver bsrsolve; precond jacobi;" ;;
    bsr-ic2)  p="solver bsrsolve; precond ic2;" u="solver bsrsolve;" ;;
    bsr-cuda) p="solver bsrsolve; backend cuda;" u="solver bsrsolve; backend cuda;" ;;
    bsr-cuda-bicg) p="solver bsrsolve; backend cuda; method bicgstab; precond ilu0;" u="solver bsrsolve; backend cuda;" ;;
    *) echo "unknown run $r" >&2; exit 1 ;;
  esac
  case $r in bsr*) [ -n "${VERBOSE:-}" ] && p="$p verbose true;" u="$u verbose true;" ;; esac
  d=$base-$r
  rm -rf "$d"
  cp -r "$base" "$d"
  printf 'solvers\n{\n    p { %s %s }\n    pFinal { $p; %s }\n    U { %s tolerance 1e-05; relTol 0; }\n}\n' "$p" "$tol" "$ftol" "$u" > "$d/system/solvers"
  case $r in bsr*) echo "libs (\"$plugin\");" >> "$d/system/controlDict" ;; esac
  t0=$(date +%s.%N)
  (cd "$d" && icoFoam > log.icoFoam 2>&1) || { tail -20 "$d/log.icoFoam"; echo "$r failed"; continue; }
  t1=$(date +%s.%N)
  t=$(ls -d "$d"/[0-9]* | sed 's|.*/||' | sort -g | tail -n 1)
  prof() { awk -v f="$1" '/description/ { hit = ($0 ~ "\"lduMatrix::solver\\." f "\"") } hit && /totalTime/ { s += $2 + 0; hit = 0 } END { printf "%.2f", s }' "$d/$t/uniform/profiling"; }
  pits=$(awk '/Solving for p,/ { s += $NF } END { print s + 0 }' "$d/log.icoFoam")
  psol=$(grep -c 'Solving for p,' "$d/log.icoFoam")
  dp=- du=- mp=-
  if [ "$r" != pcg ] && [ -d "$base-pcg/$t" ]; then
    set -- $(awk -v mean=1 -f "$here/tests/fieldcmp.awk" "$base-pcg/$t/p" "$d/$t/p")
    dp=$1 mp=$4
    du=$(awk -f "$here/tests/fieldcmp.awk" "$base-pcg/$t/U" "$d/$t/U" | cut -d' ' -f1)
  fi
  ux=$(prof Ux) uy=$(prof Uy) uz=$(prof Uz)
  printf '%-13s %8.2f %8s %8.2f %8s %9s %12s %12s %12s\n' "$r" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
    "$(prof p)" "$(awk -v a="$ux" -v b="$uy" -v c="$uz" 'BEGIN { print a + b + c }')" "$pits" "$psol" "$dp" "$mp" "$du"
done
