#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The distributed solver's halo paths on a multi-GPU host: pinned host
# buffers (halo=host) against GPU to GPU by CUDA IPC (halo=ipc) or NCCL
# (halo=nccl), on 1, 2
# and 4 ranks (one GPU each, as many as there are GPUs):
#   bench/dist_halo.sh OUTDIR [CLI] [ranks]
# OUTDIR gets, per run, NAME.json (the timing run: --json, no profile),
# NAME.txt (the same solve with profile=1: the report with each rank's
# product, halo pack / post / wait / unpack, preconditioner, reductions and
# their idle time; the device is synchronized at each part's end, so its
# times are slower), NAME.err (stderr of both), and at the end runs.jsonl
# (every timing run, with each GPU's most memory in use while it ran,
# sampled by nvidia-smi every 200 ms) and summary.md (one table: path that ran, iterations,
# the error control's iterations (in the solve's seconds, not in its iterations), ms per
# iteration (solve seconds over iterations), halo and reduction seconds, IPC speedup over host).
# CLI: the bsrsolve binary of a CUDA + MPI build (default build-gpu/bsrsolve).
# ranks: the rank counts (default "1 2 4", cut at the GPUs found).
# Cases (CASES="weak strong hard" by default):
#   weak    stencil3d, about 100^3 block rows of b = 4 per rank
#   strong  stencil3d:160:4 on every rank count
#   hard    rotconv3d:48,4 with ILU2 (tau1 = 1e-2), the halo-heavy class
#   hardov  the same with overlap=1 (ILU2 on overlapping subdomains)
#   largest stencil3d with ILU(0), about 15.6M block rows of b = 4 a rank
#           (the one-GPU maximum measured on an H100), for the largest
#           problem the ranks hold together
#   tiny    stencil3d:16:4 (a smoke test of the script itself)
# and the eight-GPU runs (ILU(0) and ILU2; set ranks to "1 2 4 8"; on 4 GPUs
# they run at the sizes a rank count allows):
#   weak2   stencil3d, 100^3 block rows a rank, ILU2 (ILU(0) is weak)
#   weak10  stencil3d, about 10M block rows of b = 4 a rank, ILU(0)
#   strong16 stencil3d:252:4 (16.0M block rows) on every rank count
#   big0, big2  coupled3d with b = 5 (the hard class, generated in place on
#           each rank), 12.5M block rows a rank (100M on 8): ILU(0), and
#           ILU2 with overlap=1; at most 200 iterations (time an iteration)
# HALOS (default "host ipc") names the halo paths each multi-rank case runs
# (nccl too: NCCL loaded at run time, BSR_NCCL_LIBRARY naming its file where
# the loader does not find libnccl.so.2).
# BACKEND=cpu runs the same on the CPU (halo= then has no effect).
# OMP_NUM_THREADS is the cores / ranks (the ranks' host work: setup).
# MPIEXEC (default mpiexec) and MPIEXEC_FLAGS (e.g. "--bind-to none") pass
# to the launcher; as root, OpenMPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
set -eu
out=${1:?usage: bench/dist_halo.sh OUTDIR [CLI] [ranks]}
cli=${2:-build-gpu/bsrsolve}
ranks=${3:-1 2 4}
cases=${CASES:-weak strong hard}
backend=${BACKEND:-cuda}
mpiexec=${MPIEXEC:-mpiexec}
flags=${MPIEXEC_FLAGS:-}
mkdir -p "$out"
[ -x "$cli" ] || { echo "dist_halo.sh: no executable $cli (build: cmake -B build-gpu -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j)" >&2; exit 2; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "$ngpu" -ge 1 ] || { echo "dist_halo.sh: no GPU found (nvidia-smi -L)" >&2; exit 2; }
cores=$(nproc)
{
  echo "host $(hostname), $cores cores, $ngpu GPUs; $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  nvidia-smi -L
  nvidia-smi topo -m 2>/dev/null || true
  "$mpiexec" --version 2>/dev/null | head -1 || true
  git -C "$(dirname "$0")/.." log --oneline -1 2>/dev/null || true
} > "$out/machine.txt"
cat "$out/machine.txt" >&2
runs="$out/runs.jsonl"; : > "$runs"

# one case: NAME RANKS SPEC CONFIG (halo= and profile= added here)
run() {
  rn=$1; rp=$2; rs=$3; rc_=$4
  threads=$((cores / rp)); [ "$threads" -ge 1 ] || threads=1
  echo "== $rn: $rp rank(s), $rs, $rc_, OMP_NUM_THREADS=$threads" >&2
  rc=0
  nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 200 > "$out/$rn.mem" 2>/dev/null &
  smi=$!
  OMP_NUM_THREADS=$threads "$mpiexec" -n "$rp" $flags "$cli" --gen "$rs" --backend "$backend" --config "$rc_" --json \
    --no-progress > "$out/$rn.json" 2> "$out/$rn.err" || rc=$?
  kill "$smi" 2>/dev/null || true
  wait "$smi" 2>/dev/null || true
  [ "$rc" -eq 0 ] || echo "   timing run exit $rc: $(tail -1 "$out/$rn.err")" >&2
  rc2=0
  OMP_NUM_THREADS=$threads "$mpiexec" -n "$rp" $flags "$cli" --gen "$rs" --backend "$backend" --config "$rc_,profile=1" \
    --no-progress > "$out/$rn.txt" 2>> "$out/$rn.err" || rc2=$?
  [ "$rc2" -eq 0 ] || echo "   profile run exit $rc2: $(tail -1 "$out/$rn.err")" >&2
  grep -E '^(time|comm|halo path|            note)' "$out/$rn.txt" >&2 || true
  python3 - "$out/$rn.json" "$rn" "$rs" "$rc_" "$rp" "$rc" >> "$runs" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    r = {"error": str(e)}
r.update(name=sys.argv[2], spec=sys.argv[3], cfg=sys.argv[4], nranks=int(sys.argv[5]), exit=int(sys.argv[6]))
mem = {}
try:
    for line in open(sys.argv[1][:-5] + ".mem"):
        g, m = (int(x) for x in line.split(","))
        mem[g] = max(mem.get(g, 0), m)
except Exception:
    pass
r["gpu_mem_mib_max"] = [mem[g] for g in sorted(mem)]
print(json.dumps(r))
PY
}

for case in $cases; do
  for p in $ranks; do
    [ "$p" -le "$ngpu" ] || { echo "(skip $case on $p ranks: $ngpu GPUs)" >&2; continue; }
    case $case in
      weak) g=$(python3 -c "print(round(($p * 100**3) ** (1/3)))"); spec="stencil3d:$g:4"; cfg="precond=ilu0" ;;
      strong) spec="stencil3d:160:4"; cfg="precond=ilu0" ;;
      hard) spec="rotconv3d:48,4"; cfg="precond=ilu2,tau1=0.01,rtol=1e-8,maxit=500" ;;
      hardov) spec="rotconv3d:48,4"; cfg="precond=ilu2,tau1=0.01,rtol=1e-8,maxit=500,overlap=1" ;;
      largest) g=$(python3 -c "print(round(($p * 15.6e6) ** (1/3)))"); spec="stencil3d:$g:4"; cfg="precond=ilu0" ;;
      tiny) spec="stencil3d:16:4"; cfg="precond=ilu0" ;;
      weak2) g=$(python3 -c "print(round(($p * 100**3) ** (1/3)))"); spec="stencil3d:$g:4"; cfg="precond=ilu2" ;;
      weak10) g=$(python3 -c "print(round(($p * 10**7) ** (1/3)))"); spec="stencil3d:$g:4"; cfg="precond=ilu0" ;;
      strong16) spec="stencil3d:252:4"; cfg="precond=ilu0" ;;
      big0|big2) g=$(python3 -c "print(round(($p * 12.5e6) ** (1/3)))"); spec="coupled3d:$g,5"
              cfg=$([ "$case" = big0 ] && echo "precond=ilu0,maxit=200" || echo "precond=ilu2,overlap=1,maxit=200") ;;
      *) echo "dist_halo.sh: unknown case $case" >&2; exit 2 ;;
    esac
    if [ "$p" -eq 1 ]; then   # one rank: the serial solver, no halo
      run "${case}_p1" 1 "$spec" "$cfg"
      continue
    fi
    for halo in ${HALOS:-host ipc}; do run "${case}_p${p}_$halo" "$p" "$spec" "$cfg,halo=$halo"; done
  done
done

python3 - "$runs" > "$out/summary.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
base = {}
for r in rows:
    if "solve_s" in r and r["name"].endswith("_host"):
        base[r["name"][:-5]] = r["solve_s"]
print("| run | spec | ranks | halo path | its | error control's its | setup s | solve s | ms/it | halo s max | reduce s max | comm share | solve vs host | GPU MiB max |")
print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for r in rows:
    if "solve_s" not in r:
        print(f"| {r['name']} | {r['spec']} | {r['nranks']} | failed (exit {r['exit']}): {r.get('error', r.get('result', '?'))} |")
        continue
    its = max(r["iterations"]) if isinstance(r.get("iterations"), list) else r.get("iterations", 0)
    est = max(r.get("etol_iterations") or [0])
    tpi = r.get("time_per_iteration_s", r["solve_s"] / max(its, 1))
    c = r.get("comm", {})
    path = r.get("halo_path", "serial")
    note = r.get("halo_note", "")
    if note: path += " (" + note + ")"
    sp = ""
    if r["name"].endswith("_ipc") and r["name"][:-4] in base:
        sp = f"{base[r['name'][:-4]] / r['solve_s']:.2f}x"
    print(f"| {r['name']} | {r['spec']} | {r['nranks']} | {path} | {its} | {est} | {r['setup_s']:.3f} | {r['solve_s']:.3f} | "
          f"{tpi * 1e3:.3f} | {c.get('halo_s_max', 0):.3f} | {c.get('reduce_s_max', 0):.3f} | "
          f"{c.get('share_of_solve', 0):.1%} | {sp} | {' '.join(str(m) for m in r.get('gpu_mem_mib_max', []))} |")
PY
cat "$out/summary.md"
