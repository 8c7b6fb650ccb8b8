#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Scaling runs of the distributed solver (bench/RESULTS.md, "Distributed solves"):
#   bench/dist_scaling.sh CLI OUTDIR [cpu-ranks] [phases]
# CLI: the bsrsolve binary; OUTDIR gets runs.jsonl (one JSON object per run,
# appended) and tables.md.  cpu-ranks: the largest number of CPU ranks (one
# OpenMP thread each; default: the cores).  phases (default "weak strong
# hard"): weak keeps about 64^3 block rows of stencil3d b = 4 per rank;
# strong solves stencil3d:80:4 (512,000 block rows); hard the convection
# problem rotconv3d:30,4 with ILU2; gpu 1, 2, 4 ranks sharing GPU 0
# (stencil3d:100:4 and :100:5).  Every case with overlap=0 (block Jacobi)
# and overlap=1 (restricted additive Schwarz).
set -eu
cli=$1; out=$2; maxp=${3:-$(nproc)}; phases=${4:-weak strong hard}
mkdir -p "$out"
runs="$out/runs.jsonl"; touch "$runs"
export OMP_NUM_THREADS=1 OMPI_MCA_rmaps_base_oversubscribe=1
run() {  # ranks spec backend config tag
  if ! mpiexec -n "$1" "$cli" --gen "$2" --backend "$3" --config "$4" --json > "$out/one.json" 2> "$out/one.err"; then
    echo "  (exit $? : $(tail -1 "$out/one.err"))" >&2
  fi
  python3 - "$out/one.json" "$5" "$2" "$4" >> "$runs" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    r = {"error": str(e)}
r["tag"], r["spec"], r["cfg"] = sys.argv[2], sys.argv[3], sys.argv[4]
print(json.dumps(r))
EOF
  echo "  $5 p=$1 $2 $4 done" >&2
}
ps=""; p=1; while [ "$p" -le "$maxp" ]; do ps="$ps $p"; p=$((p * 2)); done
for phase in $phases; do
  for p in $ps; do
    case $phase in
      weak) g=$(python3 -c "print(round(($p * 64**3) ** (1/3)))")
            for ov in 0 1; do run "$p" "stencil3d:$g:4" cpu "precond=ilu0,overlap=$ov" weak; done ;;
      strong) for ov in 0 1; do run "$p" "stencil3d:80:4" cpu "precond=ilu0,overlap=$ov" strong; done ;;
      hard) for ov in 0 1; do
              run "$p" "rotconv3d:30,4" cpu "precond=ilu2,tau1=0.01,overlap=$ov,rtol=1e-10,maxit=400" hard
            done ;;
      gpu) [ "$p" -le 4 ] || continue
           export OMP_NUM_THREADS=4   # the host work of each rank (setup)
           for b in 4 5; do
             for ov in 0 1; do run "$p" "stencil3d:100:$b" cuda "precond=ilu0,overlap=$ov" gpu-shared; done
           done
           export OMP_NUM_THREADS=1 ;;
    esac
  done
done
python3 - "$runs" > "$out/tables.md" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| run | spec | config | ranks | its | setup s | solve s | ms/it | interface | halo blocks max | nbrs | halo s | reduce s | comm share |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    if "error" in r or "iterations" not in r:
        print(f"| {r['tag']} | {r['spec']} | {r['cfg']} | failed: {r.get('error', r.get('result', '?'))} |")
        continue
    # one rank runs the serial solver: no partition, no communication
    pa = r.get("partition", {"interface_share": 0, "halo_blocks_max": 0, "neighbours_max": 0})
    c = r.get("comm", {"halo_s_max": 0, "reduce_s_max": 0, "share_of_solve": 0})
    its = r["iterations"][0]
    tpi = r.get("time_per_iteration_s", r["solve_s"] / max(its, 1))
    print(f"| {r['tag']} | {r['spec']} | {r['cfg']} | {r.get('ranks', 1)} | {its} | {r['setup_s']:.3f} | "
          f"{r['solve_s']:.3f} | {tpi * 1e3:.2f} | {pa['interface_share']:.1%} | "
          f"{pa['halo_blocks_max']:.0f} | {pa['neighbours_max']:.0f} | {c['halo_s_max']:.3f} | {c['reduce_s_max']:.3f} | "
          f"{c['share_of_solve']:.1%} |")
EOF
cat "$out/tables.md"
