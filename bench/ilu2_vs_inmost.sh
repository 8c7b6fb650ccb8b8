#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ILU2 of bsrsolve (CPU backend) beside INMOST's inner_ilu2, the only other
# public ILU2, on every real matrix: BiCGStab, rtol 1e-8, right-hand side of
# ones (the file's own when FILE_rhs.mtx exists), tau1 = 1e-2, tau2 = tau1^2
# for both.  Iterations, true relative residual, setup and solve seconds, in
# the same process run one after the other on this machine.
#   INMOST=path/to/ilu2_driver sh bench/ilu2_vs_inmost.sh [BSRSOLVE] [MATRIX_DIR]
# (INMOST's driver: ../shared/anchors/inmost/build.sh; without it the INMOST
# columns say "not run".)
B=${1:-build/bsrsolve}; M=${2:-../shared/matrices/real}
printf '| matrix | bsrsolve its | relres | setup s | solve s | INMOST its | relres | setup s | solve s |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
for f in "$M"/*.mtx; do
  case $f in *_rhs.mtx) continue;; esac
  name=$(basename "$f" .mtx); rhs=""
  [ -f "$M/${name}_rhs.mtx" ] && rhs="--rhs $M/${name}_rhs.mtx"
  out=$(timeout 120 "$B" "$f" $rhs --config precond=ilu2,tau1=1e-2,rtol=1e-8,maxit=2000 2>&1)
  row=$(echo "$out" | awk '$1 == "0" && NF >= 5 {print $3, $5}')
  t=$(echo "$out" | sed -n 's/^time *setup \([0-9.]*\) s, solve \([0-9.]*\) s.*/\1 \2/p')
  st=$(echo "$out" | awk '$1 == "0" {print $2}')
  [ "$st" = converged ] || row="$st $(echo "$row" | cut -d' ' -f2)"
  inm="not run | - | - | -"
  if [ -n "${INMOST:-}" ]; then
    r=$(timeout 120 "$INMOST" "$f" ${rhs:+--rhs $M/${name}_rhs.mtx} --tau1 0.01 --tau2 1e-4 --rtol 1e-8 --maxit 2000 2>&1 | grep '^RESULT')
    get() { echo "$r" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    c=$(get conv); its=$(get iters); [ "$c" = yes ] || its="$c ($its)"
    inm="$its | $(get relres) | $(get setup_s) | $(get solve_s)"
  fi
  echo "| $name | $(echo "$row" | cut -d' ' -f1) | $(echo "$row" | cut -d' ' -f2) | $(echo "$t" | cut -d' ' -f1) | $(echo "$t" | cut -d' ' -f2) | $inm |"
done
