#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ILU2 set up on the device (issue 39): the device-against-host tests, then
# first setup, refactor and solve of ILU2 at its defaults on the issue's
# problems, each beside our ILU(0) and cuSPARSE's ILU(0) + BiCGStab in the same
# process (--compare cusparse).  Run on the GPU machine from the repository
# root after building into build-gpu; logs go to $OUT (or /tmp/ilu2_gpu).
#   sh bench/ilu2_gpu_setup.sh [tests|bench|orders|gens|cpu|all]
# gens: every generator at about 1M block rows (GENS overrides the list), ILU2
# at its defaults (maxit 500), one JSON report each; gens.md tabulates the
# first setup, iterations, solve and status.
# cpu: the CPU backend's ILU2 setup (CPU_CLI, default build-cpu/bsrsolve, a
# CPU-only build) beside the device's first setup in the same call, on
# CPU_SPECS: the device's configuration (cap=auto, RCM) and the CPU default
# (no cap, nested dissection), profile marks on.
set -u
OUT=${OUT:-/tmp/ilu2_gpu}
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
what=${1:-all}
cli=build-gpu/bsrsolve
run() {   # name, then the arguments of one solve
    name=$1; shift
    echo "== $name: $*" >>"$OUT/bench.log"
    timeout ${RUN_TIMEOUT:-300} "$cli" "$@" >>"$OUT/bench.log" 2>&1
    echo "   rc=$?" >>"$OUT/bench.log"
}
if [ "$what" = tests ] || [ "$what" = all ]; then
    for t in test_gpu_ilut test_gpu_ilu2 test_ilu; do
        (cd build-gpu && timeout ${TEST_TIMEOUT:-300} ./$t >"$OUT/$t.log" 2>&1; echo "$t rc=$?") | tee -a "$OUT/tests.log"
        tail -n 12 "$OUT/$t.log"
    done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    for spec in ${SPECS:-stencil3d:100:4 rotconv3d:40,4 rotconv3d:30,5 cfd3d:60,4,10 cfd3d:100,4,10 rotconv3d:100,4}; do
        rt=1e-8
        [ "$spec" = rotconv3d:100,4 ] && rt=1e-10
        run "$spec ilu2" --gen "$spec" --backend cuda --config "precond=ilu2,rtol=$rt,profile=1" --steps 2 --compare cusparse
        run "$spec ilu0" --gen "$spec" --backend cuda --config "precond=ilu0,rtol=$rt" --steps 2
    done
fi
if [ "$what" = orders ] || [ "$what" = all ]; then
    for spec in stencil3d:100:4 rotconv3d:40,4 cfd3d:60,4,10; do
        for ord in natural center rcm nd; do
            run "$spec ilu2 reorder=$ord" --gen "$spec" --backend cuda --config "precond=ilu2,reorder=$ord"
        done
    done
fi
if [ "$what" = cpu ]; then
    for spec in ${CPU_SPECS:-stencil3d:100:4 rotconv3d:100,4 cfd3d:100,4,10 rotconv3d:40,4}; do
        run "$spec gpu ilu2" --gen "$spec" --backend cuda --config "precond=ilu2,rtol=1e-8,profile=1"
        cli=${CPU_CLI:-build-cpu/bsrsolve}
        run "$spec cpu ilu2 cap=auto,rcm" --gen "$spec" --backend cpu --config "precond=ilu2,cap=auto,reorder=rcm,rtol=1e-8,profile=1"
        run "$spec cpu ilu2 default" --gen "$spec" --backend cpu --config "precond=ilu2,rtol=1e-8,profile=1"
        cli=build-gpu/bsrsolve
    done
fi
if [ "$what" = gens ] || [ "$what" = all ]; then
    : >"$OUT/gens.jsonl"
    for spec in ${GENS:-stencil3d:100:4 poisson2d:1000 poisson3d:100 heat2d:1000,1e-3 heat3d:100,1e-3 elliptic2d:1000 \
                convdiff2d:1000,10 convdiff3d:100,10 cfd3d:100,4,10 cfd3d:100,5,10,model=comp rotconv3d:100,4 \
                rotconv3d:100,5 coupled3d:100,4 coupled3d:100,5}; do
        out=$(timeout ${RUN_TIMEOUT:-300} "$cli" --gen "$spec" --backend "${BACKEND:-cuda}" --config "precond=ilu2,maxit=500" --json \
              2>>"$OUT/gens.err")
        echo "$out" | SPEC="$spec" python3 -c 'import json,os,sys
try: r = json.load(sys.stdin)
except Exception: r = {"result": "no report (timeout or crash)"}
r["spec"] = os.environ["SPEC"]; print(json.dumps(r))' >>"$OUT/gens.jsonl"
    done
    python3 - "$OUT/gens.jsonl" >"$OUT/gens.md" <<'PY'
import json, sys
print("| generator | block rows | b | first setup s | its | solve s | status | precond |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
for l in open(sys.argv[1]):
    r = json.loads(l)
    st = r.get("status", [r.get("result")])
    its = r.get("iterations", ["-"])
    print(f"| {r['spec']} | {r.get('block_rows', '-')} | {r.get('block', '-')} | {r.get('setup_s', float('nan')):.3f} | "
          f"{its[0] if isinstance(its, list) else its} | {r.get('solve_s', float('nan')):.3f} | "
          f"{st[0] if isinstance(st, list) else st} | {r.get('precond_info', '')[:90]} |")
PY
    cat "$OUT/gens.md"
fi
grep -E "^== |^time|^precond|^  0 |converged|maxit|refactor|step|cuSPARSE|rc=" "$OUT/bench.log" >"$OUT/summary.log" 2>/dev/null
